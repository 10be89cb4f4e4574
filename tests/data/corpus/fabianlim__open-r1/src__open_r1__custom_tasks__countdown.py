import re
import random
import ast
import operator
from datasets import load_dataset as load_dataset_old, DatasetDict
import torch

# taken from TinyZero
def extract_solution(solution_str):
    """Extract the equation from the solution string."""
    solution_str = solution_str.strip()

    answer_pattern = r'<answer>(.*?)</answer>'
    match = re.finditer(answer_pattern, solution_str)
    matches = list(match)
    if matches:
        final_answer = matches[-1].group(1).strip()
    else:
        final_answer = None
    return final_answer

def validate_equation(equation_str, available_numbers):
    """Validate that equation only uses available numbers and each number once."""
    try:
        # Extract all numbers from the equation
        numbers_in_eq = [int(n) for n in re.findall(r'\d+', equation_str)]
        
        # Check if all numbers in equation are available
        available_numbers = sorted(available_numbers)
        numbers_in_eq = sorted(numbers_in_eq)
        
        # Each number should be used exactly once
        return numbers_in_eq == available_numbers
    except:
        return False

def evaluate_equation(equation_str):
    """Safely evaluate the arithmetic equation using eval() with precautions."""
    try:
        # Define a regex pattern that only allows numbers, operators, parentheses, and whitespace
        allowed_pattern = r'^[\d+\-*/().\s]+$'
        if not re.match(allowed_pattern, equation_str):
            raise ValueError("Invalid characters in equation.")

        # Evaluate the equation with restricted globals and locals
        result = eval(equation_str, {"__builtins__": None}, {})
        return result
    except Exception as e:
        return None


# this function does both scoring, and assigning a basic format score
def compute_score(solution_str, ground_truth, method='strict', format_score=0.1, score=1.):
    """The scoring function for countdown task.
    
    Args:
        solution_str: the solution text
        ground_truth: dictionary containing target number and available numbers
        method: the method to extract the solution
        format_score: the score for correct format but wrong answer
        score: the score for the correct answer
    """
    target = ground_truth['target']
    numbers = ground_truth['numbers']

    # FIXME: break off the stop string
    solution_str = solution_str.split("\nUser:")[0]
    
    equation = extract_solution(solution_str=solution_str)

    do_print = False
    if (
        not torch.distributed.is_initialized() or 
        (
            torch.distributed.is_initialized() and
            torch.distributed.get_rank() == 0
        )
    ):
        do_print = random.randint(1, 64) == 1
    
    if do_print:
        print(f"--------------------------------")
        print(f"Target: {target} | Numbers: {numbers}")
        print(f"Extracted equation: {equation}")
        print(f"Solution string: {solution_str}")

    if equation is None:
        if do_print:
            print(f"No equation found")
        return 0
    
    # Validate equation uses correct numbers
    if not validate_equation(equation, numbers):
        if do_print:
            print(f"Invalid equation")
        return format_score
        
    # Evaluate equation
    try:
        result = evaluate_equation(equation)
        if result is None:
            if do_print:
                print(f"Could not evaluate equation")
            return format_score
            
        if abs(result - target) < 1e-5:  # Account for floating point precision
            if do_print:
                print(f"Correct equation: {equation} = {result}")
            return score
        else:
            if do_print:
                print(f"Wrong result: equation = {result}, target = {target}")
            return format_score
    except:
        if do_print:
            print(f"Error evaluating equation")
        return format_score

# custom reward
def accuracy_reward(prompts, completions, **kwargs):
    """Reward function that checks if the completion is the same as the ground truth."""
    rewards = []
    for content, target, num in zip(completions, kwargs['target'], kwargs['nums']):
        rewards.append(compute_score(content, {'target': target, 'numbers': num}))

    return rewards

# need to figure out how to use the chat template for instruct models
def make_prefix(dp):
    target = dp['target']
    numbers = dp['nums']
    # """This works for any base model"""
    prefix = f"""A conversation between User and Assistant. The user asks a question, and the Assistant solves it. The assistant first thinks about the reasoning process in the mind and then provides the user with the answer.
User: Using the numbers {numbers}, create an equation that equals {target}. You can use basic arithmetic operations (+, -, *, /) and each number can only be used once. Show your work in <think> </think> tags. And return the final answer in <answer> </answer> tags, for example <answer> (1 + 2) / 3 </answer>.
Assistant: Let me solve this step by step.
<think>"""
    return prefix

# custom process_data
def make_conversation(example):
    # for now.. only support base model with no conversation
    return {
        "prompt": make_prefix(example)
    }

# custom
def load_dataset(*args, **kwargs):
    train, test = load_dataset_old(
        *args, **kwargs,
        split=['train[:327680]','train[-1024:]']
    )
    return DatasetDict({'train': train, 'test': test})

# custom
reward_funcs_registry = {
    'accuracy': accuracy_reward
}


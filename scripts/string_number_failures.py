"""What a Trainer does with a TrainingArguments float field that holds text, as yaml.safe_load gives `5e-5`.

seqprof's SP406 finding on such a value (seqprof.config.dialects.hf.TEXT_NUMBER_FAILURES) names the failure this
prints for each field. It needs torch, which seqprof does not install; run it where torch and transformers are:

    python scripts/string_number_failures.py

Output on transformers 4.57.6 and 5.1.0 with torch 2.13.0 (CPU), 2026-12-04:

    control: OK
    learning_rate: train TypeError: '<=' not supported between instances of 'float' and 'str' @ torch/optim/adam.py:58
    weight_decay: train TypeError: _fused_adamw_() received an invalid combination of arguments ...
    adam_beta1 / adam_beta2 / adam_epsilon: train TypeError: '<=' not supported ... @ torch/optim/adam.py:62/64/60
    max_grad_norm: train TypeError: '>' not supported between instances of 'str' and 'int' @ transformers/trainer.py
    warmup_ratio: args TypeError: '<' not supported between instances of 'str' and 'int' @ training_args.py
    min_lr: train TypeError: unsupported operand type(s) for /: 'str' and 'float' @ transformers/optimization.py
    parse_yaml_file: {'learning_rate': ('str', '5e-5'), 'weight_decay': ('float', 0.01), 'adam_epsilon': ('str', '1e-08')}
    argparse defaults: float 5e-05 float
"""

from __future__ import annotations

import tempfile
import traceback

CASES = [("control", {}), ("learning_rate", {"learning_rate": "5e-5"}), ("weight_decay", {"weight_decay": "1e-2"}),
         ("adam_beta1", {"adam_beta1": "9e-1"}), ("adam_beta2", {"adam_beta2": "999e-3"}),
         ("adam_epsilon", {"adam_epsilon": "1e-8"}), ("max_grad_norm", {"max_grad_norm": "1e0"}),
         ("warmup_ratio", {"warmup_ratio": "1e-1"}),
         ("min_lr", {"lr_scheduler_type": "cosine_with_min_lr", "lr_scheduler_kwargs": {"min_lr": "5e-6"}})]


def main() -> None:
    import torch
    import transformers
    from torch.utils.data import Dataset
    from transformers import GPT2Config, GPT2LMHeadModel, HfArgumentParser, Trainer, TrainingArguments

    class Rows(Dataset):
        def __len__(self) -> int:
            return 8

        def __getitem__(self, i: int) -> dict:
            ids = torch.randint(0, 100, (16,))
            return {"input_ids": ids, "labels": ids}

    print("transformers", transformers.__version__, "torch", torch.__version__)
    for name, kwargs in CASES:
        torch.manual_seed(0)
        stage = "args"
        try:
            with tempfile.TemporaryDirectory() as out:
                args = TrainingArguments(output_dir=out, report_to="none", max_steps=2, per_device_train_batch_size=2,
                                         save_strategy="no", logging_steps=1, use_cpu=not torch.cuda.is_available(),
                                         **kwargs)
                stage = "train"
                model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=32, vocab_size=100, n_positions=32))
                Trainer(model=model, args=args, train_dataset=Rows()).train()
            print(f"{name}: OK")
        except Exception as exc:  # the failure is the measurement
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            print(f"{name}: {stage} {type(exc).__name__}: {str(exc)[:160]} "
                  f"@ {frame.filename.split('site-packages/')[-1]}:{frame.lineno}")

    # the path a YAML takes through HfArgumentParser.parse_yaml_file: yaml.safe_load, then the dataclass as is
    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/c.yaml"
        with open(path, "w") as f:
            f.write("output_dir: out\nlearning_rate: 5e-5\nweight_decay: 1.0e-2\nadam_epsilon: 1e-08\n")
        (parsed,) = HfArgumentParser(TrainingArguments).parse_yaml_file(path)
        print("parse_yaml_file:", {k: (type(getattr(parsed, k)).__name__, getattr(parsed, k))
                                   for k in ("learning_rate", "weight_decay", "adam_epsilon")})
        # TrlParser's path: the YAML's values become argparse defaults, which argparse runs through each type
        parser = HfArgumentParser(TrainingArguments)
        for action in parser._actions:
            if action.dest in ("learning_rate", "adam_epsilon"):
                action.default = {"learning_rate": "5e-5", "adam_epsilon": "1e-08"}[action.dest]
                action.required = False
        (defaults,) = parser.parse_args_into_dataclasses(args=["--output_dir", "out"])
        print("argparse defaults:", type(defaults.learning_rate).__name__, defaults.learning_rate,
              type(defaults.adam_epsilon).__name__)


if __name__ == "__main__":
    main()

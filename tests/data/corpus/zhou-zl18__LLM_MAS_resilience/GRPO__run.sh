
accelerate launch --config_file multi_gpu.yaml grpo_all_from_lora.py



ACCELERATE_LOG_LEVEL=info accelerate launch --config_file C:/Users/MSI/Desktop/ARENA/configs/grpo_cpu.yaml \
    --num_processes=1 C:/Users/MSI/Desktop/ARENA/src/grpo.py \
    --config C:/Users/MSI/Desktop/ARENA/configs/grpo_windows.yaml \
torchrun --nproc_per_node=4 train.py --train_args_file train_args/sft/qlora/qwen-2.5-32b-chat-sft-qlora-xtop.json

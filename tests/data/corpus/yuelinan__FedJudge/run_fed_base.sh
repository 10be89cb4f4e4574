CUDA_VISIBLE_DEVICES=6 python main_fed_base.py --train_args_file train_args/lora/baichuan-7b-fed-lora-base.json

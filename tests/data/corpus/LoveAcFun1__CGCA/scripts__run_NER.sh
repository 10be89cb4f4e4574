CUDA_VISIBLE_DEVICES=1 python train_qlora.py --train_args_file train_args/qlora-old/NER-sft-qlora.json 

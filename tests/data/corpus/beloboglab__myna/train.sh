# python myna/train/pretrain.py --config_path configs/pretrain.yaml
# python myna/train/sft.py --config_path configs/sft.yaml
# python myna/train/dpo.py --config_path configs/dpo.yaml
# python myna/train/reason.py --config_path configs/reason.yaml
python myna/train/ppo.py --config_path configs/ppo.yaml
# CUDA_VISIBLE_DEVICES=3 nohup python -u tutorial_train.py > logs_tutorial_train.log 2>&1 &
CUDA_VISIBLE_DEVICES=3 nohup python -u tutorial_train_lora.py > logs_tutorial_train_lora01.log 2>&1 &

export CUDA_VISIBLE_DEVICES=0

python train_R1_zero.py --config train_R1_zero.yaml
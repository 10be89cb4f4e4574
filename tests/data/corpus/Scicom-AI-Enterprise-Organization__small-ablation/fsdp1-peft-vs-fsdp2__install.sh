pip3 install torch==2.8.0 torchvision==0.23.0 torchaudio==2.8.0 --index-url https://download.pytorch.org/whl/cu128
pip3 install transformers==4.57.3 datasets accelerate kernels==0.11.3 peft
pip3 install mosaicml-streaming
pip3 install wandb
pip3 install liger-kernel
pip3 install torch torchvision --index-url https://download.pytorch.org/whl/cu121
pip install transformers==4.46.1 tokenizer
pip install termcolor
pip install gradio peft flash_attn
pip install tabulate deepspeed tensorboard omegaconf
pip install pandas
pip install qwen_vl_utils wandb timm
pip install pytablewriter evaluate tenacity scikit-learn sacrebleu
pip install trl==0.9.6 nltk jieba rouge_chinese
pip install accelerate==1.0.1
pip install mmengine
pip install -e ./src/custom_trainer/LLaMA-Factory
pip install -e ./src/lmdeploy
python finetune_demo/finetune.py  train/  /home/huyunliu/models/THUDM/glm-4-9b-chat  train/lora.yaml 
 
export SWANLAB_API_KEY=YOUR_API_KEY
llamafactory-cli train examples/train_sherlock/scripts/llama3.2-vision-11b-sherlock-sft-r0-vlm.yaml
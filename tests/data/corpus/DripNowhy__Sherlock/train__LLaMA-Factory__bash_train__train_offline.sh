export SWANLAB_API_KEY=YOUR_API_KEY
llamafactory-cli train examples/train_sherlock/llama3.2-vision-11b-sherlock-offline.yaml
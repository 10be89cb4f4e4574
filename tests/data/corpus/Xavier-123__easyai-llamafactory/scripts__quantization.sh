python main.py

llamafactory-cli export tmp/quantization/quantization.yaml
CUDA_VISIBLE_DEVICES=0 trl vllm-serve --model Qwen2.5-7B-Instruct --gpu-memory-utilization 0.6

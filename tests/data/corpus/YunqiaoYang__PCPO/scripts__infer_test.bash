torchrun --nproc_per_node 8 \
./scripts/run_pcpo_inference.py \
./yamls/inference_example.yaml
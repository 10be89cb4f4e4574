#!/bin/bash

accelerate launch train_script.py -c train_configs/prm800k_qwen_alt_lora.yml


#!/bin/bash

python ./fine_tuning/ft_main.py --config_path "./fine_tuning/configs/ft_baseline.yaml"
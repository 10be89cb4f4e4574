#!/bin/bash

FORCE_TORCHRUN=1 llamafactory-cli train train/reflective_rejection_sampling/vilasr_full_qwen2.5_vl_7b/config_reflective.yaml

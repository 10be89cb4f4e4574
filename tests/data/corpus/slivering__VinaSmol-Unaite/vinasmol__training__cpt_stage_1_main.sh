#!/bin/bash

# TODO: fork litgpt to support EEVE
litgpt pretrain --config ./cpt_stage_1_main.yml
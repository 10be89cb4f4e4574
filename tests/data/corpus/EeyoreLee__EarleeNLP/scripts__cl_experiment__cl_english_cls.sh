#!/bin/bash

python main.py args/cl_experiment/cl_english_cls.json
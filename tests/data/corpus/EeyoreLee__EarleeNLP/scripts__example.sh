#!/bin/bash

python main.py args/trainer_example.json
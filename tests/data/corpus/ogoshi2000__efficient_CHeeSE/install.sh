#!/bin/bash
apt update ; apt install -y  ; apt clean
conda install 
pip install -r requirements.txt


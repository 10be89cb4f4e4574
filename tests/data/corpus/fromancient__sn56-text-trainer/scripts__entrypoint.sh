#!/bin/bash
set -e
echo "*****Running text trainer"
python -m text_trainer "$@"

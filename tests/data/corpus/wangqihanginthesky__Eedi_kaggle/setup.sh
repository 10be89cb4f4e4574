pip install -e .
pip install -r requirements.txt
# python3 -m pip install https://github.com/Dao-AILab/flash-attention/releases/download/v2.5.8/flash_attn-2.5.8+cu122torch2.3cxx11abiFalse-cp311-cp311-linux_x86_64.whl
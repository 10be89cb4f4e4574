pip install -e ".[dev]"
cd ../trl
pip install -e .
cd ../KernelBench
pip install -r requirements.txt
pip install -e .

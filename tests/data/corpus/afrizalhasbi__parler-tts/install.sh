pip install -e .[train]

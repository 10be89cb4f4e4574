# pyproject.toml is the source of truth.
# This file exists only for legacy editable-install compatibility.
# Use: pip install -e ".[train,eval,dev]"
from setuptools import setup
setup()

from setuptools import setup, find_packages
setup(
    name="abark-rlhf-pipeline",
    version="0.1.0",
    author="AbArk",
    packages=find_packages(),
    python_requires=">=3.10",
)

from setuptools import setup, find_packages

setup(
    name="distillKitPlus",
    version="0.1",
    packages=find_packages(),
)

from setuptools import setup

setup(
    name="synllama",
    version="0.1.0",
    packages=["synllama"],
)
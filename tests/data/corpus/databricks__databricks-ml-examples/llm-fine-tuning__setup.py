import os

from setuptools import setup, find_packages

setup(
    name="databricks_llm",
    version="0.1.0",
    description="Fine-tuning of different OSS LLMs on Databricks platform",
    author="Michael Shtelma",
    url="https://github.com/databricks/databricks-ml-examples",
    install_requires=[],
    packages=find_packages(),
    long_description="",
    long_description_content_type="text/markdown",
)

from setuptools import find_packages, setup

setup(
    name="llm4structgen",
    version="0.0.1",
    description="Fine-tuning large language models for structure generation",
    url="",
    packages=find_packages(),
    include_package_data=True,
)
from setuptools import find_packages, setup

setup(
    name="gjr",
    version="0.1",
    packages=find_packages(),
    install_requires=[
        # Add your requirements here
    ],
)

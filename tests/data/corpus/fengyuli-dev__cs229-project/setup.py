from setuptools import setup, find_packages

setup(
    name="cs229",
    version="0.1",
    packages=find_packages(),  # Automatically finds packages
)

from setuptools import setup

setup(
    name="ift-6289-project",
)
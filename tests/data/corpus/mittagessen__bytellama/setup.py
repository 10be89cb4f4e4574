#!/usr/bin/env python
from setuptools import setup

setup(
    include_package_data=True,
    setup_requires=['pbr'],
    pbr=True,
)

"""Minimal setup for local imports."""

from setuptools import setup, find_packages

setup(
    name="cs431-dora-pissa-legalslm",
    version="0.1.0",
    description="So sánh DoRA, PiSSA và LoRA trên LLM cho Tiếng Việt chuyên ngành Pháp luật",
    packages=find_packages(),
    python_requires=">=3.9",
)

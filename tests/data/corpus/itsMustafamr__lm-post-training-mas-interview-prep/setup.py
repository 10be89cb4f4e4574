from setuptools import setup, find_packages

setup(
    name="lm_mas_prep",
    version="0.1.0",
    description="LLM Post-Training & Multi-Agent Systems — Interview Prep Repository",
    author="Bella Yang",
    packages=find_packages(where="src"),
    package_dir={"": "src"},
    python_requires=">=3.9",
    install_requires=[
        "torch>=2.0.0",
        "transformers>=4.35.0",
        "datasets>=2.14.0",
        "trl>=0.7.0",
        "peft>=0.6.0",
        "accelerate>=0.24.0",
        "numpy>=1.24.0",
        "pandas>=2.0.0",
        "matplotlib>=3.7.0",
        "pyyaml>=6.0",
        "tqdm>=4.66.0",
        "scikit-learn>=1.3.0",
    ],
)

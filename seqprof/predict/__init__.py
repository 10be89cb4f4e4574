"""Predictions from the architecture and the plan: GPUs, peak memory (and run time)."""

"""Bucket boundaries, batching-strategy simulation and the bucketed-shuffle sampler."""

"""GRPO training configuration and external reward judge."""

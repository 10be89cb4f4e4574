from pathlib import Path

CONFIG_PATH = Path("config/config.yaml")
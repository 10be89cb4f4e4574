"""Regenerate the committed key lists under seqprof/config/dialects/keys/ from installed frameworks.

`seqprof lint` must start fast and must not import transformers, so the keys each dialect
accepts are committed as JSON and this script refreshes them from the real classes:

    .venv/bin/python scripts/gen_dialect_keys.py            # what is installed
    .venv/bin/python scripts/gen_dialect_keys.py --check    # exit 1 if a committed list is stale

- hf_training_arguments.json  <- dataclasses.fields(transformers.TrainingArguments), with the
  deprecated aliases the installed version names in its field help ("Deprecated alias of `x`").
- trl_configs.json             <- SFTConfig / DPOConfig / KTOConfig / ORPOConfig / ModelConfig /
  ScriptArguments fields minus TrainingArguments' (only when trl is importable; otherwise the
  committed list, read from TRL's sources, is kept).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from pathlib import Path

KEYS_DIR = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys"
_ALIAS = re.compile(r"[Dd]eprecated alias of `([A-Za-z0-9_]+)`")


def hf_training_arguments() -> dict:
    """The TrainingArguments field names and deprecated aliases of the installed transformers."""
    import transformers

    fields = dataclasses.fields(transformers.TrainingArguments)
    aliases = {}
    for f in fields:
        m = _ALIAS.search(str(f.metadata.get("help", "")))
        if m:
            aliases[f.name] = m.group(1)
    return {
        "source": f"transformers {transformers.__version__}: dataclasses.fields(TrainingArguments)",
        "version": transformers.__version__,
        "fields": sorted(f.name for f in fields if f.init),
        "deprecated_aliases": dict(sorted(aliases.items())),
    }


def trl_configs() -> dict | None:
    """TRL's own fields per config class, or None when trl is not installed."""
    try:
        import transformers
        import trl
    except ImportError:
        return None
    base = {f.name for f in dataclasses.fields(transformers.TrainingArguments)}
    classes = {}
    for name in ("SFTConfig", "DPOConfig", "KTOConfig", "ORPOConfig", "ModelConfig", "ScriptArguments"):
        cls = getattr(trl, name, None)
        if cls is None and name == "ORPOConfig":
            try:
                from trl.experimental.orpo import ORPOConfig as cls  # type: ignore[no-redef]
            except ImportError:
                cls = None
        if cls is not None:
            classes[name] = sorted(f.name for f in dataclasses.fields(cls) if f.name not in base)
    return {"source": f"trl {trl.__version__}: dataclasses.fields of each config class",
            "version": trl.__version__, "classes": classes}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    fresh = {"hf_training_arguments": hf_training_arguments()}
    trl_data = trl_configs()
    if trl_data is not None:
        fresh["trl_configs"] = trl_data
    stale = []
    for name, data in fresh.items():
        path = KEYS_DIR / f"{name}.json"
        text = json.dumps(data, indent=1, sort_keys=False) + "\n"
        if args.check:
            if not path.exists() or json.loads(path.read_text()) != data:
                stale.append(name)
        else:
            path.write_text(text)
            print(f"wrote {path} ({data['source']})")
    if stale:
        print("stale key lists: " + ", ".join(stale) + " (run scripts/gen_dialect_keys.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

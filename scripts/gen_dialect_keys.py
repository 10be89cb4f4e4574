"""Regenerate the committed key lists under seqprof/config/dialects/keys/ from installed frameworks.

`seqprof lint` must start fast and must not import transformers, so the keys each dialect
accepts are committed as JSON and this script refreshes them from the real classes:

    .venv/bin/python scripts/gen_dialect_keys.py               # what is installed
    .venv/bin/python scripts/gen_dialect_keys.py --check       # exit 1 if a committed list is stale
    /path/to/venv-with-trl/bin/python scripts/gen_dialect_keys.py --only trl   # the TRL list alone

- hf_training_arguments.json  <- dataclasses.fields(transformers.TrainingArguments), with the
  deprecated aliases the installed version names in its field help ("Deprecated alias of `x`").
- trl_configs.json             <- the fields of every TRL trainer config class the installed trl
  exports (TRL_CONFIGS: top level first, then trl.experimental.<name>; any other dataclass that
  subclasses TrainingArguments and is exported from trl's top level is picked up too), minus
  TrainingArguments' own fields, plus ModelConfig, ScriptArguments, the per-script argument
  classes (GRPOScriptArguments, RLOOScriptArguments) and DatasetMixtureConfig, which TRL's training
  scripts hand to TrlParser alongside the trainer config; "cli" holds the keys TrlParser itself
  consumes (CLI_KEYS). Only when trl is importable; otherwise the committed list is kept.
  Classes the installed version lacks are skipped (and named on stdout).

`--only trl` writes (or checks) trl_configs.json alone, so a scratch environment with another
transformers version can refresh the TRL list without touching hf_training_arguments.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import re
import sys
import warnings
from pathlib import Path

KEYS_DIR = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys"
_ALIAS = re.compile(r"[Dd]eprecated alias of `([A-Za-z0-9_]+)`")

# TRL trainer configs: name -> modules to look in after the top-level ``trl`` package (TRL moves
# trainers between trl.trainer and trl.experimental across versions; missing ones are skipped)
TRL_CONFIGS: dict[str, tuple[str, ...]] = {
    "SFTConfig": (),
    "DPOConfig": (),
    "KTOConfig": ("trl.experimental.kto",),
    "ORPOConfig": ("trl.experimental.orpo",),
    "CPOConfig": ("trl.experimental.cpo",),
    "GRPOConfig": (),
    "RLOOConfig": (),
    "PPOConfig": ("trl.experimental.ppo",),
    "OnlineDPOConfig": ("trl.experimental.online_dpo",),
    "RewardConfig": (),
    "PRMConfig": ("trl.experimental.prm",),
    "GKDConfig": ("trl.experimental.gkd",),
    "NashMDConfig": ("trl.experimental.nash_md",),
    "XPOConfig": ("trl.experimental.xpo",),
    "BCOConfig": ("trl.experimental.bco",),
}
# the other dataclasses TRL's training scripts parse a --config YAML into
TRL_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "ModelConfig": (),
    "ScriptArguments": (),
    "GRPOScriptArguments": ("trl.scripts.grpo",),
    "RLOOScriptArguments": ("trl.scripts.rloo",),
    "DatasetMixtureConfig": (),
}
# keys TrlParser.parse_args_and_config consumes itself (trl/scripts/utils.py: config.pop("env"))
CLI_KEYS = ["env"]


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


def _find_trl_class(trl, name: str, modules: tuple[str, ...]) -> tuple[type | None, str]:
    """(class, module it was found in) from trl's top level, else the first of *modules* that has it."""
    cls = getattr(trl, name, None)
    if cls is not None:
        return cls, "trl"
    for mod_name in modules:
        try:
            with warnings.catch_warnings():  # trl.experimental warns on import
                warnings.simplefilter("ignore")
                mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        except Exception as e:  # noqa: BLE001 - a module that exists but fails to import: say so, go on
            print(f"warning: importing {mod_name} failed ({type(e).__name__}: {e}); {name} skipped", file=sys.stderr)
            continue
        cls = getattr(mod, name, None)
        if cls is not None:
            return cls, mod_name
    return None, ""


def _top_level_trainer_configs(trl, base_cls: type) -> list[str]:
    """Names trl exports at its top level that are TrainingArguments dataclasses (e.g. DistillationConfig)."""
    names = getattr(trl, "_import_structure", None)
    names = [n for ns in names.values() for n in ns] if isinstance(names, dict) else dir(trl)
    found = []
    for n in sorted(set(names)):
        if not n.endswith("Config") or n in TRL_CONFIGS:
            continue
        try:
            obj = getattr(trl, n)
        except Exception as e:  # noqa: BLE001 - a lazy export that fails to import: say so, go on
            print(f"warning: trl.{n} failed to import ({type(e).__name__}: {e}); skipped", file=sys.stderr)
            continue
        if isinstance(obj, type) and dataclasses.is_dataclass(obj) and issubclass(obj, base_cls):
            found.append(n)
    return found


def trl_configs() -> dict | None:
    """TRL's own fields per config class, or None when trl is not installed."""
    try:
        import transformers
        import trl
    except ImportError:
        return None
    base = {f.name for f in dataclasses.fields(transformers.TrainingArguments)}
    wanted = dict(TRL_CONFIGS)
    wanted.update({n: () for n in _top_level_trainer_configs(trl, transformers.TrainingArguments)})
    wanted.update(TRL_ARGUMENTS)
    classes: dict[str, list[str]] = {}
    where: dict[str, list[str]] = {}
    missing = []
    for name, modules in wanted.items():
        cls, mod_name = _find_trl_class(trl, name, modules)
        if cls is None or not dataclasses.is_dataclass(cls):
            missing.append(name)
            continue
        classes[name] = sorted(f.name for f in dataclasses.fields(cls) if f.name not in base)
        if mod_name != "trl":
            where.setdefault(mod_name, []).append(name)
    classes["cli"] = list(CLI_KEYS)
    if missing:
        print(f"trl {trl.__version__} has no " + ", ".join(missing) + " (skipped)")
    found_in = "".join(f"; {', '.join(ns)} from {m}" for m, ns in where.items())
    return {"source": f"trl {trl.__version__}: dataclasses.fields of each config class minus those of "
                      f"transformers {transformers.__version__} TrainingArguments{found_in}; "
                      f"cli: keys TrlParser.parse_args_and_config reads itself",
            "version": trl.__version__, "classes": classes}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--only", choices=("hf", "trl"), help="write or check one list alone")
    args = parser.parse_args(argv)
    fresh = {}
    if args.only in (None, "hf"):
        fresh["hf_training_arguments"] = hf_training_arguments()
    if args.only in (None, "trl"):
        trl_data = trl_configs()
        if trl_data is not None:
            fresh["trl_configs"] = trl_data
        elif args.only == "trl":
            print("--only trl: trl is not importable here", file=sys.stderr)
            return 2
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

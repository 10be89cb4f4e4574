"""Numbers a YAML config writes that yaml.safe_load keeps as text, where the framework's loader hands them on as text.

`learning_rate: 5e-5` is the str '5e-5' to PyYAML: YAML 1.1 reads a number as a float only with a dot and a signed
exponent (5.0e-5). argparse (TrlParser: the YAML's top-level values become defaults, converted by each field's
type), OmegaConf (LLaMA-Factory 0.9.4 on, torchtune) and axolotl's schema turn it into a float; HfArgumentParser's
parse_yaml_file and LLaMA-Factory before 0.9.4 hand it to TrainingArguments as it is, and the run stops on it.
seqprof's own loader reads `5e-5` as a float (LoadedConfig.text_numbers keeps which keys were written so).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from seqprof.config.loader import LoadedConfig
from seqprof.config.plan import ConfigDiagnostic
from seqprof.config.values import placeholder

# TrainingArguments' float fields, and what a str in each does (scripts/string_number_failures.py, run on
# transformers 4.57.6 and 5.1.0 with torch 2.13): torch's AdamW compares lr, betas and eps with 0.0 when the Trainer
# builds it, and the fused step refuses a str weight decay; the trainer compares max_grad_norm with 0 at the first
# step; TrainingArguments.__post_init__ compares warmup_ratio with 0 before anything loads
ADAMW = "AdamW (torch's; transformers' own in old releases) raises TypeError when the Trainer builds it"
TEXT_NUMBER_FAILURES = {
    "learning_rate": ADAMW,
    "adam_beta1": ADAMW,
    "adam_beta2": ADAMW,
    "adam_epsilon": ADAMW,
    "weight_decay": "the optimizer's first step raises TypeError",
    "max_grad_norm": "the first step raises TypeError (the trainer compares it with 0 before clipping)",
    "warmup_ratio": "TrainingArguments raises TypeError before anything loads",
    "lr_scheduler_kwargs.min_lr": "the scheduler raises TypeError at the first step (optimization.py divides by it)",
}
NESTED_TEXT_NUMBERS = ("lr_scheduler_kwargs.min_lr",)
_EXPONENT = re.compile(r"^([-+]?\d+)(?:\.(\d*))?[eE]([-+]?)(\d+)$")


def numbers_left_as_text(cfg: LoadedConfig, loader: str, keys: tuple[str, ...] = tuple(TEXT_NUMBER_FAILURES),
                         section: str = "") -> list[ConfigDiagnostic]:
    """`learning_rate: 5e-5` is the str '5e-5' to yaml.safe_load: YAML 1.1 reads a number as a float only with a
    dot, and an exponent only with its sign (5.0e-5). *loader* (HfArgumentParser.parse_yaml_file, LLaMA-Factory
    before 0.9.4) hands the value on as it is, and the run stops on it. argparse (TrlParser) and OmegaConf turn it
    into a float; axolotl's schema converts learning_rate. *section*: the mapping whose entries the *keys* are
    (`TrainingArguments` of a file whose code spreads that section into the class)."""
    from seqprof.config.launches import launch_overrides

    prefix = f"{section}." if section else ""
    found = [(key[len(prefix):], value) for key, value in _texts(cfg, tuple(prefix + k for k in keys))]
    overridden = launch_overrides(cfg.path) if found else frozenset()
    converted = converted_by_project(cfg.path, [key for key, _ in found]) if found else frozenset()
    out = []
    for key, value in found:
        if key in overridden or key in converted:  # the launch line passes it again, and the parser converts that
            continue  # one; or the project's own code turns it into a float before the optimizer sees it
        failure, key = TEXT_NUMBER_FAILURES[key], prefix + key
        written = _EXPONENT.match(value.strip())
        fix = (f"{written.group(1)}.{written.group(2) or '0'}e{written.group(3) or '+'}{written.group(4)}"
               if written else repr(float(value)))
        why = (f"YAML 1.1 reads a number as a float only with a dot and a signed exponent: {fix}"
               if key in cfg.text_numbers else "the number is quoted")
        out.append(ConfigDiagnostic(
            kind="invalid_value", key=key, file=cfg.path, line=cfg.line(key) or 1,
            message=(f"'{key.rpartition('.')[2]}: {value}' reaches the Trainer as the text {value!r} ({why}): "
                     f"{loader}, so {failure}"),
            suggestion=f"{key.rpartition('.')[2]}: {fix}"))
    return out


def converted_by_project(config_path: str | Path, keys: list[str]) -> frozenset[str]:
    """Those of *keys* the project's own code passes through float() (`epsilon=float(args.adam_epsilon)` in
    hitz-zentroa/GoLLIE's Trainer subclass, "Ensure that the values are floats"): the text never reaches AdamW."""
    from seqprof.config.project_fields import project_root, python_files, source_text

    names = "|".join(re.escape(k.rpartition(".")[2]) for k in keys)
    cast = re.compile(rf"\bfloat\(\s*[\w.]*?(?:\.|\[\s*[\"'])({names})\b")
    found: set[str] = set()
    for file in python_files(project_root(config_path)):
        found.update(cast.findall(source_text(file)))
    return frozenset(k for k in keys if k.rpartition(".")[2] in found)


def _texts(cfg: LoadedConfig, keys: tuple[str, ...]) -> list[tuple[str, str]]:
    """(key, the number as written) for each of *keys* whose value yaml.safe_load gives as a str that is a finite
    number: written so (`5e-5`, in cfg.text_numbers) or quoted; not a placeholder (`${lr}`)."""
    out = []
    for key in keys:
        value = cfg.get(key)
        if key in cfg.text_numbers:  # read here as a float, as argparse or OmegaConf would
            value = _written(cfg, key) or value
        elif not isinstance(value, str) or placeholder(value) is not None:
            continue
        try:
            number = float(value)
        except ValueError:
            continue
        if math.isfinite(number):
            out.append((key, str(value)))
    return out


def numbers_read_as_text(cfg: LoadedConfig, trlparser_assumed: bool = False) -> list[ConfigDiagnostic]:
    """numbers_left_as_text for the way the config's scripts read it: every float field under parse_yaml_file,
    only a mapping's entries under TrlParser (argparse converts the top-level values; *trlparser_assumed*: a TRL
    recipe whose scripts cannot be read is read by it)."""
    from seqprof.config.parser_classes import yaml_reading

    if not _texts(cfg, tuple(TEXT_NUMBER_FAILURES)):
        return []  # nothing written as text: no need to find how the project's scripts read the file
    reading = yaml_reading(cfg.path, [k for k in cfg.data if isinstance(k, str)])
    if reading is None and trlparser_assumed and Path(cfg.path).suffix.lower() in (".yaml", ".yml"):
        return numbers_left_as_text(cfg, "TRL's parsers (TrlParser, HfArgumentParser.parse_yaml_file) load it with "
                                         "yaml.safe_load and leave a mapping's entries as they are",
                                    NESTED_TEXT_NUMBERS)
    if reading is None:
        return []
    if reading.argparse:
        return numbers_left_as_text(cfg, f"{reading.where} converts the top-level values through argparse, not a "
                                         "mapping's entries", NESTED_TEXT_NUMBERS)
    return numbers_left_as_text(cfg, f"{reading.where} hands yaml.safe_load's values on as they are")


def _written(cfg: LoadedConfig, key: str) -> str | None:
    """The scalar as the file writes it on the key's line (`learning_rate: 5e-5  # peak`)."""
    line = cfg.line(key)
    try:
        text = Path(cfg.path).read_text(encoding="utf-8", errors="replace").splitlines()[line - 1] if line else ""
    except (OSError, IndexError):
        return None
    found = re.search(rf"{re.escape(key.rpartition('.')[2])}\s*:\s*([-+]?[\d.]+[eE][-+]?\d+)\b", text)
    return found.group(1) if found else None

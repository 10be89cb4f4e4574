"""`report_to: null` in a TrainingArguments file: what each transformers release makes of it.

Before 5.0, TrainingArguments.__post_init__ read None as "all" (every reporting integration installed: wandb,
tensorboard, mlflow ...), with an info line that v5 would change the default. From 5.0 the default is "none" and
an explicit None is wrapped as `[None]` (training_args.py: `elif not isinstance(self.report_to, list)`), which
Trainer.__init__ hands to get_reporting_integration_callbacks: "None is not supported" (ValueError) before the first
step. A YAML null (`null`, `~`, an empty value) reaches the dataclass as None through HfArgumentParser's
parse_yaml_file and TRL's TrlParser alike; the word "none" is what turns reporting off in every release.
"""

from __future__ import annotations

from seqprof.config.key_history import KeyHistory, minor, run_release_said
from seqprof.config.loader import LoadedConfig
from seqprof.config.pins import Pins
from seqprof.config.plan import ConfigDiagnostic

REFUSED_FROM = "5.0.0"  # training_args.py: None is no longer read as "all"


def report_to_null(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """`report_to: null` judged at the transformers release the pins install: refused by the Trainer from 5.0
    ("report_to_refused"), every installed integration before it ("report_to_all"). Not judged where a launch line
    or the project's code sets report_to (or declares a field of that name), which the file alone does not show."""
    from packaging.version import Version

    if "report_to" not in cfg.data or cfg.data["report_to"] is not None:
        return []
    release = history.run_release("transformers", pins)
    if release is None:
        return []
    from seqprof.config.launches import set_outside_the_file

    if set_outside_the_file(cfg.path, ("report_to",)):
        return []
    said = run_release_said("transformers", pins, release)
    line = cfg.line("report_to") or 1
    if Version(release) >= Version(REFUSED_FROM):
        return [ConfigDiagnostic(
            kind="report_to_refused", key="report_to", file=cfg.path, line=line, suggestion="none",
            message=f"report_to: null is refused from transformers 5.0 ({said}): TrainingArguments wraps it as "
                    "[None] and the Trainer raises \"None is not supported\" (ValueError) when it is created, "
                    "before the first step")]
    return [ConfigDiagnostic(
        kind="report_to_all", key="report_to", file=cfg.path, line=line, suggestion="none",
        message=f"report_to: null means every installed reporting integration in transformers {minor(release)} "
                f"({said}): TrainingArguments reads None as \"all\" (wandb, tensorboard, mlflow ... whichever are "
                "installed), not as none; and from transformers 5.0 the Trainer refuses it (\"None is not "
                "supported\")")]

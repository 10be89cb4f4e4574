"""Config file -> Plan: read safely, detect the framework, map its keys onto canonical settings."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from seqprof.config import dialects
from seqprof.config.loader import LoadedConfig, load_config
from seqprof.config.plan import ConfigDiagnostic, Plan


def detect_dialect(config: LoadedConfig | Mapping[str, Any] | str | Path) -> str:
    """The framework a config is written for (``dialects.DIALECTS`` name, or 'unknown')."""
    if isinstance(config, LoadedConfig):
        data: Mapping[str, Any] = config.data
    elif isinstance(config, Mapping):
        data = config
    else:
        data = load_config(config).data
    return dialects.detect(data)


# the dialects whose keys a project's own script may read instead (axolotl's own code reads its cfg.<key>s, so a
# checkout of it would look like such a script)
HAND_READ_DIALECTS = ("hf", "trl", "llamafactory", "llamafactory_v1", "unsloth")


def read_plan(path: str | Path, dialect: str | None = None, versions: str | None = None) -> Plan:
    """Read the config at *path* into a Plan; *dialect* overrides detection (e.g. 'trl_dpo'); *versions*
    ('trl==0.19.1,transformers==4.57') overrides the pins found beside the config (seqprof.config.versions)."""
    cfg = load_config(path)
    name, variant, source, own_parser = _choose_dialect(cfg, dialect, versions)
    settings: dict = {}
    found: list[ConfigDiagnostic] = list(cfg.diagnostics)
    if name == dialects.UNKNOWN and dialect in (None, "", dialects.UNKNOWN):  # its code may still hand keys on
        from seqprof.config.dialects.forwarded import forwarded_key_diagnostics
        from seqprof.config.pins import parse_spec

        found.extend(forwarded_key_diagnostics(cfg, pins=parse_spec(versions) if versions else None))
    if name != dialects.UNKNOWN:
        reader = dialects.module(name)
        if getattr(reader, "USES_PINS", False):  # TRL / transformers: key removals depend on the pinned versions
            from seqprof.config.pins import parse_spec

            result = reader.build(cfg, variant, pins=parse_spec(versions) if versions else None)
        else:
            result = reader.build(cfg, variant)
        settings = result.settings
        found.extend(result.diagnostics)
    if (own_parser or name == "hf") and "trainer" not in settings:
        from seqprof.config.dialects.recipes import named_trainer
        from seqprof.config.plan import Setting

        named, why = named_trainer(cfg.data, cfg.path)  # the project's own loop over TrainingArguments: its folder,
        if named:  # else the TRL trainer its parser script builds, names what it trains
            settings = {**settings, "trainer": Setting(named, None, None, None, f"default: {why}")}
    if name in ("hf", "trl", dialects.UNKNOWN) and any(d.kind in FILTERED_KINDS for d in found):
        found = _set_by_its_loader(_filtered_by_signature(found, cfg), cfg)
    found.sort(key=lambda d: (d.file != cfg.path, d.file, d.line, d.key))
    from seqprof.config.dialects.axolotl import FRAGMENT
    from seqprof.config.dialects.llamafactory import named_as_base

    return Plan(path=cfg.path, dialect=name, settings=settings, diagnostics=tuple(found),
                raw=cfg.data, key_lines=cfg.key_lines, dialect_source=source if name != dialects.UNKNOWN else "",
                fragment=name == "axolotl" and source.startswith(FRAGMENT) or name.startswith("llamafactory")
                and bool(named_as_base(cfg.path)))


FILTERED_KINDS = frozenset({"renamed_key", "deprecated_key", "removed_key"})


def _filtered_by_signature(found: list[ConfigDiagnostic], cfg: LoadedConfig) -> list[ConfigDiagnostic]:
    """A key removal's consequence where the project keeps only the class's parameters (seqprof.config.
    signature_filters): the key is dropped without an error on that release, not refused; and a removed key set to
    false or null (generate_during_eval: false) loses nothing when dropped."""
    from dataclasses import replace

    from seqprof.config.project_fields import UNREAD_BY_THE_TRAINER, project_reads
    from seqprof.config.signature_filters import signature_filter

    path = cfg.path
    kept = signature_filter(path)
    handed = tuple(sorted({d.handed_on.rsplit(":", 1)[0] for d in found if d.handed_on}))
    in_handing = signature_filter(path, handed) if kept is None and handed else None
    if kept is None and in_handing is None:
        return found
    cls, where = kept or in_handing
    owner = f"{cls}'" if cls.endswith("s") else f"{cls}'s"
    said = f"{where} keeps only {owner} parameters"
    out = []
    for d in found:
        if d.kind == "removed_key" and d.file == path and d.key in cfg.data and cfg.get(d.key) in (False, None) \
                and _named_once(d, path):
            d = replace(d, kind="unread_key", suggestion=None, value_change=None,
                        message=f"{d.message}; but {said}, so the release drops it without an error, and its value "
                                "(off) leaves nothing to lose: removing it changes nothing")
        elif d.kind in FILTERED_KINDS and d.file == path and d.key in UNREAD_BY_THE_TRAINER and kept is not None \
                and not project_reads(path, [d.key], attributes=True):
            d = replace(d, kind="unread_key", suggestion=None, value_change=None,
                        message=f"{d.message}; but {said}, so the release drops it without an error, and neither "
                                "the Trainer nor the project's code reads it: removing it changes nothing")
        elif d.kind in FILTERED_KINDS and d.file == path and kept is not None:
            message = d.message.replace("it breaks on that upgrade",
                                        f"on that upgrade it is dropped without an error ({said})")
            if message == d.message:
                message += f"; {said}, so a release without it drops the value without an error"
            d = replace(d, message=message)
        out.append(d)
    return out


def _set_by_its_loader(found: list[ConfigDiagnostic], cfg: LoadedConfig) -> list[ConfigDiagnostic]:
    """A moved key the script loading the file assigns itself before building the class (launches.
    keys_set_by_loader): the file's value never runs, so its rename or removal is the code's to make, a note here."""
    from dataclasses import replace

    from seqprof.config.launches import keys_set_by_loader

    moved = [d.key for d in found if d.kind in FILTERED_KINDS and d.file == cfg.path and d.key in cfg.data]
    where = keys_set_by_loader(cfg.path, moved) if moved else {}
    return [replace(d, kind="unread_key", suggestion=None, value_change=None,
                    message=f"{d.message}; but the project's code sets '{d.key}' itself ({where[d.key]}), so this "
                            "file's value never runs: the code is what an upgrade breaks")
            if d.kind in FILTERED_KINDS and d.file == cfg.path and d.key in where else d for d in found]


def _named_once(d: ConfigDiagnostic, config_path: str) -> bool:
    """The key is named on one line of the code that hands it on (a key the project also lists, as
    Anima-Sherlock-agent lists the DPO keys it refuses to lose, may be refused there); true when no hand-off is
    recorded."""
    if not d.handed_on:
        return True
    from seqprof.config.project_fields import project_root, source_text

    text = source_text(project_root(Path(config_path).resolve()) / d.handed_on.rsplit(":", 1)[0])
    named = re.compile(rf"[\"']{re.escape(d.key)}[\"']")
    return sum(1 for line in text.splitlines() if named.search(line)) <= 1


def _choose_dialect(cfg: LoadedConfig, dialect: str | None,
                    versions: str | None) -> tuple[str, str | None, str, bool]:
    """(dialect, variant, why, read by the project's own HfArgumentParser classes): --dialect, else the framework
    command the project runs the file with, else its keys, unless the project's own code is what reads them."""
    launch = None
    if dialect:
        name, variant = dialects.resolve(dialect)
        source = f"given as --dialect {dialect}"
    else:
        from seqprof.config.launches import framework_launch

        name, variant = dialects.detect(cfg.data), None
        swift = dialects.ms_swift_keys(cfg.data)
        adapter = dialects.peft_adapter_keys(cfg.data)
        declared = _sections_are_declared_fields(cfg) if name == dialects.UNKNOWN and not (swift or adapter) else ""
        flat = {k: v for k, v in cfg.data.items() if not isinstance(v, Mapping)} if declared else cfg.data
        name = dialects.detect(flat) if declared else name
        launch = framework_launch(cfg.path)
        if launch is not None:  # the framework's own command reads the file, whatever its keys look like
            name, source = launch.dialect, launch.describe()
        elif swift:
            source = f"ms-swift's arguments (its keys {', '.join(swift)}): `swift sft` / SwiftSft reads them, and " \
                     "seqprof does not check ms-swift"
        elif adapter:
            source = f"a saved PEFT adapter config (its keys {', '.join(adapter)}): PeftModel.from_pretrained reads it"
        else:
            keys = dialects.deciding_keys(flat, name)
            source = "; ".join(filter(None, [f"its keys {', '.join(keys)}" if keys else "", declared]))
    if not dialect and not launch and name != "axolotl" and not cfg.data.get("base_model"):
        from seqprof.config.dialects.axolotl import project_fragment

        fragment = project_fragment(cfg.path, cfg.data)
        if fragment:
            name, source = "axolotl", fragment
    if not dialect and not launch and name in ("hf", "trl"):
        from seqprof.config.dialects.own_schema import unread_dump

        if unread_dump(cfg.path, cfg.data):
            return dialects.UNKNOWN, None, "", False  # a run's saved arguments, which nothing parses
        from seqprof.config.dialects.own_schema import filled_by_own_dataclasses

        if filled_by_own_dataclasses(cfg.path, cfg.data):
            return dialects.UNKNOWN, None, "", False  # the project's own plain dataclasses, named like TRL's
        from seqprof.config.parser_classes import parsed_into
        from seqprof.config.project_calls import spread_whole

        calls = parsed_into(cfg.path, cfg.data)
        if calls is not None and not calls.frameworks:
            return dialects.UNKNOWN, None, "", False  # HfArgumentParser fills only the project's own classes
        spread = spread_whole(cfg.path) if name == "hf" and calls is None else None
        if spread is not None and spread.package == "trl":
            name, source = "trl", f"spread whole into TRL's {spread.cls} at {spread.where()}"
        if calls is None and name == "hf":  # TrlParser, HfArgumentParser's subclass, fills the classes it names alike
            calls = parsed_into(cfg.path, cfg.data, ("HfArgumentParser", "TrlParser"))
        if calls is not None and calls.frameworks == {"trl"} and name == "hf":
            # HfArgumentParser((Arguments, DPOConfig)).parse_json_file: TRL's config class takes the keys
            # (MangoFF/ACT's dpo.json), whatever plain TrainingArguments keys the file mostly holds
            name, source = "trl", f"parsed into TRL's config classes at {calls.where}"
    copy = not dialect and not launch and name in ("hf", "trl") and _parsed_by_llamafactory_copy(cfg.path, cfg.data)
    if copy:
        name, source = "llamafactory", copy
    own_parser = not dialect and not launch and name == "trl" and not versions and _own_parser(cfg.path, cfg.data)
    if not dialect and not launch and name.startswith("llamafactory") and not _is_the_framework(cfg.path, name):
        from seqprof.config.parser_classes import parsed_into

        calls = parsed_into(cfg.path, cfg.data)  # 61peng/matmech's dataset and lora_rank are its own classes'
        own_parser = calls.transformers_alone() if calls is not None and not _llamafactory_copy(calls.calls) else ""
    if own_parser:
        name, source = "hf", own_parser
    if not dialect and not launch and name in HAND_READ_DIALECTS:
        from seqprof.config.dialects.own_schema import (built_from_the_mapping, hydra_config, hydra_defaults_entry,
                                                        hydra_primary_config, mapped_by_keyword, read_as_a_dict)

        if (read_as_a_dict(cfg.path, cfg.data) or mapped_by_keyword(cfg.path, cfg.data)
                or built_from_the_mapping(cfg.path, cfg.data)) and not _is_the_framework(cfg.path, name):
            name, own_parser = dialects.UNKNOWN, False  # the project's code reads most keys out of the mapping itself
        elif name in ("hf", "trl") and (hydra_config(cfg.path) or hydra_primary_config(cfg.path, cfg.data)
                                        or hydra_defaults_entry(cfg.path)):
            name, own_parser = dialects.UNKNOWN, False  # Hydra composes it into the project's own DictConfig
    elif not dialect and not launch and name == "specforge":
        own = _own_drafter_schema(cfg.path)
        if own:
            name, source = dialects.UNKNOWN, own
    elif not dialect and not launch and name == "axolotl":
        from seqprof.config.dialects.own_schema import read_by_its_own_trainer
        from seqprof.config.project_fields import framework_fork

        if read_by_its_own_trainer(cfg.path, cfg.data) and framework_fork(cfg.path) is None:
            name = dialects.UNKNOWN  # a script of the project's own reads axolotl's key names, axolotl never does
    return name, variant, source, bool(own_parser)


def _own_drafter_schema(config_path: str) -> str:
    """Why the file is read by the project's own drafter schema, not SpecForge's: the project declares
    `target_model_path` in a config class outside a `specforge/` package (TorchSpec's and AngelSpec's
    train_config.py merge the file into `OmegaConf.structured(Config)`, a schema of their own); '' otherwise."""
    from seqprof.config.project_fields import project_fields

    found = project_fields(config_path).get("target_model_path")
    if found is None or "specforge/" in f"/{found.file}":
        return ""
    return f"the project's own drafter config {found.where()} declares its model.target_model_path, not SpecForge's"


def _llamafactory_copy(calls: tuple[str, ...]) -> bool:
    """A parser call in an `hparams/` folder, LLaMA-Factory's own module for its argument classes: a renamed copy of
    LLaMA-Factory (wwwbq/LLMfactory's src/LLMfactory/hparams/parser.py) reads the file as LLaMA-Factory does, unlike
    a project that only borrows its layout (jianzhnie/LLamaTuner's llamatuner/configs/parser.py)."""
    return any(_in_hparams(place) for place in calls)


def _in_hparams(place: str) -> bool:
    """A file (or 'file:line') in an `hparams/` folder."""
    return "/hparams/" in f"/{place}"


def _parsed_by_llamafactory_copy(path: str, data: Mapping) -> str:
    """Why the file is LLaMA-Factory's ('' when it is not): every script that parses it is the hparams/parser.py of
    the project's own copy of LLaMA-Factory (Quinn777/AtomThink's run_eval.py hands its inference configs to the
    vendored src/llamafactory/hparams/parser.py get_infer_args), whatever TRL-looking keys (dataset_name,
    temperature) it holds."""
    from seqprof.config.dialects.llamafactory import carries_llamafactory
    from seqprof.config.project_scripts import parser_scripts

    files = tuple(s.file for s in parser_scripts(path, [k for k in data if isinstance(k, str)]))
    if files and all(_in_hparams(f) for f in files) and carries_llamafactory(path):
        return f"parsed by the project's own copy of LLaMA-Factory ({', '.join(files)})"
    return ""


def _sections_are_declared_fields(cfg: LoadedConfig) -> str:
    """The file's own-looking sections are dict fields of the project's argument dataclasses, in a file that calls
    an argument parser: Hon-Wong/VoRA's `model:` and `data:` are ModelArguments.model / DataArguments.data, which
    HfArgumentParser((ModelArguments, DataArguments, TrainingArguments)).parse_dict fills beside TrainingArguments'
    keys. The classes may sit in a module of their own that the parsing script imports (claude9493/llm-kd's
    arguments.py, parsed in kd.py). The file is then read by the rest of its keys. Returns why, or ''."""
    from seqprof.config.dialects.own_schema import own_sections

    sections = own_sections(cfg.data)
    if not sections or not Path(cfg.path).is_file():
        return ""
    from seqprof.config.parser_classes import classes_parsed_into
    from seqprof.config.project_fields import project_fields, project_root
    from seqprof.config.project_scripts import parser_files

    fields = project_fields(cfg.path)
    if not all(s in fields for s in sections):
        return ""
    parsers = parser_files(project_root(cfg.path))
    elsewhere = [s for s in sections if fields[s].file not in parsers]
    if elsewhere:  # declared in a module the parsing script imports: its parser call must fill that class
        parsed = classes_parsed_into(cfg.path, [k for k in cfg.data if isinstance(k, str)]) or frozenset()
        if not all(fields[s].owner in parsed for s in elsewhere):
            return ""
    owners = ", ".join(f"{fields[s].owner}.{s}" for s in sections)
    return f"its sections are fields of the project's parser classes ({owners}, {fields[sections[0]].file})"


OWN_CLASSES = "the project's own dataclasses declare most of its keys TrainingArguments lacks"


def _own_parser(path: str, data: Mapping) -> str:
    """Why a file with TRL's keys is the project's HfArgumentParser file ('' when it is not): the scripts that parse it
    call plain HfArgumentParser and never touch TRL, whatever keys no class declares; or the project's own dataclasses
    declare most of the keys that are not TrainingArguments fields (allenai/open-instruct's ArgumentParserPlus(
    FlatArguments)) and the project pins transformers and never trl, or its classes subclass TrainingArguments and none
    of TRL's. A TRL recipe that leaves trl unpinned has no such classes beside it, or keys they do not declare."""
    from seqprof.config.dialects.hf import training_argument_fields
    from seqprof.config.project_fields import project_classes, project_fields
    from seqprof.config.project_scripts import read_by_transformers_alone
    from seqprof.config.versions import pins_beside

    own = [k for k in data if k not in training_argument_fields()]
    scripts = read_by_transformers_alone(path, data) if own else None
    if scripts:  # haroldrubio/autoregkd's cli.py parse_json_file; groxaxo/finetune-hf-vits, whose JSON holds 28 keys
        return f"parsed by HfArgumentParser in {scripts}, with no TRL config, parser or trainer"  # no class declares (refused)
    from seqprof.config.parser_classes import parsed_into

    calls = parsed_into(path, data) if own else None
    if calls is not None and calls.transformers_alone():
        return calls.transformers_alone()
    fields = {k: f for k, f in project_fields(path).items() if not f.in_trl_copy()} if own else {}
    declared = [fields[k] for k in own if k in fields]
    if not own or len(declared) * 2 <= len(own):
        return ""
    from seqprof.config.dialects.trl import trl_fields

    if any(k in trl_fields() for k in own if k not in fields):
        return ""  # beta, max_length only TRL's configs have, and the project's classes do not: TrlParser's file
    pins = pins_beside(path)
    if not pins.pins.get("transformers"):
        return ""
    # a copy of alignment-handbook's layer whose config classes subclass TRL's (RUCBM/DeepCritic's H4ArgumentParser
    # and SFTConfig(trl.SFTConfig)), or whose scripts hand what it parses to TRL's trainers (chtmp223/suri's copy of
    # the handbook before its rewrite: SFTConfig(TrainingArguments) into a vendored trl's SFTTrainer), is TRL's
    # recipe layer, whether or not trl is pinned beside it; open-instruct's dataset_mixer over its own FlatArguments
    # is not
    subclasses_trl = any(b.startswith("trl.") for f in fields.values() for b in f.bases)
    if "H4ArgumentParser" in project_classes(path) and (subclasses_trl or _handbook_copy_trains_trl(path, data)):
        return ""
    if not pins.pins.get("trl"):
        return OWN_CLASSES
    # trl installed beside, yet the file is the project's plain HfArgumentParser YAML: the classes declaring its keys
    # include a TrainingArguments subclass of its own and none of TRL's (Yumeio's TrainingArguments(HfTrainingArguments)
    # + GRPOArgs); alignment-handbook's layer (dataset_mixer, its H4ArgumentParser) is TRL's recipe layer, read as TRL
    mine = (not any(k in data for k in ("dataset_mixer", "dataset_mixture"))
            and "H4ArgumentParser" not in project_classes(path)
            and any(f.extends_training_arguments() for f in fields.values())
            and not any(b.startswith("trl.") for f in declared for b in f.bases))
    return OWN_CLASSES if mine else ""


def _handbook_copy_trains_trl(path: str, data: Mapping[str, Any]) -> bool:
    """A script of the project parses the file with its copy of H4ArgumentParser and builds a TRL trainer."""
    from seqprof.config.project_scripts import parser_scripts

    return any(script.parser == "H4ArgumentParser" and any(kind for kind, _ in script.trainers)
               for script in parser_scripts(path, data))


def _is_the_framework(path: str, dialect: str) -> bool:
    """The config's repository is LLaMA-Factory itself (a fork): its own code reads its keys."""
    from seqprof.config.project_fields import framework_fork

    fork = framework_fork(path) if dialect.startswith("llamafactory") else None
    return fork is not None and fork.package == "llamafactory"

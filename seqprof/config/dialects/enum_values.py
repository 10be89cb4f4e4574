"""`optim:` and `lr_scheduler_type:` names the transformers release that runs does not have.

TrainingArguments.__post_init__ turns both into Enum members (`self.optim = OptimizerNames(self.optim)`,
`self.lr_scheduler_type = SchedulerType(self.lr_scheduler_type)`), so a name the release lacks is a ValueError
("'adamw_hf' is not a valid OptimizerNames") before the model loads. Releases add names (cosine_with_min_lr in
4.40, warmup_stable_decay in 4.41) and drop them (adamw_hf from 4.50), so a name is judged at the release the pins
install (keys/key_history.json transformers "values", from the released wheels). TRL's configs and LLaMA-Factory's
Seq2SeqTrainingArguments derive from TrainingArguments and run the same __post_init__.
"""

from __future__ import annotations

from seqprof.config.key_history import KeyHistory, minor, run_release_said
from seqprof.config.loader import LoadedConfig
from seqprof.config.pins import Pin, Pins
from seqprof.config.plan import ConfigDiagnostic

FIELDS = ("optim", "lr_scheduler_type")  # key_history.json transformers "values" tables
# what a dropped name became (transformers 4.50 removed adamw_hf, deprecated since 4.6 for adamw_torch)
SUCCESSORS = {"adamw_hf": "adamw_torch"}


def names_the_release_lacks(cfg: LoadedConfig, pins: Pins, history: KeyHistory,
                            llamafactory: bool = False) -> list[ConfigDiagnostic]:
    """An `enum_value_refused` diagnostic per FIELDS value the transformers release the run gets has no member for
    (with *llamafactory*, the release inside the transformers range the LLaMA-Factory release requires). Not
    judged: a templated or non-text value, a pin older than every release the history holds, and a key a launch
    line or the project's code sets itself."""
    if llamafactory:
        pins = _with_llamafactory_range(pins, history)
    release = history.run_release("transformers", pins)
    build = pins.vcs("transformers")
    if release is None or history.older_than_known("transformers", pins) or build is not None and not build.head:
        return []  # (a commit of transformers seqprof cannot place among releases)
    from seqprof.config.launches import set_outside_the_file

    out = []
    for field in FIELDS:
        value = cfg.data.get(field)
        if not isinstance(value, str) or not value.isidentifier():
            continue
        having = history.having("transformers", value, [field], table="values")
        if release in having or set_outside_the_file(cfg.path, (field,)):
            continue
        out.append(_diagnostic(cfg, field, value, having, release, pins, history))
    return out


def _diagnostic(cfg: LoadedConfig, field: str, value: str, having: set[str], release: str, pins: Pins,
                history: KeyHistory) -> ConfigDiagnostic:
    order = history.versions("transformers")
    enum = "OptimizerNames" if field == "optim" else "SchedulerType"
    later = [v for v in order if v in having and order.index(v) > order.index(release)]
    earlier = [v for v in order if v in having and order.index(v) < order.index(release)]
    if later:
        since = f"transformers {minor(later[0])} added it"
        fix = f"pin transformers>={minor(later[0])}, or pick a name {minor(release)} has"
    elif earlier:
        gone = order[order.index(earlier[-1]) + 1]
        since = f"releases up to {minor(earlier[-1])} had it, {minor(gone)} dropped it"
        successor = SUCCESSORS.get(value)
        fix = f"{field}: {successor}" if successor else f"pick a name transformers {minor(release)} has"
    else:
        since = f"no transformers release ({minor(order[0])}-{minor(order[-1])}) has it"
        fix = f"pick a name transformers {minor(release)} has"
    build = pins.vcs("transformers")
    said = f"{build.source}: the main branch, past {minor(release)}" if build is not None else \
        run_release_said("transformers", pins, release)
    return ConfigDiagnostic(
        kind="enum_value_refused", key=field, file=cfg.path, line=cfg.line(field) or 1,
        suggestion=fix,
        message=f"{field}: {value} is no {enum} member in transformers {minor(release)} "
                f"({said}): {since}, and TrainingArguments.__post_init__ "
                f"raises ValueError (\"'{value}' is not a valid {enum}\") before the model loads")


def _with_llamafactory_range(pins: Pins, history: KeyHistory) -> Pins:
    """*pins* and the transformers range of the LLaMA-Factory release pip installs (the newest the pins allow, the
    newest of all when unpinned), which bounds the transformers it runs with (0.9.5: transformers<=5.6.0)."""
    allowed = history.allowed("llamafactory", pins)
    if allowed == [] or any(p.own for p in pins.of("llamafactory")) or pins.vcs("llamafactory") is not None:
        return pins
    release = allowed[-1] if allowed else history.newest("llamafactory")
    spec = history.requires("llamafactory", release, "transformers")
    if not spec:
        return pins
    joined = pins.with_pin(Pin("transformers", spec, f"what llamafactory {release} requires"))
    return joined if history.allowed("transformers", joined) else pins


AXOLOTL_OWN = "optimizer"  # key_history.json axolotl "values": the optimizers each release builds itself
OPTIMIZER_TYPED_STR_FROM = "0.19.0"  # before it the schema typed optimizer OptimizerNames | axolotl's own names


def axolotl_optimizer_refused(cfg: LoadedConfig, releases: list[str], history: KeyHistory,
                              pins: Pins) -> list[ConfigDiagnostic]:
    """An `enum_value_refused` diagnostic when an axolotl `optimizer:` is, in every axolotl release of *releases*,
    neither an optimizer that release builds itself nor an OptimizerNames member of the transformers release it
    requires (axolotl pins transformers exactly). axolotl up to 0.18 types the field OptimizerNames | its own names,
    so pydantic refuses the config; 0.19 takes any string and hands it to TrainingArguments' optim, whose
    __post_init__ raises ValueError. Not judged: a templated value, a key a launch line or the project sets, and a
    name the transformers the project pins itself has."""
    value = cfg.data.get(AXOLOTL_OWN)
    if not releases or not isinstance(value, str) or not value.isidentifier():
        return []
    from seqprof.config.launches import set_outside_the_file

    if set_outside_the_file(cfg.path, (AXOLOTL_OWN,)):
        return []
    own = history.having("axolotl", value, [AXOLOTL_OWN], table="values")
    transformers_having = history.having("transformers", value, ["optim"], table="values")
    for release in releases:
        if release in own or _required_transformers(history, release) & transformers_having:
            return []
    if set(history.allowed("transformers", pins) or ()) & transformers_having:
        return []  # the project's own transformers pin has it (hgissbkh's transformers==4.38.2 beside no axolotl pin)
    order, ta_order = history.versions("axolotl"), history.versions("transformers")
    release = max(releases, key=order.index)
    required = _required_transformers(history, release)
    newest_ta = max(required, key=ta_order.index) if required else None
    spec = history.requires("axolotl", release, "transformers") or "(any)"
    guess = SUCCESSORS.get(value)
    refuser = ("TrainingArguments.__post_init__ raises ValueError (\"'" + value + "' is not a valid "
               "OptimizerNames\") when the trainer is built") \
        if order.index(release) >= order.index(OPTIMIZER_TYPED_STR_FROM) else \
        "its schema (OptimizerNames | axolotl's own names) refuses the config before training"
    said = f"{pins.describe('axolotl')} installs {minor(release)}" if pins.of("axolotl") else \
        f"no axolotl pin found, {minor(release)} assumed"
    ta = f"transformers {minor(newest_ta)}" if newest_ta else "transformers"
    gone = [v for v in ta_order if v in transformers_having]
    since = f"; transformers releases up to {minor(gone[-1])} had it" if gone and newest_ta and \
        ta_order.index(gone[-1]) < ta_order.index(newest_ta) else ""
    built = [v for v in order if v in own]
    since += f"; axolotl releases up to {minor(built[-1])} built it" if built else ""
    return [ConfigDiagnostic(
        kind="enum_value_refused", key=AXOLOTL_OWN, file=cfg.path, line=cfg.line(AXOLOTL_OWN) or 1,
        suggestion=f"{AXOLOTL_OWN}: {guess}" if guess else f"pick an optimizer axolotl {minor(release)} takes",
        message=f"{AXOLOTL_OWN}: {value} is neither an optimizer axolotl {minor(release)} builds itself nor an "
                f"OptimizerNames member of {ta}, the release it requires (transformers{spec}; {said}){since}, "
                f"and {refuser}")]


def _required_transformers(history: KeyHistory, release: str) -> set[str]:
    """The transformers releases (of the generated list) axolotl *release* allows by its requirement."""
    spec = history.requires("axolotl", release, "transformers")
    if not spec:
        return set(history.versions("transformers"))
    return set(history.allowed("transformers", Pins().with_pin(Pin("transformers", spec, "axolotl's requirement")))
               or ())

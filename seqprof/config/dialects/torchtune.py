"""torchtune recipe config (``tune run <recipe> --config x.yaml``): components named by ``_component_``.

Keys are checked the way torchtune reads them (keys/torchtune_components.json, from
scripts/gen_torchtune_components.py over torchtune 0.5.0, 0.6.1 and main, and torch.optim):
- a ``_component_`` node's other keys are the callable's keyword arguments (torchtune/config/
  _instantiate.py: _instantiate_node; ``tune validate`` binds them to inspect.signature in
  _validate.py), so a key its signature lacks is a TypeError: unknown_key with did-you-mean; a
  callable with ``**kwargs``, or one seqprof has no signature for, is not checked;
- ``${key}`` / ``${a.b}`` / ``${.sibling}`` interpolations (OmegaConf, resolved when the recipe logs
  the config) read the key they name, so it is used; one naming no key of the file raises
  InterpolationKeyError: unknown_key ``${name}``; resolvers (``${oc.env:HOME}``) name no key;
- a top-level key is read by the recipe (``cfg.x`` / ``cfg.get("x")``): one no shipped recipe reads
  may be read by the user's own recipe, so it is an unread_key note, and a near miss of one they
  read is an unknown_key.
Settings are read after interpolation (``lora_alpha: ${.lora_rank}`` is the rank; an ``${oc.env:...}``
value is unknown, so the default applies), never from the ``${...}`` string itself.

Mapping (recipes/configs/*, torchtune/data/_collate.py):
- model <- model._component_ (the builder names the architecture, e.g. lora_llama3_2_1b);
  ``qlora_*`` builders quantize the base weights to NF4 (adapter qlora, 4-bit), ``lora_*``
  ones are LoRA; lora_r/alpha <- model.lora_rank/lora_alpha; targets <- lora_attn_modules
  plus mlp/output when apply_lora_to_mlp/apply_lora_to_output;
- max_seq_length <- tokenizer.max_seq_len (null: no truncation); padding: dataset.packed
  packs to max_seq_len, otherwise padded_collate_sft pads each batch to its longest sequence;
- micro batch <- batch_size, gradient_accumulation_steps, epochs, max_steps_per_epoch,
  shuffle, dtype, enable_activation_checkpointing, optimizer._component_ and lr;
- fused_loss: CEWithChunkedOutputLoss / LinearCrossEntropyLoss compute the loss in chunks;
- checkpoints: recipes save at the end of every epoch.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from seqprof.config.dialects.common import (
    Builder,
    DialectResult,
    as_bool,
    as_number,
    did_you_mean,
    load_keys_file,
    split_list,
)
from seqprof.config.loader import LoadedConfig
from seqprof.config.plan import ConfigDiagnostic
from seqprof.config.project_fields import project_reads

NAME = "torchtune"
LABEL = "torchtune's recipes"

CHUNKED_LOSSES = ("CEWithChunkedOutputLoss", "LinearCrossEntropyLoss", "ChunkedCrossEntropy")
PREFERENCE_LOSSES = ("DPOLoss", "RSOLoss", "SimPOLoss", "IPOLoss")
# online RL recipes (dev/grpo_full_finetune_distributed.py, ppo_full_finetune_single_device.py): their loss names
# the trainer, and `num_steps` ends the run (train() returns once that many steps ran), whatever `epochs` says
RL_LOSSES = (("GRPO", "grpo"), ("PPOLoss", "ppo"))


def _component(data: Mapping[str, Any], key: str) -> str:
    section = data.get(key)
    return str(section.get("_component_", "")) if isinstance(section, Mapping) else ""


def _dataset_builders(node: Any) -> set[str]:
    """The torchtune.datasets builders a config names, wherever it nests them (`dataset:`, a list of datasets, a
    fork's `data: {train: ..., dev: ...}`): text_completion_dataset alone is continued pre-training on raw text."""
    if isinstance(node, Mapping):
        component = str(node.get("_component_", ""))
        found = {component.rsplit(".", 1)[-1]} if component.startswith("torchtune.datasets.") else set()
        return found.union(*(_dataset_builders(v) for k, v in node.items() if k != "_component_"))
    if isinstance(node, list):
        return set().union(*(_dataset_builders(v) for v in node))
    return set()


def detect(data: Mapping[str, Any]) -> int:
    components = sum(1 for v in data.values() if isinstance(v, Mapping) and "_component_" in v)
    if not components:
        return 0
    tune = sum(1 for v in data.values() if isinstance(v, Mapping) and "torchtune" in str(v.get("_component_", "")))
    return 10 + 2 * components + 3 * tune


# what torchtune's recipes that train nothing read: generate.py (cfg.prompt, cfg.max_new_tokens, and its sampling
# settings cfg.temperature, cfg.top_k), quantize.py (cfg.quantizer), eleuther_eval.py (cfg.tasks). A config of them
# with no optimizer and no loss trains nothing (Stanleytowne/pissaquant-qat's convert_qat.yaml: a QAT quantizer and
# a checkpointer; pbontrager/mm_arc's 8B_text_eval.yaml: temperature and top_k for its own InferenceRecipe)
NON_TRAINING_KEYS = ("max_new_tokens", "prompt", "quantizer", "tasks", "temperature", "top_k")


def build(cfg: LoadedConfig, variant: str | None = None) -> DialectResult:
    """Canonical settings of a torchtune recipe config (interpolations resolved as OmegaConf would)."""
    b = Builder(replace(cfg, data=_resolved(cfg.data)))
    data = b.cfg.data
    model = _component(data, "model")
    # the async GRPO recipe keeps its loss one section down (r1-zero's dev/qwen3B_async_grpo.yaml `training: loss:`)
    loss = _component(data, "loss") or next((c for v in data.values() if isinstance(v, Mapping)
                                             if (c := _component(v, "loss"))), "")
    rl = next((trainer for name, trainer in RL_LOSSES if name in loss.rsplit(".", 1)[-1]), None)
    if rl:
        b.derived("trainer", rl, "loss._component_")
        b.stated("max_steps", "num_steps", as_number)
    elif "ORPOLoss" in loss:  # a fork's ORPO recipe (odds-ratio term on the SFT loss, no reference model)
        b.derived("trainer", "orpo", "loss._component_")
    elif any(name in loss for name in PREFERENCE_LOSSES):
        b.derived("trainer", "dpo", "loss._component_")
    elif advantage := _component(data, "advantage").rsplit(".", 1)[-1]:  # a custom RL recipe's advantage estimator
        # (RLHF-And-Friends/TunePPO: GAE over a value model is PPO, the group-relative GRAE is GRPO)
        b.derived("trainer", "grpo" if advantage.upper().startswith(("GR", "GROUP")) else
                  "rloo" if advantage.upper().startswith("RLOO") else "ppo", "advantage._component_")
    elif data.get("kd_loss") is not None:
        b.derived("trainer", "distill", "kd_loss")
    elif any(word in model.rsplit(".", 1)[-1] for word in ("classifier", "reward")):  # a score head, not an LM
        b.derived("trainer", "reward", "model._component_")  # head: mistral_classifier / lora_mistral_reward_7b
    elif data.get("teacher_model") is not None:  # a fork's distillation recipe with its own loss (wasabi-ai's
        b.derived("trainer", "distill", "teacher_model")  # layerwise_distillation: teacher_model + student_model)
    elif (builders := _dataset_builders(data)) and builders <= {"text_completion_dataset"}:
        b.derived("trainer", "pretrain", "dataset._component_: torchtune.datasets.text_completion_dataset")
    trains_nothing = not loss and "optimizer" not in data and any(k in data for k in NON_TRAINING_KEYS)
    if not trains_nothing:  # generate.py's or quantize.py's config (no optimizer, no loss) trains nothing
        b.default("trainer", "sft", "a torchtune fine-tuning recipe with a cross-entropy loss")
    b.first("model", ["model._component_", "student_model._component_"])  # the model trained
    b.first("model_config_path", ["checkpointer.checkpoint_dir", "student_checkpointer.checkpoint_dir"])
    leaf = model.rsplit(".", 1)[-1]
    if leaf.startswith("qlora_"):
        b.derived("adapter", "qlora", "model._component_")
        b.derived("load_in_4bit", True, "model._component_")
    elif leaf.startswith("lora_"):
        b.derived("adapter", "lora", "model._component_")
    if model in _components()[0] or not model.startswith("torchtune."):
        b.stated("lora_r", "model.lora_rank", as_number)
        b.stated("lora_alpha", "model.lora_alpha", as_number)
        b.stated("lora_dropout", "model.lora_dropout", as_number)
    # else a builder no torchtune release has (a fork's concurrent_lora_llama3_8b takes a rank per adapter): its
    # arguments mean what the fork says, so they are neither read nor judged as upstream's
    if b.present("model.lora_attn_modules"):
        targets = split_list(b.raw("model.lora_attn_modules"))
        if as_bool(b.raw("model.apply_lora_to_mlp")) is True:
            targets.append("mlp")
        if as_bool(b.raw("model.apply_lora_to_output")) is True:
            targets.append("output")
        b.derived("lora_targets", targets, "model.lora_attn_modules")
    b.stated("max_seq_length", "tokenizer.max_seq_len", as_number)
    if b.value("max_seq_length") is not None:
        b.default("overflow", "truncate", "the model tokenizer truncates to max_seq_len")
    if as_bool(b.raw("dataset.packed")) is True:
        b.derived("padding", "packed", "dataset.packed")
    b.default("padding", "longest", "padded_collate_sft pads each batch to its longest sequence "
                                    "(torchtune/data/_collate.py)")
    b.stated("micro_batch_size", "batch_size", as_number)
    b.stated("gradient_accumulation_steps", "gradient_accumulation_steps", as_number)
    b.stated("num_epochs", "epochs", as_number)
    b.stated("max_steps_per_epoch", "max_steps_per_epoch", as_number)
    if not _own_recipe_leaves_unread(cfg, "shuffle"):
        b.stated("shuffle", "shuffle", as_bool)
    b.stated("gradient_checkpointing", "enable_activation_checkpointing", as_bool)
    b.stated("precision", "dtype", lambda v: {"bfloat16": "bf16", "float32": "fp32"}.get(str(v), str(v)))
    b.stated("optimizer", "optimizer._component_")
    b.stated("learning_rate", "optimizer.lr", as_number)
    if any(name in loss for name in CHUNKED_LOSSES):
        b.derived("fused_loss", "chunked", "loss._component_")
    b.stated("datasets", "dataset._component_", lambda v: [v])
    b.default("save_strategy", "epoch", "torchtune recipes save a checkpoint at the end of every epoch")
    b.stated("offload_params", "fsdp_cpu_offload", as_bool)
    b.diagnostics.extend(_not_overridden(check_keys(cfg, b.value("trainer")), cfg.path))
    if trains_nothing:
        b.diagnostics.extend(_prompt_as_text(cfg))
    return b.result()


PROMPT_OF_ROLES_FROM = "0.4.0"  # recipes/generate.py convert_prompt_to_tokens: prompt["system"], prompt["user"]


def _prompt_as_text(cfg: LoadedConfig) -> list[ConfigDiagnostic]:
    """generate.py's `prompt:` written as text. From torchtune 0.4 the recipe builds the messages from
    `prompt["system"]` and `prompt["user"]`, so a string stops it with TypeError ("string indices must be
    integers") before anything is generated; up to 0.3 a string was tokenized as it stands. Judged only where the
    releases the pins allow (unpinned: the newest) all read roles and torchtune's own recipe runs the file."""
    from packaging.version import Version

    from seqprof.config.key_history import KeyHistory, assumed
    from seqprof.config.launches import launched_scripts
    from seqprof.config.project_fields import framework_fork
    from seqprof.config.versions import pins_beside

    prompt = cfg.data.get("prompt")
    if not isinstance(prompt, str) or "max_new_tokens" not in cfg.data:
        return []
    if any(Path(script).suffix == ".py" for script in launched_scripts(cfg.path)) or framework_fork(cfg.path):
        return []  # the project's own recipe (or its copy of torchtune) reads the prompt its own way
    pins = pins_beside(cfg.path)
    history = KeyHistory.load()
    oldest = history.oldest_run("torchtune", pins)
    if oldest is None or Version(oldest) < Version(PROMPT_OF_ROLES_FROM):
        return []
    which = f"{pins.describe('torchtune')} allows no older release" if pins.of("torchtune") else \
        (assumed(["torchtune"], pins, history) or "")
    since = ".".join(PROMPT_OF_ROLES_FROM.split(".")[:2])
    reason = (f"torchtune {since} and newer read the prompt as roles (recipes/generate.py "
              f"convert_prompt_to_tokens: prompt[\"system\"], prompt[\"user\"]), so a string stops generate with "
              f"TypeError (\"string indices must be integers\") before any token; {which}")
    return [ConfigDiagnostic(kind="invalid_value", key="prompt", file=cfg.path, line=cfg.line("prompt") or 1,
                             message=f"'prompt' is text: {reason}", reason=reason,
                             suggestion="prompt: {system: null, user: <the text>}")]


def _not_overridden(found: list, path: str) -> list:
    """Key findings less those on keys every `tune run` of the file sets on the command line: the file's value is
    never what runs (scale-lab/PoliTune's README always passes dataset._component_=data.datasets.politune_left or
    _right, the project's own builders, over the file's torchtune.datasets.stack_exchanged_paired_dataset)."""
    if not found:
        return found
    from seqprof.config.launches import tune_overrides

    overridden = tune_overrides(path)
    return [d for d in found if d.key not in overridden]


def _own_recipe_leaves_unread(cfg: LoadedConfig, key: str) -> bool:
    """Whether the config runs under the project's own recipe and that recipe never reads *key*. The own recipe is
    the project file that reads the config's top-level keys no shipped recipe reads and the recipe keys `epochs` and
    `batch_size` too (AdalAbilbekov/new_era's loop recipe reads train_type and sub_length; it batches through its
    own DistributedSampler(shuffle=True), whatever `shuffle:` says)."""
    from seqprof.config.project_fields import project_reads_by_file

    _, _, read = _components()
    custom = [str(k) for k in cfg.data if str(k) not in read]
    if not custom or key not in cfg.data:
        return False
    recipes = [dict(reads) for _, reads in project_reads_by_file(cfg.path, [*custom, "epochs", "batch_size", key])]
    recipes = [reads for reads in recipes if "epochs" in reads and "batch_size" in reads
               and any(k in reads for k in custom)]
    return bool(recipes) and not any(key in reads for reads in recipes)


# ---------------------------------------------------------------- keys, as torchtune reads them

def check_keys(cfg: LoadedConfig, trainer: str | None = None) -> list[ConfigDiagnostic]:
    """Component kwargs against signatures, interpolations against the file, top-level keys against the recipes
    (of *trainer*'s kind, for the keys only RL, preference or distillation recipes read)."""
    used, dangling = _interpolations(cfg)
    return dangling + _component_keys(cfg) + _gone_components(cfg) + _top_level_keys(cfg, used, trainer)


def _gone_components(cfg: LoadedConfig) -> list[ConfigDiagnostic]:
    """A ``_component_`` path an older torchtune had and the newest lacks (torchtune.utils.metric_logging.DiskLogger,
    torchtune.training's since 0.3), judged at the project's torchtune pin (keys/torchtune_history.json): the
    release a fresh install gets lacks it → removed_key (config.instantiate cannot import it); a pinned release that
    still has it → a warning naming the release that drops it; no pin → judged at the newest release. A checkout
    of torchtune itself (a fork) has its own paths: not judged."""
    from seqprof.config.project_fields import framework_fork
    from seqprof.config.key_history import KeyHistory, assumed
    from seqprof.config.versions import pins_beside

    paths, _, _ = _components()
    nodes = [(dotted, str(node["_component_"])) for dotted, node in _nodes(cfg.data, "")
             if isinstance(node, Mapping) and isinstance(node.get("_component_"), str)]
    history = KeyHistory.load()
    tracked = history.data["torchtune"]["classes"]["components"]["fields"]
    nodes = [(dotted, path) for dotted, path in nodes if path not in paths and path in tracked]
    unread = _sections_the_recipe_skips(cfg, {dotted.split(".")[0] for dotted, _ in nodes if dotted})
    nodes = [(dotted, path) for dotted, path in nodes if dotted.split(".")[0] not in unread]
    fork = framework_fork(cfg.path) if nodes else None
    if fork is not None and fork.package == "torchtune":
        return _gone_from_checkout(cfg, nodes, history)
    if not nodes:
        return []
    pins = pins_beside(cfg.path)
    out = []
    for dotted, path in nodes:
        gone = history.removal("torchtune", path, ["components"], pins)
        if gone is None or gone.verdict == "unknown":
            continue  # a commit pin: seqprof cannot say whether it has the path
        moved = history.data["torchtune"]["moved"].get(path)
        arrival = history.arrival("torchtune", moved, ["components"], pins) if moved else None
        where = f"{dotted}._component_" if dotted else "_component_"
        order = history.versions("torchtune")
        since = history.release("torchtune", min(history.having("torchtune", moved, ["components"]), key=order.index)) \
            if moved else None
        moved_text = f"; {since} has it as '{moved}'" if moved else ""
        if gone.verdict == "warning":
            message = f"'{path}' is dropped by a release after the pinned one: {gone.detail}{moved_text}"
        else:
            message = f"'{path}' is gone from torchtune: {gone.detail}{moved_text}; config.instantiate cannot import it"
            if gone.verdict == "assumed":
                message += "; " + (assumed(["torchtune"], pins, history) or "")
        out.append(ConfigDiagnostic(
            kind="removed_key" if gone.verdict == "error" else "deprecated_key", key=where, file=cfg.path,
            line=cfg.line(where) or cfg.line(dotted) or 1, message=message, suggestion=moved,
            suggestion_from=arrival.removed_in if arrival else None))
    return out


def _sections_the_recipe_skips(cfg: LoadedConfig, sections: set[str]) -> set[str]:
    """The top-level *sections* that the project's own recipe running the config never names (its launch line:
    `tune run recipes/lora_finetune_distributed.py --config ...`): config.instantiate is never called on them, so
    a component path there that torchtune dropped breaks nothing (hmosousa/tradutor's recipe has no profiler)."""
    from seqprof.config.launches import launched_scripts
    from seqprof.config.project_fields import project_root, source_text

    if not sections:
        return set()
    root = project_root(cfg.path)
    recipes = [root / script for script in launched_scripts(cfg.path)]
    texts = [source_text(recipe) for recipe in recipes if recipe.suffix == ".py" and recipe.is_file()]
    if not texts or len(texts) != len(recipes):
        return set()  # a shipped recipe (`tune run lora_finetune_single_device`) or one seqprof cannot read
    return {name for name in sections if not any(re.search(rf"\b{re.escape(name)}\b", text) for text in texts)}


def _gone_from_checkout(cfg: LoadedConfig, nodes: list[tuple[str, str]], history) -> list[ConfigDiagnostic]:
    """In a checkout of torchtune itself, a path a release dropped is judged by the checkout's own source: the fork
    may have kept or re-added it, and where its package is there, config.instantiate imports from it."""
    from seqprof.config.project_fields import project_root

    root = project_root(cfg.path)
    out = []
    for dotted, path in nodes:
        found = _defined_in(root, path)
        if found is None or found[0]:
            continue  # the checkout's package is not there to read, or it has the path
        moved = history.data["torchtune"]["moved"].get(path)
        successor = _defined_in(root, moved) if moved else None
        where = f"{dotted}._component_" if dotted else "_component_"
        order = history.versions("torchtune")
        last = max(history.having("torchtune", path, ["components"]), key=order.index)
        dropped = f"; torchtune dropped it in {history.release('torchtune', order[order.index(last) + 1])}" \
            if order.index(last) + 1 < len(order) else ""
        out.append(ConfigDiagnostic(
            kind="removed_key", key=where, file=cfg.path, line=cfg.line(where) or cfg.line(dotted) or 1,
            message=(f"'{path}' is not in this torchtune checkout ({found[1]} names no '{found[2]}'){dropped}"
                     + (f"; the checkout has '{moved}'" if successor and successor[0] else "")
                     + ": config.instantiate cannot import it"),
            suggestion=moved if successor and successor[0] else None))
    return out


def _defined_in(root: Path, path: str) -> tuple[bool, str, str] | None:
    """(whether the source tree at *root* defines dotted *path*, the module file that decides, the name it looks
    for there); None when the package's own __init__.py is not there. The longest module prefix of the path
    decides: a module that is the whole path exists; else its text names the rest's first part (a def, a class, an
    import)."""
    parts = path.split(".")
    if not (root / parts[0] / "__init__.py").is_file():
        return None
    for i in range(len(parts), 0, -1):
        for module in (root.joinpath(*parts[:i]).with_suffix(".py"), root.joinpath(*parts[:i], "__init__.py")):
            if module.is_file():
                if i == len(parts):
                    return True, module.relative_to(root).as_posix(), parts[-1]
                text = module.read_text(encoding="utf-8", errors="replace")
                named = re.search(rf"\b{re.escape(parts[i])}\b", text) is not None
                return named, module.relative_to(root).as_posix(), parts[i]
    return None


@cache
def _components() -> tuple[Mapping[str, int], tuple[tuple[frozenset[str], bool], ...], frozenset[str]]:
    """(dotted path -> signature index, signatures as (parameter names, takes **kwargs), keys recipes read)."""
    data = load_keys_file("torchtune_components")
    signatures = tuple((frozenset(s["params"]), bool(s["var_kw"])) for s in data["signatures"])
    read = frozenset(data["library_keys"]).union(*map(frozenset, data["recipe_keys"].values()))
    return data["paths"], signatures, read


# recipes of one kind of training, by the words of their names: a key only they read is a near miss only in a
# config of that kind (dev/grpo_full_finetune_distributed's save_every_n_epochs is no lora recipe's setting)
RECIPE_KINDS = (("grpo", "grpo"), ("ppo", "ppo"), ("dpo", "dpo"), ("knowledge_distillation", "distill"))
LIBRARY_KIND = "grpo"  # the library modules handed the whole config are the async GRPO workers (torchtune/dev/rl)


@cache
def _near_miss_targets(trainer: str | None) -> frozenset[str]:
    """The keys a top-level key may be a near miss of: what the recipes read, less what only recipes of another kind
    than *trainer*'s read. The library's own reads (torchtune/dev/rl/workers) are async GRPO's: its `training`
    section is no near miss for a DPO config's `training_mode` (0315jaewon/SecAlign_cont)."""
    data = load_keys_file("torchtune_components")
    kinds = {recipe: next((kind for word, kind in RECIPE_KINDS if word in recipe), None)
             for recipe in data["recipe_keys"]}
    library = frozenset(data["library_keys"]) if trainer in (None, LIBRARY_KIND) else frozenset()
    return library.union(*(frozenset(keys) for recipe, keys in data["recipe_keys"].items()
                           if kinds[recipe] in (None, trainer)))


def _component_keys(cfg: LoadedConfig) -> list[ConfigDiagnostic]:
    """A key of a ``_component_`` node that the callable does not take (and it has no ``**kwargs``). Where the
    repository carries the component's package itself (a fork of torchtune, installed from the checkout, or a copy
    of it in a folder of its own), that source gives the signature: the fork may have added parameters (Tora's
    lora_qwen2_5_3b(lora_type=...), Heima's lora_llama3_1_8b(use_abstract_projection=...))."""
    from seqprof.config.project_fields import framework_fork, project_root, vendored_checkout

    paths, signatures, _ = _components()
    root = project_root(cfg.path) if Path(cfg.path).is_file() else None
    fork = root is not None and getattr(framework_fork(cfg.path), "package", None) == "torchtune"
    # a copy of torchtune in a folder of the repository, which the project installs, runs instead of the release
    vendored = vendored_checkout(cfg.path, "torchtune") if root is not None and not fork else None
    out = []
    for dotted, node in _nodes(cfg.data, ""):
        if not isinstance(node, Mapping) or "_component_" not in node:
            continue
        component = str(node["_component_"])
        if component not in paths:
            continue  # the user's own callable, or one from a package seqprof has no signature for
        params, var_kw = signatures[paths[component]]
        source = vendored if vendored is not None and component.startswith("torchtune.") else root
        if source is not None and (fork or source is vendored or
                                   (source / component.split(".")[0] / "__init__.py").is_file()):
            # the checkout's own package runs (fxmeng/torchtune's lora_llama3_8b takes pissa_config)
            own = _checkout_signature(source, component)
            if own is None:
                continue  # the checkout's own package is what runs, and its definition is not readable here
            params, var_kw = own
        if var_kw:
            continue
        for key in node:
            if key == "_component_" or key in params:
                continue
            where = f"{dotted}.{key}"
            taken = _taken_out_by_project(root, dotted, str(key)) if root is not None else None
            if taken is not None:
                out.append(ConfigDiagnostic(
                    kind="unread_key", key=where, file=cfg.path, line=cfg.line(where) or cfg.line(dotted) or 1,
                    message=(f"'{key}' is not a parameter of {component}, but the project's script reads it "
                             f"({taken} reads {where}): its setting, if the script takes it out before "
                             "config.instantiate")))
                continue
            guess = did_you_mean(str(key), params)
            hint = f"; did you mean '{guess}'?" if guess else ""
            out.append(ConfigDiagnostic(
                kind="unknown_key", key=where, file=cfg.path, line=cfg.line(where) or cfg.line(dotted) or 1,
                message=(f"'{key}' is not a parameter of {component}: config.instantiate passes it as a keyword "
                         f"argument, a TypeError{hint}"),
                suggestion=guess))
    return out


def _taken_out_by_project(root: Path, dotted: str, key: str) -> str | None:
    """Where the project's Python reads a component's key itself (`conf.model.prompt_tuning`, `cfg["model"].pop(
    "prompt_tuning")`): Jacklu0831/marc's test-time training sets model.prompt_tuning for its own prompt-tuning
    recipe, which builds the adapter from it. 'test_time_train_prompt_tuning.py:139', or None."""
    from seqprof.config.project_fields import code_match_at

    section = re.escape(dotted.rsplit(".", 1)[-1])
    name = re.escape(key)
    return code_match_at(root, re.compile(
        rf"\.{section}\.{name}\b|\[\s*['\"]{section}['\"]\s*\]\s*\[\s*['\"]{name}['\"]|"
        rf"\b{section}\s*(?:\.|\[\s*['\"]{section}['\"]\s*\]\s*\.)\s*(?:pop|get)\(\s*['\"]{name}['\"]"))


def _checkout_signature(root: Path, path: str, depth: int = 0) -> tuple[frozenset[str], bool] | None:
    """(parameter names, takes **kwargs) of the function or class *path* names in the source tree at *root*,
    following `from .x import name` re-exports (a package's __init__.py); None when it cannot be found."""
    import ast

    from seqprof.config.project_fields import parsed_module

    module_path, _, name = path.rpartition(".")
    parts = module_path.split(".")
    for file in (root.joinpath(*parts).with_suffix(".py"), root.joinpath(*parts, "__init__.py")):
        tree = parsed_module(file) if file.is_file() else None
        if tree is None:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return _parameters(node.args, skip_first=False)
            if isinstance(node, ast.ClassDef) and node.name == name:
                init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
                return _parameters(init.args, skip_first=True) if init is not None else None
            if isinstance(node, ast.ImportFrom) and depth < 4 and \
                    any((alias.asname or alias.name) == name for alias in node.names):
                alias = next(a for a in node.names if (a.asname or a.name) == name)
                package = parts if file.name == "__init__.py" else parts[:-1]
                base = package[:len(package) - node.level + 1] if node.level else []
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
                return _checkout_signature(root, f"{target}.{alias.name}", depth + 1)
        return None
    package = root.joinpath(*parts)  # a package whose __init__.py the copy lacks: its modules that define *name*
    if depth < 4 and package.is_dir() and not (package / "__init__.py").is_file():
        for file in sorted(package.glob("*.py")):
            found = _checkout_signature(root, f"{module_path}.{file.stem}.{name}", depth + 1)
            if found is not None:
                return found
    return None


def _parameters(args, skip_first: bool) -> tuple[frozenset[str], bool]:
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return frozenset(names[1:] if skip_first else names), args.kwarg is not None


def _top_level_keys(cfg: LoadedConfig, used: set[str], trainer: str | None = None) -> list[ConfigDiagnostic]:
    """Top-level keys no shipped recipe reads: a note (a custom recipe may read them), or a near-miss typo of a key
    a recipe of the config's kind reads."""
    _, _, read = _components()
    targets = _near_miss_targets(trainer)
    out = []
    near = {str(k): did_you_mean(str(k), targets) for k in cfg.data if k not in read and k not in used}
    # a near miss the project's own recipe reads (`cfg.get("compile_loss")` beside `compile`) is its setting
    own = project_reads(cfg.path, [k for k, guess in near.items() if guess]) if any(near.values()) else {}
    for key in cfg.data:
        if key in read or key in used:
            continue
        guess = near[str(key)]
        line = cfg.line(str(key)) or 1
        if guess and str(key) in own:
            out.append(ConfigDiagnostic(
                kind="unread_key", key=str(key), file=cfg.path, line=line,
                message=f"'{key}' is a top-level key no shipped torchtune recipe reads; the project's own recipe "
                        f"reads it ({own[str(key)]})"))
        elif guess:
            out.append(ConfigDiagnostic(
                kind="unknown_key", key=str(key), file=cfg.path, line=line,
                message=f"'{key}' is not a key {LABEL} read; did you mean '{guess}'?", suggestion=guess))
        else:
            out.append(ConfigDiagnostic(
                kind="unread_key", key=str(key), file=cfg.path, line=line,
                message=(f"'{key}' is a top-level key no shipped torchtune recipe reads: keep it if your own "
                         "recipes read it.")))
    return out


def _nodes(node: Any, dotted: str) -> Iterator[tuple[str, Any]]:
    """Every value of the config with its dotted path ('dataset.0._component_'), depth first."""
    if isinstance(node, Mapping):
        items = ((str(k), v) for k, v in node.items())
    elif isinstance(node, list):
        items = ((str(i), v) for i, v in enumerate(node))
    else:
        return
    for k, v in items:
        path = f"{dotted}.{k}" if dotted else k
        yield path, v
        yield from _nodes(v, path)


# OmegaConf's grammar (omegaconf/grammar/OmegaConfGrammarParser.g4): a node reference is a dotted key path,
# with leading dots for a relative one and [i] for an index; anything with 'name:' first is a resolver call.
_REFERENCE = re.compile(r"\s*(\.*)((?:[\w-]+)(?:\.[\w-]+|\[[^\]]*\])*)?\s*")
_RESOLVER = re.compile(r"\s*([A-Za-z_][\w.]*)\s*:(.*)", re.S)
_KEY_RESOLVERS = ("oc.select", "oc.deprecated", "oc.dict.keys", "oc.dict.values")  # their first argument is a key


def _interpolations(cfg: LoadedConfig) -> tuple[set[str], list[ConfigDiagnostic]]:
    """Top-level keys some ``${...}`` reads, and a diagnostic per reference to a key the file lacks."""
    used: set[str] = set()
    placeholders: set[str] = set()
    dangling: list[ConfigDiagnostic] = []
    for dotted, value in _nodes(cfg.data, ""):
        if not isinstance(value, str) or "${" not in value:
            continue
        for body in _bodies(value):
            for ref, has_default in _references(body):
                target = _absolute(ref, dotted)
                if target is None:
                    continue
                used.add(target[0])
                if has_default or _exists(cfg.data, target):
                    continue
                name = ".".join(target)
                if name.upper() == name and any(c.isalpha() for c in name):
                    # ${OUTPUT_DIR}: a template's placeholder, set on the command line (tune run ... OUTPUT_DIR=...)
                    # as its README asks, not a typo of output_dir; said once per name
                    if name not in placeholders:
                        placeholders.add(name)
                        dangling.append(ConfigDiagnostic(
                            kind="unread_key", key=f"${{{ref}}}", file=cfg.path, line=cfg.line(dotted) or 1,
                            message=(f"'${{{ref}}}' (first in '{dotted}') is a placeholder no key of this file "
                                     f"defines: set it on the command line (`tune run ... {name}=...`), or OmegaConf "
                                     "raises InterpolationKeyError when the recipe resolves the config")))
                    continue
                guess = did_you_mean(name, _all_paths(cfg.data))
                dangling.append(ConfigDiagnostic(
                    kind="unknown_key", key=f"${{{ref}}}", file=cfg.path, line=cfg.line(dotted) or 1,
                    message=(f"'{dotted}' interpolates '${{{ref}}}', which names no key of this file: OmegaConf "
                             "raises InterpolationKeyError when the recipe resolves the config (unless "
                             f"`tune run` sets {name}=... on its command line)"
                             + (f"; did you mean '${{{guess}}}'?" if guess else "")),
                    suggestion=f"${{{guess}}}" if guess else None))
    return used, dangling


def _bodies(text: str) -> Iterator[str]:
    """The text inside each top-level ``${...}`` of *text* (escaped ``\\${`` skipped)."""
    i = 0
    while (start := text.find("${", i)) != -1:
        if start > 0 and text[start - 1] == "\\":
            i = start + 2
            continue
        depth, j, quote = 1, start + 2, ""
        while j < len(text) and depth:
            c = text[j]
            if quote:
                quote = "" if c == quote else quote
            elif c in "'\"":
                quote = c
            elif text.startswith("${", j):
                depth, j = depth + 1, j + 1
            elif c == "}":
                depth -= 1
            j += 1
        if depth:
            return  # unterminated: a GrammarParseError in OmegaConf, not a reference to check
        yield text[start + 2:j - 1]
        i = j


def _references(body: str) -> Iterator[tuple[str, bool]]:
    """Key references in one interpolation body: (reference, has a default), nested ones included. A path with a
    part chosen by another interpolation (`${model_factory[${size}].wandb_project}`, `${a.${b}}`) is checked up to
    that part: which key follows is known only when the inner one resolves."""
    if _REFERENCE.fullmatch(body) and body.strip() and "${" not in body:
        yield body.strip(), False
        return
    static = re.split(r"\[?\$\{", body, maxsplit=1)[0].rstrip(".") if "${" in body else ""
    if static.strip() and _REFERENCE.fullmatch(static) and _RESOLVER.fullmatch(static) is None:
        yield static.strip(), False
    m = _RESOLVER.fullmatch(body)
    if m:
        name, args = m.group(1), m.group(2)
        if name in _KEY_RESOLVERS:
            first, _, rest = args.partition(",")
            if _REFERENCE.fullmatch(first) and first.strip():
                yield first.strip(), name == "oc.select" and bool(rest.strip())
    for inner in _bodies(body):  # ${oc.env:X,${a}} / ${eval:'${a} * ${b}'} / ${a.${b}}: the nested ones
        yield from _references(inner)


def _absolute(ref: str, dotted: str) -> tuple[str, ...] | None:
    """The absolute key path a reference names, from the path of the value holding it."""
    m = _REFERENCE.fullmatch(ref)
    if m is None or not m.group(2):
        return None
    parts = [p for p in re.split(r"\.|\[|\]", m.group(2)) if p]
    dots = len(m.group(1))
    if not dots:
        return tuple(parts)
    parent = dotted.split(".")[:-1]  # the node holding the value
    up = dots - 1
    if up > len(parent):
        return None
    return tuple(parent[:len(parent) - up] + parts) or None


def _exists(data: Any, path: tuple[str, ...]) -> bool:
    node = data
    for part in path:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True


def _resolved(data: Mapping[str, Any]) -> dict[str, Any]:
    """The config with every ``${...}`` value replaced by what it names (``lora_alpha: ${.lora_rank}`` is 8),
    or by None where seqprof cannot know it (an environment variable, a resolver, a dangling key), so a
    setting read from it is the default, not an unusable string."""
    def resolve(value: Any, dotted: str, depth: int) -> Any:
        if isinstance(value, Mapping):
            return {k: resolve(v, f"{dotted}.{k}" if dotted else str(k), depth) for k, v in value.items()}
        if isinstance(value, list):
            return [resolve(v, f"{dotted}.{i}", depth) for i, v in enumerate(value)]
        if not isinstance(value, str) or "${" not in value or depth > 10:
            return None if isinstance(value, str) and "${" in value else value
        bodies = list(_bodies(value))
        targets = [_absolute(b.strip(), dotted) if _REFERENCE.fullmatch(b) else None for b in bodies]
        if not bodies or any(t is None or not _exists(data, t) for t in targets):
            return None
        found = [resolve(_lookup(data, t), ".".join(t), depth + 1) for t in targets]
        if value.strip() == f"${{{bodies[0]}}}" and len(bodies) == 1:
            return found[0]
        if any(isinstance(f, (Mapping, list)) or f is None for f in found):
            return None
        out = value
        for body, f in zip(bodies, found):
            out = out.replace(f"${{{body}}}", str(f).lower() if isinstance(f, bool) else str(f), 1)
        return out

    return resolve(data, "", 0)


def _lookup(data: Any, path: tuple[str, ...]) -> Any:
    node = data
    for part in path:
        node = node[part] if isinstance(node, Mapping) else node[int(part)]
    return node


def _all_paths(data: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(path for path, _ in _nodes(data, ""))

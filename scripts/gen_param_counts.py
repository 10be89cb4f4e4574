"""Regenerate tests/data/param_counts.json: every causal-LM model_type built by transformers on the meta device.

seqprof counts parameters from config.json alone (no torch at run time); this script records the
independent figure tests/test_param_counts.py compares against. For every model_type in transformers'
MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, and the image-text-to-text types whose text model people fine-tune
(VLM_TYPES), it takes the config class's defaults with the decoder cut to a few layers (widths, expert
counts, shared experts and layer-type patterns kept), builds the model with `from_config` under
`torch.device("meta")` and records `sum(p.numel() for p in model.parameters())` (tied weights once,
as parameters() yields a shared tensor once) and the sum per top module:

    /tmp/trlvenv/bin/python scripts/gen_param_counts.py                # all types
    /tmp/trlvenv/bin/python scripts/gen_param_counts.py --only llama qwen3_5 --dump /tmp/shapes.txt

A type whose config or model cannot be built from defaults is recorded with its error instead of a count.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections import Counter
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "param_counts.json"
# Image-text-to-text types (not in the causal-LM mapping, or there only as a text-only class) whose
# language model is what people fine-tune; built with AutoModelForImageTextToText, vision tower included.
VLM_TYPES = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe", "gemma3", "llama4",
             "mistral3", "llava", "paligemma", "idefics3", "smolvlm", "internvl")
MIN_LAYERS, MAX_LAYERS = 4, 8
# Keys that say how many leading layers are dense, or how long a repeating layer pattern is: the cut
# keeps at least one full period (and one layer past the dense prefix) so every layer kind is built.
_PREFIX_KEYS = ("first_k_dense_replace", "num_dense_layers", "first_k_dense", "moe_layer_start_index")
_PERIOD_KEYS = ("sliding_window_pattern", "_sliding_window_pattern", "full_attention_interval",
                "attn_layer_period", "expert_layer_period", "decoder_sparse_step", "moe_layer_freq",
                "interleave_moe_layer_step", "global_attn_every_n_layers", "attention_layer_interval")


def _layers_key(cfg) -> str | None:
    for key in ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "decoder_layers"):
        if isinstance(getattr(cfg, key, None), int):
            return key
    return None


def _cut_kwargs(cfg) -> dict:
    """Constructor kwargs that cut `cfg`'s decoder to a few layers, with per-layer lists and patterns cut alike."""
    key = _layers_key(cfg)
    if key is None:
        return {}
    full = getattr(cfg, key)
    want = MIN_LAYERS
    for k in _PREFIX_KEYS:
        v = getattr(cfg, k, None)
        if isinstance(v, int) and not isinstance(v, bool) and 0 < v < full:
            want = max(want, v + 2)
    for k in _PERIOD_KEYS:
        v = getattr(cfg, k, None)
        if isinstance(v, int) and not isinstance(v, bool) and 1 < v <= full:
            want = max(want, v)
    want = min(max(want, MIN_LAYERS), MAX_LAYERS, full)
    kwargs = {key: want}
    if want == full:
        return kwargs
    for name, value in vars(cfg).items():  # per-layer lists (layer_types, mlp_only_layers...) and pattern strings
        if name.startswith("_") and name != "_sliding_window_pattern":
            continue
        if isinstance(value, (list, tuple)) and len(value) == full:
            kwargs[name] = list(value[:want])
        elif isinstance(value, str) and len(value) == full and name.endswith("pattern"):
            kwargs[name] = value[:want]
        elif isinstance(value, (list, tuple)) and value and all(isinstance(i, int) and not isinstance(i, bool)
                                                                 for i in value) and name.endswith("layers"):
            kwargs[name] = [i for i in value if i < want]  # layer indices (mlp_only_layers, ...)
    return kwargs


def small_config(model_type: str, vlm: bool):
    """The config class's defaults with the (text) decoder cut to a few layers."""
    from transformers import CONFIG_MAPPING
    cls = CONFIG_MAPPING[model_type]
    base = cls()
    if vlm or (_layers_key(base) is None and getattr(base, "text_config", None) is not None):
        text = base.text_config
        sub = {**text.to_dict(), **_cut_kwargs(text)}
        for drop in ("layer_types",):  # recomputed from the cut depth when not passed in full
            if drop in sub and len(sub[drop]) != sub.get(_layers_key(text) or "", len(sub[drop])):
                sub.pop(drop)
        return cls(text_config=sub)
    return cls(**_cut_kwargs(base))


def build(model_type: str, vlm: bool):
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText
    cfg = small_config(model_type, vlm)
    auto = AutoModelForImageTextToText if vlm else AutoModelForCausalLM
    with torch.device("meta"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = auto.from_config(cfg)
    return cfg, model


def record(model_type: str, vlm: bool, dump=None) -> dict:
    entry: dict = {"model_type": model_type, "auto_class": "AutoModelForImageTextToText" if vlm
                   else "AutoModelForCausalLM"}
    try:
        cfg, model = build(model_type, vlm)
    except Exception as exc:  # noqa: BLE001 - a type that cannot be built from defaults is recorded, not fatal
        entry["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
        return entry
    parts: Counter = Counter()
    total = 0
    for name, p in model.named_parameters():  # a tied tensor is yielded once
        parts[".".join(name.split(".")[:-1][:3]) or name] += p.numel()
        total += p.numel()
        if dump is not None:
            dump.write(f"{model_type}{'+vlm' if vlm else ''} {name} {tuple(p.shape)}\n")
    entry.update(model_class=type(model).__name__, params=total, modules=dict(sorted(parts.items())),
                 config=json.loads(cfg.to_json_string(use_diff=False)))
    return entry


def main(argv: list[str] | None = None) -> int:
    import torch
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="these model types only (printed, not written unless --out)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--dump", type=Path, help="write every parameter's name and shape here (for development)")
    args = ap.parse_args(argv)
    todo = [(t, False) for t in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES] + [(t, True) for t in VLM_TYPES]
    if args.only:
        todo = [(t, v) for t, v in todo if t in args.only]
    dump = args.dump.open("w") if args.dump else None
    models = {}
    for model_type, vlm in todo:
        entry = record(model_type, vlm, dump)
        models[model_type + ("+vlm" if vlm else "")] = entry
        print(f"{model_type:32} {'vlm' if vlm else '   '} {entry.get('params', entry.get('error'))}", flush=True)
    out = args.out or (None if args.only else OUT)
    if out:
        doc = {"transformers": transformers.__version__, "torch": torch.__version__,
               "command": "python scripts/gen_param_counts.py", "models": models}
        out.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
        print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

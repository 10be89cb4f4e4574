"""Contradictions the frameworks themselves reject (SP414-SP428), on their own published example configs.

Each case takes a real axolotl or LLaMA-Factory example (tests/data/configs, copied byte for byte), makes the
one edit the framework's validator refuses, and checks the rule fires on that key's line; the published file
(or the edit undone) must stay clean. The validator each rule mirrors is cited in the rule's docs.why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from config_edits import append_lines, chain, replace_once

from seqprof.config.read import read_plan
from seqprof.lint.run import LintOptions, lint_paths

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
NEW_RULES = tuple(f"SP{n}" for n in range(414, 429))

AX_DPO = "axolotl/examples/qwen2/dpo.yaml"
AX_KTO = "axolotl/examples/llama-3/qlora-1b-kto.yaml"
AX_LORA = "axolotl/examples/llama-3/lora-1b.yml"
AX_QLORA = "axolotl/examples/llama-3/qlora.yml"
AX_LIGER = "axolotl/examples/llama-3/fft-8b-liger-fsdp.yaml"
AX_FLASH_FLAG = "axolotl/examples/qwen3/8b-lora-fused-attn.yaml"  # still uses the legacy `flash_attention: true`
AX_STREAM = "axolotl/examples/streaming/sft.yaml"
AX_EARLY_STOP = "axolotl/examples/phi/phi3-ft.yml"
LF_SFT = "llamafactory/examples/train_lora/qwen3_lora_sft.yaml"
LF_DPO = "llamafactory/examples/train_lora/qwen3_lora_dpo.yaml"








CASES = [
    # code, real config, the edit its framework refuses, the key the finding points at
    ("SP414", AX_DPO, replace_once("sample_packing: false", "sample_packing: true"), "sample_packing"),
    ("SP414", AX_KTO, replace_once("eval_sample_packing: false", "eval_sample_packing: true"), "eval_sample_packing"),
    ("SP415", AX_KTO, replace_once("remove_unused_columns: false", "remove_unused_columns: true"),
     "remove_unused_columns"),
    ("SP415", AX_KTO, replace_once("remove_unused_columns: false\n", ""), "rl"),
    ("SP416", AX_LORA, append_lines("batch_size: 16\n"), "batch_size"),
    # batch_size alone: 0.19 still refuses it (one of micro_batch_size / gradient_accumulation_steps alone it takes)
    ("SP416", AX_LORA, chain(replace_once("gradient_accumulation_steps: 2\n", ""),
                             replace_once("micro_batch_size: 2\n", ""), append_lines("batch_size: 16\n")), "batch_size"),
    ("SP417", AX_LORA, append_lines("save_steps: 100\n"), "save_steps"),
    ("SP418", AX_LORA, append_lines("eval_steps: 100\n"), "eval_steps"),
    ("SP418", AX_QLORA, replace_once("evals_per_epoch: 4", "eval_steps: 100"), "eval_steps"),  # val_set_size: 0
    ("SP419", AX_EARLY_STOP, replace_once("eval_steps: 1000", "eval_steps: 3000"), "early_stopping_patience"),
    ("SP420", AX_QLORA, replace_once("adapter: qlora", "adapter:"), "load_in_4bit"),
    ("SP420", LF_SFT, chain(replace_once("finetuning_type: lora", "finetuning_type: full"),
                            append_lines("quantization_bit: 4\n")), "quantization_bit"),
    ("SP421", AX_LIGER, append_lines("cut_cross_entropy: true\n"), "liger_fused_linear_cross_entropy"),
    ("SP422", AX_FLASH_FLAG, append_lines("attn_implementation: sdpa\n"), "flash_attention"),
    ("SP423", AX_LORA, chain(replace_once("gradient_checkpointing: true", "gradient_checkpointing: false"),
                             append_lines("activation_offloading: true\n")), "activation_offloading"),
    ("SP424", AX_STREAM, replace_once("max_steps: 1000\n", ""), "streaming"),
    ("SP424", LF_SFT, append_lines("streaming: true\n"), "streaming"),
    ("SP425", LF_DPO, append_lines("neat_packing: true\n"), "neat_packing"),
    ("SP426", LF_SFT, chain(replace_once("finetuning_type: lora", "finetuning_type: full"),
                            append_lines("use_dora: true\n")),
     "use_dora"),
    ("SP427", LF_DPO, replace_once("stage: dpo", "stage: ppo"), "stage"),
    ("SP428", LF_SFT, append_lines("eval_dataset: alpaca_en_demo\nval_size: 0.1\n"), "val_size"),
]


def lint(path: Path, *codes: str):
    return [f for f in lint_paths([str(path)], LintOptions(select=codes or NEW_RULES)).findings]


@pytest.mark.parametrize("code,source,breaks,key", CASES, ids=[f"{c[0]}-{Path(c[1]).stem}" for c in CASES])
def test_each_contradiction_on_a_real_config(code, source, breaks, key, tmp_path):
    original = (CONFIGS / source).read_text()
    config = tmp_path / Path(source).name
    config.write_text(breaks(original))
    hits = [f for f in lint(config) if f.code == code]
    assert hits, f"{code} did not fire on the edited {source}"
    lines = [n for n, text in enumerate(config.read_text().splitlines(), 1) if re.match(rf"{re.escape(key)}\s*:", text)]
    assert [(f.key, f.line) for f in hits] == [(key, lines[0])]  # found by plain text search, not by the reader
    assert hits[0].severity == "error" and hits[0].fix
    config.write_text(original)
    assert lint(config, code) == [], f"{code} fired on {source} as published, which its framework accepts"


def test_no_new_rule_fires_on_the_published_examples_but_one_the_framework_rejects():
    """Every axolotl/LLaMA-Factory example copied here passes the new rules, except the archived falcon config:
    axolotl v0.18.0's check_early_stopping rejects early_stopping_patience without save_steps/eval_steps."""
    paths = sorted(str(p) for d in ("axolotl", "llamafactory") for p in (CONFIGS / d).rglob("*.y*ml"))
    assert len(paths) >= 15
    found = {(f.code, Path(f.file).relative_to(CONFIGS).as_posix())
             for f in lint_paths(paths, LintOptions(select=NEW_RULES)).findings}
    assert found == {("SP419", "axolotl/examples/archived/falcon/config-7b-qlora.yml")}


def test_the_archived_falcon_config_is_fixed_by_step_schedules(tmp_path):
    source = CONFIGS / "axolotl/examples/archived/falcon/config-7b-qlora.yml"
    config = tmp_path / "falcon.yml"
    config.write_text(source.read_text().replace("evals_per_epoch: 4", "eval_steps: 50")
                      .replace("saves_per_epoch: 1", "save_steps: 200"))
    assert lint(config, "SP419") == []
    config.write_text(source.read_text().replace("evals_per_epoch: 4", "eval_steps: 60")
                      .replace("saves_per_epoch: 1", "save_steps: 200"))  # 200 % 60 != 0
    assert "does not divide save_steps 200" in lint(config, "SP419")[0].message


def test_a_legacy_attention_flag_fix_names_the_value_to_set(tmp_path):
    """axolotl maps `flash_attention: true` to `attn_implementation: flash_attention_2` (schemas/enums.py
    LEGACY_ATTN_FLAG_TO_IMPL); a flag that is false does nothing and is to be removed, not renamed."""
    config = tmp_path / "fused.yaml"
    config.write_text((CONFIGS / AX_FLASH_FLAG).read_text() + "sdp_attention: false\n")
    by_key = {f.key: f for f in lint(config, "SP402", "SP403")}
    assert (by_key["flash_attention"].code, by_key["flash_attention"].fix) == (
        "SP402", "replace 'flash_attention' with 'attn_implementation: flash_attention_2'")
    assert (by_key["sdp_attention"].code, by_key["sdp_attention"].fix) == ("SP403", "remove 'sdp_attention'")


def test_several_legacy_attention_flags_resolve_in_axolotls_order(tmp_path):
    """normalize_attn_implementation takes the first flag set in LEGACY_ATTN_FLAG_TO_IMPL's order, which puts
    the specific backends (xformers, sage, flex) before flash, sdp and eager (axolotl v0.18.0 schemas/enums.py)."""
    config = tmp_path / "two-flags.yaml"
    config.write_text((CONFIGS / AX_FLASH_FLAG).read_text() + "sage_attention: true\n")
    plan = read_plan(str(config))
    assert (plan.get("attn_implementation"), plan.setting("attn_implementation").key) == ("sage", "sage_attention")


LLAMAFACTORY_DUPLICATE = ("model_name_or_path: m\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
                          "dataset: alpaca_en_demo\nper_device_train_batch_size: 1\nper_device_train_batch_size: 1\n"
                          "learning_rate: 1.0e-4\nlearning_rate: 2.0e-4\n")


@pytest.mark.parametrize("loader, refused", [
    # llamafactory 0.9.3 hparams/parser.py read_args: yaml.safe_load, then OmegaConf.merge of the dict
    ("        dict_config = yaml.safe_load(Path(sys.argv[1]).absolute().read_text())\n", False),
    # 0.9.4 on: OmegaConf.load, whose loader raises "found duplicate key"
    ("        dict_config = OmegaConf.load(Path(sys.argv[1]).absolute())\n", True),
])
def test_llamafactory_refuses_a_duplicate_key_only_from_its_omegaconf_loader(tmp_path, loader, refused):
    """A config inside a copy of LLaMA-Factory is read by that copy's parser (LWL-cpu's vendored 0.9.3.dev0)."""
    (tmp_path / ".git").mkdir()
    parser = tmp_path / "LLaMA-Factory" / "src" / "llamafactory" / "hparams" / "parser.py"
    parser.parent.mkdir(parents=True)
    parser.write_text("def read_args(args=None):\n    if sys.argv[1].endswith('.yaml'):\n" + loader)
    config = tmp_path / "LLaMA-Factory" / "examples" / "x.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(LLAMAFACTORY_DUPLICATE)
    codes = sorted((f.line, f.code) for f in lint(config, "SP404", "SP432", "SP433"))
    assert codes == ([(7, "SP404"), (9, "SP404")] if refused else [(7, "SP432"), (9, "SP433")])
    unpinned = tmp_path / "elsewhere.yaml"  # outside the copy: a fresh install, 0.9.4 or newer
    unpinned.write_text(LLAMAFACTORY_DUPLICATE)
    assert {f.code for f in lint(unpinned, "SP404", "SP432", "SP433")} == {"SP404"}
    pinned = tmp_path / "pinned" / "x.yaml"
    pinned.parent.mkdir()
    (pinned.parent / "requirements.txt").write_text("llamafactory==0.9.3\n")
    pinned.write_text(LLAMAFACTORY_DUPLICATE)
    assert {f.code for f in lint(pinned, "SP404", "SP432", "SP433")} == {"SP432", "SP433"}


def test_a_held_out_share_nobody_evaluates_on(tmp_path):
    """SP442: LLaMA-Factory's example with its eval block half uncommented (val_size, not eval_strategy): the split is
    taken from the training rows whatever the evaluation settings (data/loader.py get_dataset -> split_dataset), and
    transformers' own TrainingArguments, built from the same evaluation keys, never evaluates."""
    import transformers

    original = (CONFIGS / LF_SFT).read_text()
    assert "# val_size: 0.1" in original and "# eval_strategy: steps" in original
    config = tmp_path / "qwen3_lora_sft.yaml"
    half = original.replace("# val_size: 0.1", "val_size: 0.1")
    for text, fires in ((half, True), (half.replace("# eval_strategy: steps", "eval_strategy: steps"), False),
                        (half.replace("# eval_strategy: steps", "eval_strategy: 'no'"), True),
                        (original, False)):
        config.write_text(text)
        hits = lint(config, "SP442")
        assert bool(hits) == fires, text
        plan = read_plan(config)
        keys = {k: plan.raw[k] for k in ("eval_strategy", "do_eval") if k in plan.raw}
        args = transformers.TrainingArguments(output_dir=str(tmp_path / "out"), **keys)
        evaluates = args.eval_strategy != "no" or args.do_eval  # what the Trainer and LLaMA-Factory's workflow check
        if "val_size: 0.1" in text.splitlines():
            assert fires == (not evaluates)
        if fires:
            assert hits[0].line == text.splitlines().index("val_size: 0.1") + 1 and "10.0% of the rows" in hits[0].message


OTELE2E = Path(__file__).resolve().parent / "data" / "corpus" / "MoebiusX__OtelE2E" / "axolotl-config.yaml"


def test_a_completion_dataset_naming_columns_it_never_reads(tmp_path):
    """SP443: MoebiusX/OtelE2E's axolotl config gives `type: completion` instruction/output column names, which only
    a user-defined `type:` mapping reads (prompt_strategies/user_defined.py); completion tokenizes `field` alone."""
    original = OTELE2E.read_text()
    entry = "    type: completion\n    field_instruction: instruction\n    field_output: output\n"
    assert entry in original
    config = tmp_path / "axolotl-config.yaml"
    mapping = ("    type:\n      field_instruction: instruction\n      field_output: output\n"
               "      format: '{instruction}'\n      no_input_format: '{instruction}'\n")
    for text, fires in ((original, True), (original.replace(entry, "    type: completion\n    field: output\n"), False),
                        (original.replace(entry, mapping), False),
                        (original.replace(entry, entry + "    field: output\n"), True)):
        config.write_text(text)
        hits = lint(config, "SP443")
        assert bool(hits) == fires, text
        if fires:
            assert hits[0].line == text.splitlines().index("    field_instruction: instruction") + 1
            assert "field_instruction, field_output" in hits[0].message
            assert ("'output'" if "field: output" in text else "'text'") in hits[0].message


PGT_EVAL = Path(__file__).resolve().parent / "data" / "corpus" / "HYDxGenius__PGTdissertation" / \
    "LLaMA-Factory__saves__LLaMA3-8B-Chat__lora__eval_3e5_enron__training_args.yaml"


@pytest.mark.parametrize("requirements, fires", [
    (None, "llamafactory 0.9.5, which a fresh install gets"),
    ("llamafactory==0.9.1\n", "llamafactory==0.9.1 (requirements.txt:1)"),
    ("llamafactory==0.8.1\n", None),  # 0.8.3 added eval_dataset and the check: `dataset` served both before
    ("llamafactory>=0.8.0\n", None),  # a range reaching back before 0.8.3 claims nothing
])
def test_evaluation_with_nothing_to_evaluate_on(tmp_path, requirements, fires):
    """SP444: HYDxGenius/PGTdissertation's saved prediction run (do_predict, dataset, no eval_dataset, no val_size):
    LLaMA-Factory's get_train_args raises before loading anything from 0.8.3 on (hparams/parser.py)."""
    (tmp_path / ".git").mkdir()
    if requirements is not None:
        (tmp_path / "requirements.txt").write_text(requirements)
    config = tmp_path / "training_args.yaml"
    text = PGT_EVAL.read_text()
    config.write_text(text)
    hits = lint(config, "SP444")
    assert [h.line for h in hits] == ([text.splitlines().index("do_predict: true") + 1] if fires else [])
    if fires:
        assert fires in hits[0].message
    config.write_text(text.replace("dataset: enron_test\n", "dataset: enron_test\neval_dataset: enron_test\n"))
    assert lint(config, "SP444") == []


def test_evaluation_without_data_follows_the_project_s_own_copy(tmp_path):
    """A repository carrying its own LLaMA-Factory (chrisindris/LLaMA-Factory-LFS, 0.9.4.dev0) is judged by that
    copy's hparams/parser.py, whatever the pins: the check there refuses; with it removed nothing is said."""
    corpus = Path(__file__).resolve().parent / "data" / "corpus" / "chrisindris__LLaMA-Factory-LFS"
    (tmp_path / ".git").mkdir()
    hparams = tmp_path / "src" / "llamafactory" / "hparams"
    hparams.mkdir(parents=True)
    for name in ("parser.py", "finetuning_args.py"):
        (hparams / name).write_text((corpus / f"src__llamafactory__hparams__{name}").read_text())
    (tmp_path / "requirements.txt").write_text("llamafactory==0.8.1\n")
    config = tmp_path / "training_args.yaml"
    config.write_text(PGT_EVAL.read_text())
    assert "own LLaMA-Factory copy" in lint(config, "SP444")[0].message
    parser = (hparams / "parser.py").read_text()
    assert "data_args.eval_dataset is None and data_args.val_size < 1e-6" in parser
    (hparams / "parser.py").write_text(parser.replace("data_args.eval_dataset is None and", "False and"))
    other = tmp_path / "other.yaml"  # a new path: the copy's text is read per config
    other.write_text(PGT_EVAL.read_text())
    assert lint(other, "SP444") == []


ROBOG = Path(__file__).resolve().parent / "data" / "corpus" / "nilsblank__LLaMA-Factory-RoboG-v2" / \
    "examples__train_full__qwen2_5vl_roboG_poc_two_frames_det_cotrain_lora.yaml"


def test_a_prediction_run_that_does_not_generate(tmp_path):
    """SP445: nilsblank/LLaMA-Factory-RoboG-v2's co-training config sets do_predict: true beside
    predict_with_generate: false at stage sft, which get_train_args refuses in every release (0.7.1 to 0.9.5)."""
    text = ROBOG.read_text()
    assert "predict_with_generate: false" in text and "do_predict: true" in text
    config = tmp_path / "robog.yaml"
    config.write_text(text)
    hits = lint(config, "SP445")
    assert [h.line for h in hits] == [text.splitlines().index("do_predict: true") + 1]
    config.write_text(text.replace("predict_with_generate: false", "predict_with_generate: true"))
    assert lint(config, "SP445") == []

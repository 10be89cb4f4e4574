"""Readings settled in stop 57, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from seqprof.lint.run import LintOptions, lint_paths

ROOT = Path(__file__).resolve().parents[1]
THUANNAN = "ThuanNaN__RLHF-Native-Hugging-Face"
EPMRESEARCH = "epmresearch__vlm-safety-reasoning"


def _fresh(tmp_path, folder):
    """A fresh layout of one corpus repository: seqprof caches what it reads of a project per path, so each variant
    of a test's files is laid out anew rather than edited in place."""
    from corpus_layout import lay_out

    return lay_out(tmp_path / f"v{len(list(tmp_path.iterdir())) if tmp_path.exists() else 0}", only=folder)


def _findings(config, code=None):
    found = lint_paths([config], LintOptions()).files[0].findings
    return [f for f in found if code is None or f.code == code]


def test_a_keyword_a_script_hands_sfttrainer_is_judged_by_the_trainers_constructor(tmp_path):
    """ThuanNaN's src/sft/train_sft.py builds `SFTTrainer(..., max_seq_length=cfg.get("max_seq_length", 1024))` from
    configs/sft.yaml. TRL 0.13 took max_seq_length out of SFTTrainer.__init__ (SFTConfig carries it), so under
    trl>=0.11.0 a fresh install raises TypeError there: SP408, citing the call. Pinned to trl 0.12.2, which still takes
    it, it is a warning about that upgrade; without the keyword in the call, nothing."""
    tree = _fresh(tmp_path, THUANNAN)
    config = tree / f"{THUANNAN}/configs__sft.yaml"
    found = [f for f in _findings(config) if f.key == "max_seq_length"]
    assert [(f.code, f.severity) for f in found] == [("SP408", "error")]
    assert "SFTTrainer (src/sft/train_sft.py:61)" in found[0].message and "removed in trl 0.13" in found[0].message
    assert "SFTConfig(...) as 'max_length'" in found[0].message and "out of that call" in found[0].fix

    tree = _fresh(tmp_path, THUANNAN)
    requirements = tree / f"{THUANNAN}/requirements.txt"
    requirements.write_text(requirements.read_text().replace("trl>=0.11.0", "trl==0.12.2"))
    found = [f for f in _findings(tree / f"{THUANNAN}/configs__sft.yaml") if f.key == "max_seq_length"]
    assert [(f.code, f.severity) for f in found] == [("SP403", "warning")]
    assert "after the pinned one" in found[0].message

    tree = _fresh(tmp_path, THUANNAN)
    script = tree / f"{THUANNAN}/src__sft__train_sft.py"
    script.write_text(script.read_text().replace('max_seq_length=cfg.get("max_seq_length", 1024),', ""))
    assert not [f for f in _findings(tree / f"{THUANNAN}/configs__sft.yaml") if f.key == "max_seq_length"]


def test_a_mapping_spread_into_a_trainer_hands_it_every_entry_unless_unsloth_moves_them(tmp_path):
    """epmresearch's models/sft_trainer.py writes `"max_seq_length": sft_cfg.get("max_seq_length", 2048)` and
    `"args": training_args` into trainer_kwargs and calls `TrainerClass(**trainer_kwargs)`, TrainerClass being trl's
    SFTTrainer. The project imports unsloth, whose import patches every TRL trainer (_backwards_compatible_trainer,
    unsloth 2026.10.9 trainer.py): with `args` given, the old keywords move into the config, max_seq_length as
    max_length, and the call runs. So nothing is said; with no unsloth import in the project, the keyword reaches
    SFTTrainer itself, which TRL 0.13 stopped taking: SP408 at the dict entry."""
    tree = _fresh(tmp_path, EPMRESEARCH)
    script = tree / f"{EPMRESEARCH}/models__sft_trainer.py"
    assert '"args": training_args' in script.read_text()
    assert not [f for f in _findings(tree / f"{EPMRESEARCH}/configs__sft.yaml") if f.key == "max_seq_length"]

    tree = _fresh(tmp_path, EPMRESEARCH)
    for file in (tree / f"{EPMRESEARCH}/models__sft_trainer.py").parents[1].rglob("*.py"):  # the checkout's
        file.write_text("\n".join(line for line in file.read_text().splitlines()
                                  if not line.lstrip().startswith(("import unsloth", "from unsloth"))) + "\n")
    found = [f for f in _findings(tree / f"{EPMRESEARCH}/configs__sft.yaml") if f.key == "max_seq_length"]
    assert [(f.code, f.severity) for f in found] == [("SP408", "error")]
    assert "to SFTTrainer (models/sft_trainer.py:" in found[0].message  # the entry's line, one import line less


def test_the_trainer_keyword_table_is_what_the_released_wheels_declare(tmp_path):
    """keys/trl_trainer_kwargs.json is scripts/gen_trainer_kwargs.py's reading of the released wheels: rebuilt from
    trl 0.12.2 and 0.13.0 (downloaded here; skipped only where the registry cannot be reached), SFTTrainer's and
    DPOTrainer's keywords are the table's at those releases, and 0.12.2's deprecate_kwarg("tokenizer",
    new_name="processing_class") keeps `tokenizer` a keyword there. scripts/verify_trainer_kwargs.py checks the table
    against the real constructors of an installed trl (no TypeError where it says taken, one where it says gone)."""
    wheels = tmp_path / "wheels"
    for version in ("0.12.2", "0.13.0"):
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
                               f"trl=={version}", "-d", str(wheels)], capture_output=True, timeout=300)
        if done.returncode:
            pytest.skip(f"trl {version} could not be downloaded: {done.stderr.decode()[-200:]}")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from gen_trainer_kwargs import trainer_kwargs
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    table = json.loads((ROOT / "seqprof/config/dialects/keys/trl_trainer_kwargs.json").read_text())
    order = table["versions"]

    def at(cls, version):
        index = order.index(version)
        return {key for key, spans in table["classes"][cls]["fields"].items()
                if any(order.index(a) <= index and (b is None or index < order.index(b)) for a, b in spans)}

    for version in ("0.12.2", "0.13.0"):
        read = trainer_kwargs(next(wheels.glob(f"trl-{version}-*.whl")))
        for cls in ("SFTTrainer", "DPOTrainer"):
            assert read[cls] == at(cls, version), (cls, version)
    assert {"max_seq_length", "packing", "dataset_text_field", "tokenizer"} <= at("SFTTrainer", "0.12.2")
    assert not {"max_seq_length", "packing", "dataset_text_field"} & at("SFTTrainer", "0.13.0")
    assert "beta" in at("DPOTrainer", "0.12.2") and "beta" not in at("DPOTrainer", "0.13.0")


DNPO = "lhkhiem28__DNPO"


def test_an_empty_removed_key_still_stops_trlparser(tmp_path):
    """lhkhiem28/DNPO's DPO recipes write `torch_dtype: null`. TrlParser turns every key no dataclass declares into
    "Unknown arguments from config file" whatever its value (trl 1.16 scripts/utils.py set_defaults_with_config),
    and no pin keeps a trl whose ModelConfig still has torch_dtype: the key is reported as on the SFT recipes. Where
    a pinned trl still takes the old name (0.26.2), an empty old key does nothing and nothing is said."""
    name = f"{DNPO}/recipes__zephyr-7b-beta__dpo__config_iter1.yaml"
    config = _fresh(tmp_path, DNPO) / name
    assert "torch_dtype: null" in config.read_text()
    assert [f.code for f in _findings(config) if f.key == "torch_dtype"] == ["SP403"]
    tree = _fresh(tmp_path, DNPO)
    ((tree / f"{DNPO}/README.md").parent / "requirements.txt").write_text("trl==0.26.2\n")
    assert not [f for f in _findings(tree / name) if f.key == "torch_dtype"]


SOLIDITY = "antojoseph__solidity-vuln-detect"


def test_a_command_a_shell_script_echoes_runs_nothing(tmp_path):
    """antojoseph/solidity-vuln-detect's setup_remote.sh ends with `echo "  2. SFT:  python3 -m trl sft --config
    training.yaml ..."`: a hint it prints, not a launch. The file is the project's own schema (model, lora, sft
    sections run_sft.py reads), so no framework's checks run. Run on its own line, the command does make it TRL's."""
    config = _fresh(tmp_path, SOLIDITY) / f"{SOLIDITY}/training.yaml"
    assert lint_paths([config], LintOptions()).files[0].dialect == "unknown"
    tree = _fresh(tmp_path, SOLIDITY)
    setup = tree / f"{SOLIDITY}/setup_remote.sh"
    setup.write_text(setup.read_text() + "\npython3 -m trl sft --config training.yaml\n")
    assert lint_paths([tree / f"{SOLIDITY}/training.yaml"], LintOptions()).files[0].dialect == "trl"


EASYAI = "Xavier-123__easyai-llamafactory"


def test_keys_the_code_writes_into_a_dict_are_not_read_by_it(tmp_path):
    """Xavier-123/easyai-llamafactory's tools/env_vars.py fills the arguments it hands llamafactory-cli
    (`train_args["template"] = ...`, `export_args["export_dir"] = ...`): it writes those keys, it does not read a
    file of them, so tmp/quantization/gptq.yaml (model_name_or_path, template, export_*) is LLaMA-Factory's export
    file. Where the code reads them back out of a loaded mapping, the file is the project's own."""
    config = _fresh(tmp_path, EASYAI) / f"{EASYAI}/tmp__quantization__gptq.yaml"
    report = lint_paths([config], LintOptions()).files[0]
    assert (report.dialect, report.facts.plan.setting("trainer")) == ("llamafactory", None)
    tree = _fresh(tmp_path, EASYAI)
    config = tree / f"{EASYAI}/tmp__quantization__gptq.yaml"
    script = tree / f"{EASYAI}/tools__env_vars.py"
    keys = [k.split(":")[0] for k in config.read_text().splitlines() if k and k[0].isalpha()]
    script.write_text(script.read_text() + "\ncfg = {}\n" + "".join(f'print(cfg["{k}"])\n' for k in keys))
    assert lint_paths([config], LintOptions()).files[0].dialect == "unknown"


PENTAGI = "kurniarahmattt__fine-tune-pentagi"


def test_a_datasets_chat_template_that_names_no_template_stops_axolotls_data_loading(tmp_path):
    """kurniarahmattt/fine-tune-pentagi's datasets[0] writes the Jinja text itself as chat_template. axolotl's
    dataset schema types it `ChatTemplate | str`, so validation passes, and get_chat_template then raises "Template
    '...' not found" (axolotl 0.19 utils/chat_templates/base.py). SP406, saying where the text goes; `chatml`, or
    `jinja` with the text under chat_template_jinja, pass."""
    yaml = pytest.importorskip("yaml")
    config = _fresh(tmp_path, PENTAGI) / f"{PENTAGI}/config__qwen3_config.yml"
    found = [f for f in _findings(config, "SP406") if f.key == "datasets.0.chat_template"]
    assert len(found) == 1 and "a Jinja template" in found[0].message and "chat_template_jinja" in found[0].fix
    data = yaml.safe_load(config.read_text())
    jinja = data["datasets"][0]["chat_template"]
    for entry in ({"chat_template": "chatml"}, {"chat_template": "jinja", "chat_template_jinja": jinja}):
        config = _fresh(tmp_path, PENTAGI) / f"{PENTAGI}/config__qwen3_config.yml"
        data["datasets"][0].update(entry)
        config.write_text(yaml.safe_dump(data))
        assert not [f for f in _findings(config, "SP406") if f.key == "datasets.0.chat_template"]

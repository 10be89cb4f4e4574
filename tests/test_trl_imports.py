"""Names a project's script imports from `trl` that the release it runs with does not export (SP440 / SP441,
seqprof.config.trl_imports, keys/trl_exports.json from scripts/gen_trl_exports.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from seqprof.config.read import read_plan
from seqprof.config.trl_imports import _exports

KEYS = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys"

ORPO_SCRIPT = ("from trl import ModelConfig, ORPOConfig, ORPOTrainer, ScriptArguments, TrlParser\n\n"
               "parser = TrlParser((ScriptArguments, ORPOConfig, ModelConfig))\ntrainer = ORPOTrainer(model=None)\n")
RECIPE = "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/ultrafeedback_binarized\n" \
         "beta: 0.1\nmax_length: 1024\nlearning_rate: 8.0e-6\n"


def test_the_exports_agree_with_where_importing_trl_1_16_found_each_config_class():
    """keys/trl_configs.json was made by importing trl 1.16's classes: those it had to take from trl.experimental
    (ORPOConfig, CPOConfig, OnlineDPOConfig, GKDConfig) are the ones the wheel's trl/__init__.py, parsed, no longer
    exports; every class it found on `trl` itself is exported."""
    configs = json.loads((KEYS / "trl_configs.json").read_text())
    assert configs["version"] == "1.16.0"
    elsewhere = set(re.findall(r"(\w+) from trl\.(?:experimental|scripts)\.", configs["source"]))
    exports = _exports()
    newest = json.loads((KEYS / "trl_exports.json").read_text())["versions"][-1]
    assert newest == "1.16.0" and {"ORPOConfig", "CPOConfig", "OnlineDPOConfig", "GKDConfig"} <= elsewhere
    for cls in configs["classes"]:
        if cls == "cli" or cls in ("GRPOScriptArguments", "RLOOScriptArguments"):
            continue
        assert (newest in exports.get(cls, set())) == (cls not in elsewhere), cls
    assert "0.28.0" in exports["ORPOConfig"] and "0.29.1" not in exports["ORPOConfig"]


def _project(root: Path, script: str, pins: str | None, launch: bool = True) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "scripts").mkdir()
    (root / "scripts" / "run_orpo.py").write_text(script)
    if pins is not None:
        (root / "requirements.txt").write_text(pins)
    if launch:
        (root / "run.sh").write_text("accelerate launch scripts/run_orpo.py recipes/orpo/config.yaml\n")
    (root / "recipes" / "orpo").mkdir(parents=True)
    (root / "recipes" / "orpo" / "config.yaml").write_text(RECIPE)
    return root / "recipes" / "orpo" / "config.yaml"


def _found(plan) -> dict[str, tuple[str, int, str]]:
    return {d.key: (d.kind, d.line, d.message) for d in plan.diagnostics if d.kind.startswith("unimportable_name")}


def test_an_open_range_is_judged_at_the_release_pip_installs(tmp_path):
    """alignment-handbook forks: `trl>=0.9.6` installs 1.16, which has no ORPOConfig; trl<0.29 keeps it."""
    found = _found(read_plan(_project(tmp_path / "open", ORPO_SCRIPT, "trl>=0.9.6\n")))
    assert set(found) == {"ORPOConfig"} and found["ORPOConfig"][:2] == ("unimportable_name", 1)
    assert "ORPOConfig, ORPOTrainer" in found["ORPOConfig"][2] and "stopped exporting it in 0.29" in found["ORPOConfig"][2]
    assert _found(read_plan(_project(tmp_path / "capped", ORPO_SCRIPT, "trl>=0.9.6,<0.29\n"))) == {}
    unpinned = _found(read_plan(_project(tmp_path / "unpinned", ORPO_SCRIPT, None)))
    assert unpinned["ORPOConfig"][0] == "unimportable_name_assumed" and "assuming trl 1.16" in unpinned["ORPOConfig"][2]


def test_a_name_not_yet_exported_at_the_pin_is_reported_too(tmp_path):
    """GRPOConfig came in trl 0.14: a script importing it under trl==0.13.0 stops at the import."""
    script = "from trl import GRPOConfig, GRPOTrainer, ModelConfig, TrlParser\n\n" \
             "parser = TrlParser((GRPOConfig, ModelConfig))\ntrainer = GRPOTrainer(model=None)\n"
    found = _found(read_plan(_project(tmp_path, script, "trl==0.13.0\n")))
    assert "GRPOConfig" in found and "only from 0.14" in found["GRPOConfig"][2]


def test_a_guarded_import_a_vendored_trl_or_an_unlinked_script_is_no_finding(tmp_path):
    guarded = "try:\n    from trl import ORPOConfig, ORPOTrainer\nexcept ImportError:\n" \
              "    from trl.experimental.orpo import ORPOConfig, ORPOTrainer\nfrom trl import ModelConfig, TrlParser\n\n" \
              "parser = TrlParser((ORPOConfig, ModelConfig))\n"
    assert _found(read_plan(_project(tmp_path / "guarded", guarded, "trl>=0.9.6\n"))) == {}
    vendored = _project(tmp_path / "vendored", ORPO_SCRIPT, "trl>=0.9.6\n")
    (tmp_path / "vendored" / "src" / "trl").mkdir(parents=True)
    (tmp_path / "vendored" / "src" / "trl" / "__init__.py").write_text("__version__ = '0.19.0'\n")
    assert _found(read_plan(vendored)) == {}
    # no launch line: the script that parses the recipe into the project's classes and builds its trainer runs
    # it; one building another trainer (an SFT script naming the same classes) does not
    own = ORPO_SCRIPT.replace("ScriptArguments, TrlParser\n", "TrlParser\n\nfrom configs import ScriptArguments\n")
    sft = own.replace("ORPOTrainer(model=None)", "SFTTrainer(model=None)").replace(
        "ORPOTrainer, TrlParser", "ORPOTrainer, SFTTrainer, TrlParser")
    for name, script, expected in (("orpo", own, {"ORPOConfig"}), ("sft", sft, set())):
        config = _project(tmp_path / name, script, "trl>=0.9.6\n", launch=False)
        (tmp_path / name / "scripts" / "configs.py").write_text(
            "from dataclasses import dataclass\n\nimport trl\n\n\n@dataclass\n"
            "class ScriptArguments(trl.ScriptArguments):\n    dataset_mixer: dict = None\n")
        config.write_text(RECIPE + "dataset_mixer:\n  trl-lib/ultrafeedback_binarized: 1.0\n")
        assert set(_found(read_plan(config))) == expected, name

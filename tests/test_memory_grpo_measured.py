"""GRPO held to TRL's real GRPOTrainer on an H200, and `seqprof memory` on a real open-r1 GRPO recipe.

benchmarks/memory/measured_h200_issue14_grpo.json: trl 1.16.0, transformers 5.17, sdpa, random-init Qwen3 models,
predicted at its recorded commit before the run (harness_grpo.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from seqprof.cli import main
from seqprof.predict.memory import estimate_memory

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "memory"
sys.path.insert(0, str(BENCH))
from scenarios import by_name  # noqa: E402

RUN = json.loads((BENCH / "measured_h200_issue14_grpo.json").read_text())
RECIPE = (Path(__file__).parent / "data" / "corpus" / "huggingface__open-r1" /
          "recipes__Qwen2.5-1.5B-Instruct__grpo__config_demo.yaml")  # open-r1's own GRPO demo recipe
QWEN25 = BENCH / "configs" / "qwen2.5-1.5b.json"


@pytest.mark.parametrize("result", RUN["results"], ids=lambda r: r["name"])
def test_grpo_peak_within_5_percent_of_trl_on_the_h200(result):
    sc = by_name(result["name"])
    est = estimate_memory(sc.architecture(), sc.setup)
    assert abs(est.allocated_bytes - result["max_allocated"]) <= 0.05 * result["max_allocated"]
    assert abs(result["predicted_at_run"] - result["max_allocated"]) <= 0.05 * result["max_allocated"]
    assert est.totals["trainable_params"] == result["trainable_params"]


def _memory_json(config: Path, *extra: str):
    return CliRunner().invoke(main, ["memory", str(config), "--model-config", str(QWEN25), "--format", "json", *extra])


def test_a_grpo_recipe_is_estimated_with_its_prompt_and_completion_lengths(tmp_path):
    import shutil

    checkout = tmp_path / "open-r1"  # its own repository: not this one, whose corpus holds other projects' scripts
    shutil.copytree(RECIPE.parent, checkout)
    (checkout / ".git").mkdir()
    text = RECIPE.read_text()
    out = _memory_json(checkout / RECIPE.name)
    assert out.exit_code == 0, out.output
    prompt = int(next(line.split(":")[1] for line in text.splitlines() if line.startswith("max_prompt_length:")))
    completion = int(next(line.split(":")[1] for line in text.splitlines()
                          if line.startswith("max_completion_length:")))
    assert json.loads(out.stdout)["setup"]["seq_len"] == prompt + completion
    bare = tmp_path / "grpo.yaml"  # as TRL 1.x writes it: no max_prompt_length
    bare.write_text("\n".join(line for line in text.splitlines() if not line.startswith("max_prompt_length:")))
    refused = _memory_json(bare)
    assert refused.exit_code == 2 and "--prompt-length" in refused.output and "Traceback" not in refused.output
    given = _memory_json(bare, "--prompt-length", "300")
    assert given.exit_code == 0 and json.loads(given.stdout)["setup"]["seq_len"] == 300 + completion

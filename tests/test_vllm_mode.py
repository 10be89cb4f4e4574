"""vLLM server settings that TRL 1.0's colocate default leaves unread (SP461), on HuiResearch/ReasoningIE's GRPO
recipe: use_vllm with vllm_server_host / vllm_server_port and no vllm_mode, in a project that pins no trl. TRL 0.18 to
0.29 defaulted vllm_mode to "server" and 1.0 on to "colocate" (grpo_config.py), so the finding follows the release
the pins install, and goes where the mode is stated in the file, on the launch line, or in the project's code."""

from __future__ import annotations

from pathlib import Path

import pytest

from seqprof.lint.run import LintOptions, lint_paths

FOLDER = "HuiResearch__ReasoningIE"
NAME = f"{FOLDER}/config__grpo__qwen3-1.7b.yaml"


def _unread(path: Path, versions: str | None = None) -> list[str]:
    report = lint_paths([path], LintOptions(versions=versions)).files[0]
    return [f.key for f in report.findings if f.code == "SP461"]


def test_server_keys_without_a_mode_are_unread_on_a_fresh_install(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=FOLDER) / NAME
    assert _unread(config) == ["vllm_server_host"]
    assert _unread(config, "trl==1.0.0,transformers==4.57.1") == ["vllm_server_host"]


@pytest.mark.parametrize("versions", ["trl==0.29.0,transformers==4.57.1", "trl==0.19.1,transformers==4.53.0"])
def test_releases_that_default_to_server_mode_read_them(tmp_path, versions):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=FOLDER) / NAME
    assert _unread(config, versions) == []


def test_a_stated_mode_is_not_judged(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=FOLDER) / NAME
    config.write_text(config.read_text().replace("use_vllm: true", "use_vllm: true\nvllm_mode: server", 1))
    assert "vllm_mode: server" in config.read_text()
    assert _unread(config) == []


def test_a_mode_the_launch_line_passes_is_not_judged(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=FOLDER) / NAME
    launcher = config.parent / "train_grpo.sh"
    launcher.write_text("accelerate launch grpo.py --config config/grpo/qwen3-1.7b.yaml --num_generations 8\n")
    assert _unread(config) == ["vllm_server_host"]
    launcher.write_text("accelerate launch grpo.py --config config/grpo/qwen3-1.7b.yaml --vllm_mode server\n")
    assert _unread(config) == []

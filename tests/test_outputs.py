"""No output ever replaces an input, a link's target, a device, or leaves a temp file (issue 11's data loss)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from seqprof.cli import main
from seqprof.dataset.analyze import default_dataset_path

REPO = Path(__file__).resolve().parents[1]
STORY = REPO / "tests" / "data" / "configs" / "auto-antislop" / "configs" / "gemma-3-4b-it.yaml"


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.jsonl"
    shutil.copy(default_dataset_path(), path)
    return path


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _one_error(result, *words):
    lines = [line for line in result.stderr.splitlines() if line.startswith("seqprof: error")]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert "Traceback" not in result.output
    for word in words:
        assert word in lines[0]


@pytest.mark.parametrize("option", ["-o", "--html"])
def test_an_output_that_is_the_dataset_is_refused_and_the_dataset_kept(data, option):
    before = data.read_bytes()
    _one_error(_run("analyze", data, option, data), "input of this run")
    assert data.read_bytes() == before


def test_the_same_path_for_both_outputs_is_refused(data, tmp_path):
    out = tmp_path / "x.out"
    _one_error(_run("analyze", data, "-o", out, "--html", out), "same file")
    assert not out.exists()


def test_an_output_that_is_the_tokenizer_or_template_is_refused(data, tmp_path):
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    _one_error(_run("analyze", data, "--chat-template", template, "--html", template), "input")
    assert template.read_text().startswith("{% for")


def test_lint_html_over_its_config_profile_or_settings_is_refused(data, tmp_path):
    config = tmp_path / "train.yaml"
    shutil.copy(STORY, config)
    profile = tmp_path / "p.json"
    assert _run("analyze", data, "-o", profile).exit_code == 0
    (tmp_path / ".seqprof.yaml").write_text("ignore: [SP101]\n")
    for target in (config, profile, tmp_path / ".seqprof.yaml"):
        before = target.read_bytes()
        _one_error(_run("lint", config, "--profile", profile, "--html", target), "input of this run")
        assert target.read_bytes() == before


def test_a_link_at_the_output_is_refused_and_its_target_untouched(data, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    link = tmp_path / "out.json"
    link.symlink_to(victim)
    _one_error(_run("analyze", data, "-o", link), "symbolic link")
    assert victim.read_text() == "keep me" and link.is_symlink()


def test_a_link_planted_at_the_old_temp_name_is_not_followed(data, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / "out.json.tmp").symlink_to(victim)
    assert _run("analyze", data, "-o", tmp_path / "out.json").exit_code == 0
    assert victim.read_text() == "keep me"
    assert (tmp_path / "out.json").read_text().startswith("{")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.json.")]


def test_dev_null_stays_a_device(data):
    assert _run("analyze", data, "-o", os.devnull).exit_code == 0
    assert Path(os.devnull).is_char_device()


def test_a_fifo_or_directory_output_is_refused_without_waiting(data, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    _one_error(_run("analyze", data, "-o", fifo), "FIFO")
    result = _run("analyze", data, "--html", tmp_path)  # click's own path check says so
    assert result.exit_code == 2 and "is a directory" in result.output and "Traceback" not in result.output


def test_a_failed_write_leaves_no_temp_file_and_no_output(data, tmp_path, monkeypatch):
    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    _one_error(_run("analyze", data, "-o", tmp_path / "p.json"), "No space left")
    assert not (tmp_path / "p.json").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def _default_sigint() -> None:
    """A shell starts background jobs with SIGINT ignored, and Python keeps it so: give the child the default, so
    the test does not depend on how pytest itself was started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_sigint_exits_130_and_sigterm_143_with_nothing_left_behind(tmp_path):
    big = tmp_path / "big.jsonl"
    text = default_dataset_path().read_text()
    big.write_text(text * 60)
    out = tmp_path / "out"
    out.mkdir()
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        env = {**os.environ, "SEQPROF_NO_CACHE": "1"}
        proc = subprocess.Popen([sys.executable, "-m", "seqprof", "analyze", str(big), "-o", str(out / "p.json"),
                                 "--html", str(out / "r.html")], stderr=subprocess.PIPE, text=True, env=env,
                                preexec_fn=_default_sigint)
        time.sleep(2.5)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == code, err
        assert "Traceback" not in err
        assert list(out.iterdir()) == []

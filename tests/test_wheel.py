"""The wheel a user installs carries the rule pack, the report templates and the embedded dataset."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_wheel_ships_rules_reports_and_default_dataset(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = next(tmp_path.glob("seqprof-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    rules = {p.name for p in (REPO / "rules").glob("SP*.yaml")}
    assert rules and {f"seqprof/rules/{n}" for n in rules} <= names
    templates = {p.name for p in (REPO / "reports").glob("*.j2")}
    assert templates and {f"seqprof/reports/{n}" for n in templates} <= names
    assert "seqprof/assets/python_docs_chat.jsonl" in names
    assert any(n.startswith("seqprof/config/dialects/keys/") for n in names)
    assert "seqprof/predict/calibrations/h200.json" in names  # the measured H200 step-time calibration

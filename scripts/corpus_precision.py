"""Per-rule precision of lint's warnings and errors on the judged corpus (tests/data/corpus), and its dialects.

    .venv/bin/python scripts/corpus_precision.py                          # the whole corpus, this checkout's lint
    .venv/bin/python scripts/corpus_precision.py --repos A__x,B__y        # only these corpus folders (a batch)
    git archive b80868a seqprof rules | tar -x -C /tmp/old               # a batch's first contact: an older lint,
    PYTHONPATH=/tmp/old .venv/bin/python scripts/corpus_precision.py --repos ...   # the same judged verdicts
    .venv/bin/python scripts/corpus_precision.py --corpus /tmp/batch --skeleton /tmp/batch/found.json
                                                  # a new batch staged as the corpus is: its findings, to judge

The corpus is laid out outside the repository first, each file at its path in its repository
(tests/corpus_layout.py, as tests/test_real_configs.py does), so each config sees its own project's pin files and
code, not seqprof's. A finding without a verdict is counted as unjudged.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "corpus"


def main(argv: list[str] | None = None) -> int:
    from seqprof.lint.run import LintOptions, lint_paths

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos", default="", help="comma-separated corpus folders (owner__repo); default: all")
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="a folder laid out as tests/data/corpus")
    ap.add_argument("--skeleton", type=Path, help="write every config's dialect, trainer and findings here, "
                    "in judged.json's shape with empty verdicts, for a new batch to be judged")
    args = ap.parse_args(argv)
    wanted = {r for r in args.repos.split(",") if r}
    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, str(CORPUS.parents[1]))  # tests/corpus_layout.py, as the corpus test lays it out
        from corpus_layout import lay_out

        tree = lay_out(Path(tmp), args.corpus)
        judged_file = args.corpus / "judged.json"
        judged = json.loads(judged_file.read_text()) if judged_file.exists() else {}
        if args.skeleton:
            judged = {**_configs(args.corpus), **judged}
        found: dict[str, dict] = {}
        counts: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
        pairs = [0, 0]
        for name, j in sorted(judged.items()):
            if "error" in j or (wanted and name.split("/")[0] not in wanted):
                continue
            result = lint_paths([tree / name], LintOptions())
            if result.errors:
                print(f"error: {name}: {result.errors[0]}", file=sys.stderr)
                continue
            report = result.files[0]
            trainer = report.facts.plan.setting("trainer") if report.facts is not None else None
            pairs[0] += (report.dialect, trainer.value if trainer else None) == (j["dialect"], j["trainer"])
            pairs[1] += 1
            verdicts = {(f["code"], f["key"], f["line"]): f["verdict"] for f in j["findings"]}
            found[name] = {"dialect": report.dialect, "trainer": trainer.value if trainer else None,
                           "dialect_why": None, "findings": [
                               {"code": f.code, "key": f.key, "line": f.line, "severity": f.severity,
                                "message": f.message, "verdict": verdicts.get((f.code, f.key, f.line)), "why": None}
                               for f in report.findings if f.severity in ("warning", "error")]}
            for f in report.findings:
                if f.severity in ("warning", "error"):
                    verdict = verdicts.get((f.code, f.key, f.line))
                    counts[f.code][0 if verdict == "true" else 1 if verdict == "false" else 2] += 1
    if args.skeleton:
        args.skeleton.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    total = [sum(c[i] for c in counts.values()) for i in range(3)]
    for code, (true, false, unjudged) in sorted(counts.items()):
        print(f"{code}: {true} true, {false} false, {unjudged} unjudged")
    judged_n = total[0] + total[1]
    print(f"all: {total[0]} of {judged_n} true ({total[0] / judged_n:.1%}), {total[2]} unjudged; dialect and "
          f"trainer right on {pairs[0]} of {pairs[1]} files" if judged_n else "no findings")
    return 0


def _configs(corpus: Path) -> dict[str, dict]:
    """The configs of a staged batch (every SOURCES.json entry that is neither a pin file nor source code)."""
    sources = json.loads((corpus / "SOURCES.json").read_text())
    return {name: {"dialect": None, "trainer": None, "findings": []} for name, s in sources.items()
            if not s.get("pins") and not s.get("source_code") and not s.get("data")}


if __name__ == "__main__":
    sys.exit(main())

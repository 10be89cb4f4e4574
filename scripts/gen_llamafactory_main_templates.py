"""Regenerate dialects/keys/llamafactory_main_templates.json: every chat template LLaMA-Factory's main branch has
registered, with the days it came and went.

    .venv/bin/python scripts/gen_llamafactory_main_templates.py --repo DIR           # write the file
    .venv/bin/python scripts/gen_llamafactory_main_templates.py --repo DIR --check   # exit 1 if it is stale

DIR is a clone of https://github.com/hiyouga/LLaMA-Factory (a bare one will do). Most projects that train with
LLaMA-Factory clone main rather than pin a release, and main registers templates between releases (`gpt` from
August to December 2025, in no release), so the releases key_history.json holds cannot judge them; a name no
commit of main ever registered can. Each first-parent commit of main that touched the template registry
(src/utils/template.py, then src/llmtuner/extras/template.py, src/llmtuner/data/template.py,
src/llamafactory/data/template.py) is read with ``ast``, as gen_key_history.llamafactory_templates reads a release.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_key_history import REGISTER_CALLS, check_or_write  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys" / \
    "llamafactory_main_templates.json"
COMMAND = "python scripts/gen_llamafactory_main_templates.py --repo DIR"
REGISTRIES = ("src/utils/template.py", "src/llmtuner/extras/template.py", "src/llmtuner/data/template.py",
              "src/llamafactory/data/template.py")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def registered(source: str) -> set[str]:
    """The names one version of the registry registers (register_template / _register_template calls)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in REGISTER_CALLS:
            name = next((k.value for k in node.keywords if k.arg == "name"), node.args[0] if node.args else None)
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                found.add(name.value)
    return found


def build(repo: Path, branch: str = "HEAD") -> dict:
    """{"head": the commit read, "templates": name -> [[first day main had it, first day it was gone (null:
    still there)], ...]}: days are commit days (UTC), oldest first."""
    commits = git(repo, "log", "--first-parent", "--reverse", "--format=%H %cI", branch, "--", *REGISTRIES).split("\n")
    spans: dict[str, list[list[str | None]]] = {}
    for line in filter(None, commits):
        sha, when = line.split()
        day = when[:10]
        names: set[str] = set()
        for path in REGISTRIES:
            try:
                names |= registered(git(repo, "show", f"{sha}:{path}"))
            except subprocess.CalledProcessError:
                continue  # this commit has the registry under another path
        for name in sorted(names | set(spans)):
            own = spans.setdefault(name, [])
            open_span = bool(own) and own[-1][1] is None
            if name in names and not open_span:
                own.append([day, None])
            elif name not in names and open_span:
                own[-1][1] = day
    head = git(repo, "log", "-1", "--format=%H %cI", branch).split()
    return {"command": COMMAND, "source": "https://github.com/hiyouga/LLaMA-Factory, first-parent history of main",
            "head": {"commit": head[0], "day": head[1][:10]},
            "templates": {name: spans[name] for name in sorted(spans)}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="a clone of hiyouga/LLaMA-Factory")
    parser.add_argument("--branch", default="HEAD", help="the main branch's ref in that clone")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    return check_or_write(build(args.repo, args.branch), OUT, COMMAND, args.check)


if __name__ == "__main__":
    sys.exit(main())

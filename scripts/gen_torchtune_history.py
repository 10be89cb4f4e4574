"""Regenerate dialects/keys/torchtune_history.json: the torchtune components older releases had and the newest lacks.

    .venv/bin/python scripts/gen_torchtune_history.py            # download the wheels, write the file
    .venv/bin/python scripts/gen_torchtune_history.py --check    # exit 1 if the committed file is stale
    .venv/bin/python scripts/gen_torchtune_history.py --wheels DIR

A config names its builders by dotted path (`_component_: torchtune.utils.metric_logging.DiskLogger`), and
config.instantiate imports that path: torchtune 0.3 moved the loggers to torchtune.training.metric_logging and
0.4 the checkpointers to torchtune.training, so a 0.2-era config fails on a fresh install of 0.6 with
ModuleNotFoundError. Per released minor (TORCHTUNE_VERSIONS, the last patch of each; wheels read with ast by
scripts/gen_torchtune_components.py's Resolver, never imported), the public paths; kept are those some release has
and the newest lacks, with spans in keys/key_history.json's format (class "components", so
seqprof.config.key_history.KeyHistory judges them at a project's torchtune pin), and under "moved" the newest
release's path of the same name when exactly one torchtune path has it (with its own spans, for the rename's
release).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_key_history import generate, intervals  # noqa: E402
from gen_torchtune_components import Resolver, Tree  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys" / "torchtune_history.json"
COMMAND = "python scripts/gen_torchtune_history.py"
TORCHTUNE_VERSIONS = ("0.1.1", "0.2.1", "0.3.1", "0.4.0", "0.5.0", "0.6.1")


def wheel(version: str, directory: Path) -> Path:
    found = sorted(directory.glob(f"torchtune-{version}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
                        f"torchtune=={version}", "-d", str(directory)], check=True)
        found = sorted(directory.glob(f"torchtune-{version}-*.whl"))
    return found[0]


def build(wheels: Path) -> dict:
    present = {v: set(Resolver(Tree(wheel(v, wheels)), ("torchtune",)).public_paths()) for v in TORCHTUNE_VERSIONS}
    newest = present[TORCHTUNE_VERSIONS[-1]]
    gone = {p for paths in present.values() for p in paths} - newest
    by_name: dict[str, set[str]] = {}
    for path in newest:
        by_name.setdefault(path.rpartition(".")[2], set()).add(path)
    moved = {}
    for path in sorted(gone):
        # the public re-export is the one to name (torchtune.training.DiskLogger over a private module's path)
        same = sorted((p for p in by_name.get(path.rpartition(".")[2], ()) if "._" not in p), key=len)
        if same and (len(same) == 1 or same[0].count(".") < same[1].count(".")):
            moved[path] = same[0]
    kept = gone | set(moved.values())
    spans = intervals(TORCHTUNE_VERSIONS, {v: paths & kept for v, paths in present.items()})
    return {"command": COMMAND,
            "source": "released wheels (pip download --no-deps), public paths resolved with ast "
                      "(scripts/gen_torchtune_components.py Resolver); only paths the newest release lacks, and "
                      "the newest release's path of the same name",
            "torchtune": {"versions": list(TORCHTUNE_VERSIONS), "classes": {"components": {
                "versions": [[TORCHTUNE_VERSIONS[0], None]], "fields": spans}}, "moved": moved}}


def main(argv: list[str] | None = None) -> int:
    return generate(build, OUT, COMMAND, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())

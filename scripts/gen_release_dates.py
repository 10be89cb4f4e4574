"""Regenerate dialects/keys/release_dates.json: the day each release of the frameworks with nightly images came out.

    .venv/bin/python scripts/gen_release_dates.py            # read PyPI, write the file
    .venv/bin/python scripts/gen_release_dates.py --check    # exit 1 if the committed file is stale

axolotl's nightly images are tagged by the day they were built (axolotlai/axolotl:main-20250812-py3.11-cu126-2.7.1);
the code in one is the last release before that day plus what main added since, so a project that runs its configs
in such an image is judged at that release (seqprof.config.versions image_pins). Per package, the first upload day
of each final, unyanked release on PyPI.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys" / "release_dates.json"
COMMAND = "python scripts/gen_release_dates.py"
PACKAGES = ("axolotl",)


def release_dates(package: str) -> dict[str, str]:
    from packaging.version import InvalidVersion, Version

    with urllib.request.urlopen(f"https://pypi.org/pypi/{package}/json", timeout=60) as response:
        releases = json.load(response)["releases"]
    out = {}
    for version, files in releases.items():
        try:
            parsed = Version(version)
        except InvalidVersion:
            continue
        files = [f for f in files if not f.get("yanked")]
        if files and not parsed.is_prerelease and not parsed.is_devrelease:
            out[version] = min(f["upload_time"] for f in files)[:10]
    return dict(sorted(out.items(), key=lambda item: Version(item[0])))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed file differs")
    args = ap.parse_args(argv)
    data = {"command": COMMAND, "source": "https://pypi.org/pypi/<package>/json: first upload of each final release",
            "packages": {package: release_dates(package) for package in PACKAGES}}
    text = json.dumps(data, indent=1) + "\n"
    if args.check:
        stale = not OUT.exists() or OUT.read_text() != text
        print(f"{OUT.name} is {'stale' if stale else 'current'}")
        return 1 if stale else 0
    OUT.write_text(text)
    print(f"wrote {OUT} ({sum(len(v) for v in data['packages'].values())} releases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Regenerate dialects/keys/companion_requires.json: the trl and transformers caps of packages installed beside them.

    .venv/bin/python scripts/gen_companion_requires.py            # read PyPI, write the file
    .venv/bin/python scripts/gen_companion_requires.py --check    # exit 1 if the committed file is stale

vLLM, Unsloth and ms-swift pin the transformers (and trl) releases they run with: unsloth 2026.10.9 requires
trl<=1.15.0 and transformers<=5.17.0, vllm 0.34.0 transformers<5.20.0, ms-swift 3.2.1 trl<0.17 and transformers<4.51. A project that installs one of them beside an open
`transformers` gets a transformers inside that cap, so its keys are judged there (seqprof.config.versions
with_companions). Per final, unyanked release of each package in COMPANIONS: the Requires-Dist of its metadata
(read from the wheel's METADATA by HTTP Range requests: vLLM's wheels are hundreds of MB each; markers read for
Linux / Python 3.11, extras left out), kept only where it caps trl or transformers. Releases with no
wheel (vLLM's first, sdist-only ones) are left out.

The "shared" section goes the other way: what each transformers release of keys/key_history.json requires of the
libraries projects pin themselves (huggingface-hub, tokenizers), with those libraries' release lists. A project
pinning huggingface-hub<1.0 gets transformers 4.57 at most (5.0 requires huggingface-hub>=1.3), so its keys are
judged there (seqprof.config.versions with_shared_dependencies). And what each trl release requires of accelerate:
trl 0.12 and newer require accelerate>=0.34, so a project pinning accelerate==0.29.2 gets trl 0.11.

    .venv/bin/python scripts/gen_companion_requires.py --section shared   # only that section, the rest as committed
    .venv/bin/python scripts/gen_companion_requires.py --package ms-swift # only that companion, the rest as committed
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import urllib.request
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys" / "companion_requires.json"
COMMAND = "python scripts/gen_companion_requires.py"
COMPANIONS = ("vllm", "unsloth", "unsloth-zoo", "ms-swift")
DEPENDENCIES = ("trl", "transformers")
SHARED = {"transformers": ("huggingface-hub", "tokenizers"), "trl": ("accelerate",)}  # framework -> libraries projects pin beside it
# frameworks whose Requires-Python bounds them under the project's own Python (environment.yml's python=3.8.13:
# transformers 4.47 requires >=3.9, so pip installs 4.46.3 at most), and the CPython releases a pin is matched with
PYTHON_BOUND = ("transformers", "trl", "llamafactory", "axolotl")
PYTHON_RELEASES = {"3.6": 15, "3.7": 17, "3.8": 20, "3.9": 25, "3.10": 19, "3.11": 14, "3.12": 12, "3.13": 11,
                   "3.14": 2}  # minor -> its last patch release
KEY_HISTORY = OUT.parent / "key_history.json"
MARKER_ENV = {"sys_platform": "linux", "platform_system": "Linux", "python_version": "3.11",
              "python_full_version": "3.11.9", "implementation_name": "cpython", "platform_machine": "x86_64",
              "os_name": "posix", "extra": ""}


def pypi(path: str) -> dict:
    with urllib.request.urlopen(f"https://pypi.org/pypi/{path}/json", timeout=60) as response:
        return json.load(response)


class RemoteFile(io.RawIOBase):
    """A file on an HTTP server read by Range requests: zipfile reads a wheel's METADATA from its central
    directory in a few small requests instead of downloading the whole wheel."""

    def __init__(self, url: str) -> None:
        self.url, self.position = url, 0
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=60) as response:
            self.size = int(response.headers["Content-Length"])

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = 0) -> int:
        self.position = {0: offset, 1: self.position + offset, 2: self.size + offset}[whence]
        return self.position

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.size, self.position + n)
        if end <= self.position:
            return b""
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={self.position}-{end - 1}"})
        with urllib.request.urlopen(request, timeout=60) as response:
            data = response.read()
        self.position += len(data)
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def wheel_requires(url: str) -> list[str]:
    """The Requires-Dist lines of a remote wheel's METADATA."""
    with zipfile.ZipFile(io.BufferedReader(RemoteFile(url), buffer_size=1 << 16)) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = z.read(name).decode()
    return [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]


def releases(package: str) -> dict[str, str]:
    """Final releases with a wheel not yanked (oldest first) -> that wheel's URL (a Linux x86_64 one if any)."""
    from packaging.version import InvalidVersion, Version

    out = {}
    for version, files in pypi(package)["releases"].items():
        try:
            parsed = Version(version)
        except InvalidVersion:
            continue
        wheels = [f for f in files if f["filename"].endswith(".whl") and not f.get("yanked")]
        wheels.sort(key=lambda f: ("x86_64" not in f["filename"] and "none-any" not in f["filename"]))
        if not parsed.is_prerelease and not parsed.is_devrelease and wheels:
            out[version] = re.sub(r"^(\.\./)+packages/", "https://files.pythonhosted.org/", wheels[0]["url"])
    return dict(sorted(out.items(), key=lambda kv: Version(kv[0])))


def caps(requires_dist: list[str] | None) -> dict[str, str]:
    """dependency -> its specifier, for the DEPENDENCIES a release caps (markers for Linux)."""
    return requirements(requires_dist, DEPENDENCIES, keep=capped)


def capped(specifier: str) -> bool:
    """Whether *specifier* bounds the newest release pip may pick (<, <=, ==, ~=); a floor alone does not."""
    return any(part.strip().startswith(("<", "==", "~=")) for part in specifier.split(","))


def requirements(requires_dist: list[str] | None, names: tuple[str, ...], keep=lambda specifier: True
                 ) -> dict[str, str]:
    """name -> the specifier a release gives each of *names* (markers for Linux), where *keep* takes it (default:
    the whole specifier, floors too)."""
    from packaging.markers import Marker
    from packaging.requirements import InvalidRequirement, Requirement

    out: dict[str, str] = {}
    for line in requires_dist or ():
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        name = req.name.lower().replace("_", "-")
        if name in names and keep(str(req.specifier)) and \
                (req.marker is None or Marker(str(req.marker)).evaluate(MARKER_ENV)):
            out[name] = str(req.specifier)
    return out


def build_shared() -> dict:
    """Per framework of SHARED, each release key_history.json lists -> its requirement on the shared libraries;
    and each shared library's final releases (to tell whether a project's pin and a requirement meet). Per
    framework of PYTHON_BOUND, its Requires-Python as requirement on "python" too."""
    history = json.loads(KEY_HISTORY.read_text())
    out: dict = {"requires": {}, "releases": {}}
    for framework, libraries in SHARED.items():
        urls = releases(framework)
        out["requires"][framework] = {v: requirements(wheel_requires(urls[v]), libraries)
                                      for v in history[framework]["versions"] if v in urls}
        for library in libraries:
            out["releases"][library] = list(releases(library))
    for framework in PYTHON_BOUND:
        python = requires_python(framework)
        table = out["requires"].setdefault(framework, {})
        for version in history[framework]["versions"]:
            if python.get(version):
                table.setdefault(version, {})["python"] = python[version]
    out["releases"]["python"] = [f"{minor}.{patch}" for minor, last in PYTHON_RELEASES.items()
                                 for patch in range(last + 1)]
    return out


def requires_python(package: str) -> dict[str, str]:
    """Release -> the Requires-Python of its files on PyPI (a wheel's first, else the sdist's), where one is set."""
    out = {}
    for version, files in pypi(package)["releases"].items():
        found = [f.get("requires_python") for f in sorted(files, key=lambda f: not f["filename"].endswith(".whl"))
                 if f.get("requires_python") and not f.get("yanked")]
        if found:
            out[version] = found[0].replace(" ", "")
    return out


def companion(package: str) -> dict:
    """One companion's final releases and the trl / transformers caps each requires."""
    urls = releases(package)
    requires = {}
    for version, url in urls.items():
        found = caps(wheel_requires(url))
        if found:
            requires[version] = found
    return {"versions": list(urls), "step": "patch", "classes": {}, "requires": requires}


def build(section: str | None = None, package: str | None = None) -> dict:
    if section == "shared":
        data = json.loads(OUT.read_text())
        data["shared"] = build_shared()
        return data
    if package:
        data = json.loads(OUT.read_text())
        data["packages"][package] = companion(package)
        return data
    packages = {package: companion(package) for package in COMPANIONS}
    return {"command": COMMAND,
            "source": "Requires-Dist of each final, unyanked release's wheel METADATA (PyPI; Linux, Python 3.11), "
                      "kept where it caps trl or transformers; shared: what each transformers release requires of "
                      "huggingface-hub and tokenizers, each trl release of accelerate, and the Requires-Python of "
                      "transformers, trl, llamafactory and axolotl releases",
            "packages": packages, "shared": build_shared()}


def render(data: dict) -> str:
    text = json.dumps(data, indent=1, sort_keys=True)
    return re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--section", choices=["shared"], help="regenerate only this section")
    parser.add_argument("--package", choices=COMPANIONS, help="regenerate only this companion's releases")
    args = parser.parse_args(argv)
    data = build(args.section, args.package)
    if args.check:
        if not OUT.exists() or json.loads(OUT.read_text()) != data:
            print(f"stale: {OUT} (run {COMMAND})")
            return 1
        return 0
    OUT.write_text(render(data))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

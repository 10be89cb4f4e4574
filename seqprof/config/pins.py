"""A project's version pins as values: one Pin per constraint found (a requirement line, a lock entry, an image
tag), gathered per package into Pins, which says which releases they allow. versions.find_pins finds them beside a
config, pin_files reads each kind of file, key_history judges a key under them; ``--versions`` (parse_spec) gives
them on the command line, and a bad one is a SeqprofError."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from seqprof.errors import SeqprofError

FRAMEWORKS = ("trl", "transformers", "axolotl", "llamafactory", "torchtune", "vllm", "unsloth", "unsloth-zoo",
              "ms-swift")
# libraries a project pins itself, and its interpreter, that bound which framework releases it can install
# (keys/companion_requires.json "shared": transformers 5.0 requires huggingface-hub>=1.3, so huggingface-hub<1.0 means
# transformers 4.57 at most; environment.yml's python=3.8.13 meets no transformers from 4.47 on)
SHARED_LIBRARIES = ("huggingface-hub", "tokenizers", "accelerate", "python")
PACKAGES = FRAMEWORKS + SHARED_LIBRARIES  # the packages whose pins are read
# installed beside trl / transformers, and capping the releases of both (keys/companion_requires.json)
COMPANIONS = ("vllm", "unsloth", "unsloth-zoo", "ms-swift")
ALIASES = {"llama-factory": "llamafactory"}


@dataclass(frozen=True)
class Pin:
    """One constraint on a package: a PEP 440 specifier ('' allows any version) and the file:line it came from."""

    package: str
    specifier: str
    source: str
    exact: bool = False  # a lock file's resolved version
    vcs: bool = False  # `trl @ git+https://...@c04e84c`: a commit, not a release seqprof can place
    head: bool = False  # `trl @ git+https://...` with no ref, or @main/@master: newer than every release
    own: bool = False  # the version a checkout of the framework gives itself: its own requirements, not the
    #                    release's metadata, say what it runs with
    checkout: str | None = None  # `pip install -e ./LLaMA-Factory`: the folder, as written, relative to the file
    cloned_only: bool = False  # a README's `git clone` + `git checkout v4.45.2` with no install line: the release of
    #                            a local checkout that another file installs (`-e /path/to/transformers`)
    environment: str | None = None  # a README's `conda create -n sim` / `conda activate sim` above the install line
    interpreter: bool = False  # a cap the project's Python puts on every install of it, whichever file pins it
    upgrade: bool = False  # an install script's last word on the package is `pip install --upgrade trl`, no version:
    #                        pip replaces whatever the project's own install put there by the newest release
    fork: str = ""  # the other repository (owner/name) a git install or checkout of the framework comes from

    def allows(self, version: str) -> bool:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            return SpecifierSet(self.specifier).contains(version, prereleases=True)
        except InvalidSpecifier:  # a spec pip would refuse too: it bounds nothing seqprof can tell
            return True


@dataclass(frozen=True)
class Pins:
    """Every pin found for a config, per package (all must hold), and notes on files that were skipped."""

    pins: Mapping[str, tuple[Pin, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def of(self, package: str) -> tuple[Pin, ...]:
        """The pins that decide *package*: an exact (lock-file) version when there is one, else every range."""
        found = self.pins.get(package, ())
        exact = [p for p in found if p.exact]
        return (exact[0],) if exact else tuple(p for p in found if p.specifier)

    def unversioned(self, package: str) -> Pin | None:
        """A requirement that names *package* with no version (`transformers` alone in requirements.txt), when that
        is all there is: a fresh install of the project gets the newest release."""
        if self.of(package) or self.vcs(package) is not None:
            return None
        return next((p for p in self.pins.get(package, ())
                     if not p.specifier and not (p.vcs or p.checkout or p.cloned_only or p.own)), None)

    def with_pin(self, pin: Pin) -> Pins:
        """These pins and one more on its package (a cap that a companion's or a recipe layer's metadata adds)."""
        return Pins({**self.pins, pin.package: self.pins.get(pin.package, ()) + (pin,)}, self.notes)

    def vcs(self, package: str) -> Pin | None:
        """A pin to a git commit or URL (no release number), when that is all there is for *package*."""
        found = self.pins.get(package, ())
        return next((p for p in found if p.vcs), None) if not self.of(package) else None

    def allowed(self, package: str, versions: Sequence[str]) -> list[str] | None:
        """Those of *versions* every pin on *package* allows; None when nothing pins it."""
        pins = self.of(package)
        if not pins:
            return None
        return [v for v in versions if all(p.allows(v) for p in pins)]

    def describe(self, package: str) -> str | None:
        """'trl==0.19.1 (requirements.txt:3)' for messages; None when unpinned."""
        pins = self.of(package)
        if not pins:
            return None
        return ", ".join(f"{package}{p.specifier} ({p.source})" for p in pins)


def normalize(name: str) -> str:
    key = re.sub(r"[-_.]+", "-", name.strip().lower())
    return ALIASES.get(key, key)


def parse_spec(text: str) -> Pins:
    """``--versions trl==0.19.1,transformers>=4.57,<5``: pins for the named packages; SeqprofError when malformed."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    specs: dict[str, list[str]] = {}
    package = None
    if not text.strip():
        raise SeqprofError("--versions is empty", fix="write e.g. --versions trl==0.19.1,transformers==4.57")
    for part in (p.strip() for p in text.split(",")):
        m = re.match(r"^([A-Za-z][A-Za-z0-9._-]*)\s*(.*)$", part)
        if m and m.group(2)[:1] in ("=", ">", "<", "~", "!"):
            package, spec = normalize(m.group(1)), m.group(2)
        elif package is not None and part[:1] in ("=", ">", "<", "~", "!"):
            spec = part  # `trl>=0.19,<0.21`: the bound after the comma belongs to the package before it
        else:
            raise SeqprofError(f"--versions: '{part}' is not PACKAGE==VERSION",
                               fix="write e.g. --versions trl==0.19.1,transformers==4.57")
        if re.fullmatch(r"==?\s*\d+(\.\d+)?", spec):  # trl==0.19 and transformers=4.57 mean that minor release
            spec = "==" + spec.lstrip("=").strip() + ".*"
        try:
            SpecifierSet(spec)
        except InvalidSpecifier:
            raise SeqprofError(f"--versions: '{part}' is not a version specifier",
                               fix="write e.g. --versions trl==0.19.1,transformers>=4.57") from None
        specs.setdefault(package, []).append(spec)
    pins = {name: Pin(name, ",".join(parts), "--versions",
                      exact=len(parts) == 1 and parts[0].startswith("==") and "*" not in parts[0])
            for name, parts in specs.items()}
    return Pins({name: (pin,) for name, pin in pins.items()})

"""The framework versions a project pins, read from the files beside its config (or given as --versions).

Whether a key is an error or a warning depends on the version that will run it: TRL removed SFTConfig's
``max_seq_length`` in 0.20, so a config pinned to trl==0.19 still works and one pinned to trl>=0.20 does not.
The pins come from the files a project installs from, found in the config's folder and each parent up to the
repository root (a folder holding .git, however deep the config sits) or MAX_LEVELS folders up:

- requirements*.txt, and any other *requirement*.txt (pip's format: ``-r``/``-c`` includes, extras, markers,
  ``==``/``>=,<``/``~=``);
- pyproject.toml ([project] dependencies and optional-dependencies, [dependency-groups],
  [tool.poetry.dependencies] with poetry's ``^``/``~``);
- uv.lock / poetry.lock ([[package]] name/version: an exact version, which wins over every range);
- environment.yml (conda dependencies, ``trl=0.19`` meaning 0.19.*, and its ``pip:`` list);
- setup.py (``install_requires=[...]`` when it is a literal list);
- shell scripts and Dockerfiles (their ``pip install`` lines), and .gitmodules (a framework vendored as a submodule:
  a commit, like ``-e ../torchtune``, a local checkout);
- a README's ``pip install`` lines in its code blocks, for a package no file above pins, where they agree.

A project that *is* one of the frameworks (a checkout or fork of axolotl, installed with ``pip install -e .``)
runs at its own version: setup(name="axolotl", version="0.4.0") written literally, or pyproject.toml's
[project] name and version (or its dynamic version read from a file, axolotl's VERSION), is an exact pin.

A file that cannot be parsed is skipped with a note; it never stops the lint. ``--versions`` (parse_spec)
overrides the files, and a bad one is a SeqprofError.

What a fresh install of the pins gets is judged too: a trl release caps transformers by its own metadata
(with_requirement), and vLLM / Unsloth listed beside them cap both by their newest allowed release's
(with_companions, keys/companion_requires.json).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from seqprof.errors import SeqprofError

FRAMEWORKS = ("trl", "transformers", "axolotl", "llamafactory", "torchtune", "vllm", "unsloth", "unsloth-zoo")
# libraries a project pins itself that bound which transformers it can install (keys/companion_requires.json
# "shared": transformers 5.0 requires huggingface-hub>=1.3, so huggingface-hub<1.0 means transformers 4.57 at most)
SHARED_LIBRARIES = ("huggingface-hub", "tokenizers", "accelerate")
PACKAGES = FRAMEWORKS + SHARED_LIBRARIES  # the packages whose pins are read
# installed beside trl / transformers, and capping the releases of both (keys/companion_requires.json)
COMPANIONS = ("vllm", "unsloth", "unsloth-zoo")
ALIASES = {"llama-factory": "llamafactory"}
MAX_LEVELS = 4  # parent folders searched above the config's own when no .git marks the root
MAX_GIT_LEVELS = 24  # how far up a .git marking the repository root is looked for
SEQPROF_CHECKOUT = Path(__file__).resolve().parents[2]  # a source checkout of seqprof itself (tests/data lies in it)
MAX_PIN_FILE_BYTES = 4 * 1024 * 1024
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*\(?\s*([^;()@]*?)\s*\)?\s*(?:;.*)?$")
_URL_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*@\s*\S+")
# `-e git+https://...#egg=llamafactory`, `-e file:///${PROJECT_ROOT}/LLaMA-Factory#egg=llamafactory[torch]`: an
# editable copy from a checkout or a URL, whose release no version names
_EDITABLE = re.compile(r"^\s*(?:-e|--editable)[\s=]+\S*#egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
# pip's bare VCS line, `git+https://github.com/pytorch/torchtune.git@8f59c2f#egg=torchtune`: that commit (or branch)
_BARE_VCS = re.compile(r"^\s*((?:git|hg|svn|bzr)\+\S+?)(?:#egg=([A-Za-z0-9][A-Za-z0-9._-]*)\S*)?\s*$")
# `conda list --export` written as requirements.txt: `transformers=4.36.2=pypi_0` (name=version=build)
_CONDA_EXPORT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)=([0-9][^=\s]*)=[^=\s]+\s*$")
_CONDA = re.compile(r"^\s*(?:[\w.-]+::)?([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*$")


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

    def allows(self, version: str) -> bool:
        from packaging.specifiers import SpecifierSet

        return SpecifierSet(self.specifier).contains(version, prereleases=True)


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


def find_pins(config_path: str | Path) -> Pins:
    """Pins from the project files in the config's folder and its parents, up to the repository root."""
    found: list[Pin] = []
    notes: list[str] = []
    folders = list(project_folders(Path(config_path).resolve().parent))
    repository = (folders[-1] / ".git").exists()
    for folder in folders:  # outside a repository, a folder above the config's holds other projects' launchers
        found.extend(_pins_of_folder(folder, notes, launchers=repository or folder == folders[0]))
    root = folders[-1]
    pins: dict[str, list[Pin]] = {}
    for pin in found:
        if pin.package in PACKAGES:
            pins.setdefault(pin.package, []).append(pin)
    if repository:  # the repository's environment folders, for what nothing above the config pins
        pinned = set(pins)
        for pin in _environment_pins(root, notes):
            if pin.package in PACKAGES and pin.package not in pinned:
                pins.setdefault(pin.package, []).append(pin)
        if "axolotl" not in pins:  # an image the project's launcher runs the configs in (Modal's src/common.py)
            pins.update({pin.package: [pin] for pin in _images_anywhere(root)})
    for pin in _readme_pins(folders, notes):  # the README's install steps, for what no project file pins
        if pin.cloned_only:  # the release of a local checkout a project file installs at an unknown commit
            if pin.package in pins and all(p.vcs and p.checkout for p in pins[pin.package]):
                pins[pin.package] = [replace(pin, source=f"{pin.source} (git checkout of the release, installed "
                                                         f"by {pins[pin.package][0].source.split(' (')[0]})")]
        elif pin.package not in pins:
            pins[pin.package] = [pin]
    for package, found_pins in list(pins.items()):
        checkouts = [p for p in found_pins if p.checkout]
        if len(found_pins) == 1 and checkouts:
            _with_checkout(pins, package, checkouts[0], folders, notes)
    return Pins({k: tuple(v) for k, v in pins.items()}, tuple(notes))


def _with_checkout(pins: dict[str, list[Pin]], package: str, pin: Pin, folders: Sequence[Path],
                   notes: list[str]) -> None:
    """A framework installed from a checkout in the repository (`cd LLaMA-Factory && pip install -e .`, or an
    env.yml's `-e /path/to/LLaMA-Factory` beside a vendored LLaMA-Factory/) runs at
    the version that checkout gives itself, with its own requirements: those replace the commit pin, and pin what
    nothing else pins (ucsb-mlsec's vendored LLaMA-Factory 0.9.3.dev0 caps transformers at 4.51.3)."""
    file = pin.source.split(":", 1)[0]
    base = next((f for f in folders if (f / file).is_file()), folders[-1])
    root = folders[-1].resolve()
    folder = (base / pin.checkout).resolve()
    if not folder.is_dir() or not folder.is_relative_to(root):
        # `-e /path/to/LLaMA-Factory` in env.yml (VisualPerceptionToken): the author's own path; the repository's
        # folder of that name, when it has exactly one near its root
        name = Path(pin.checkout).name
        near = [d for d in (root / name, *(c / name for c in root.iterdir() if c.is_dir())) if d.is_dir()] \
            if name and root.is_dir() else []
        if len(near) != 1:
            return
        folder = near[0].resolve()
    own = [p for p in _pins_of_folder(folder, notes) if p.package in PACKAGES]
    if not any(p.own and p.package == package for p in own):
        return
    where = folder.relative_to(folders[-1].resolve()).as_posix()
    pins[package] = [replace(p, source=f"{where}/{p.source}") for p in own if p.package == package and p.own]
    for p in own:
        if p.package != package and p.package not in pins and (p.specifier or p.vcs):
            pins.setdefault(p.package, []).append(replace(p, source=f"{where}/{p.source}"))


def _readme_pins(folders: Sequence[Path], notes: list[str]) -> list[Pin]:
    """One pin per package the READMEs of *folders* install with a version, the nearest README first; a package
    they give two different versions (one for inference, another for training) is left out."""
    per_package: dict[str, list[Pin]] = {}
    for folder in folders:
        for path in sorted(folder.iterdir()) if folder.is_dir() else ():
            if not README.match(path.name) or not path.is_file():
                continue
            try:
                found = read_readme(path)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                notes.append(f"{path}: not read for version pins ({type(exc).__name__})")
                continue
            for pin in found:
                if pin.package in PACKAGES and (pin.specifier or pin.vcs):
                    per_package.setdefault(pin.package, []).append(pin)
    return [found[0] for found in per_package.values() if len({(p.specifier, p.vcs, p.head) for p in found}) == 1]


def _pins_of_folder(folder: Path, notes: list[str], launchers: bool = True) -> list[Pin]:
    """The pins of the project files directly in *folder* (with *launchers*, also the framework images its Python
    launchers name); a file that cannot be read is a note."""
    import yaml

    found: list[Pin] = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else ():
        reader = _reader(path.name)
        if reader is None or not path.is_file() or reader is image_pins and not launchers:
            continue
        try:
            found.extend(reader(path))
        except (OSError, UnicodeDecodeError, ValueError, SyntaxError, TypeError, KeyError, AttributeError,
                RecursionError, yaml.YAMLError) as exc:  # a file of another format under a pin file's name
            notes.append(f"{path}: not read for version pins ({type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:120]})")
    return found


# folders at a repository's root that hold its environments (envfiles/requirements_cuda128.txt,
# installation/docker-arm64-cuda/requirements-freeze.txt), searched two levels down
ENVIRONMENT_FOLDER = re.compile(r"^\.?(envs?|env[-_]?files?|environments?|install(ation)?s?|setup|docker|"
                                r"containers?|requirements?|deps|dependencies|conda|\.?devcontainer)$", re.I)


def _environment_pins(root: Path, notes: list[str]) -> list[Pin]:
    """Pins in the repository root's environment folders (and their subfolders), each named by its path from the
    root, kept per package only where every file agrees on it: two images pinning different releases say nothing
    about which one runs the config."""
    found: list[Pin] = []
    for top in sorted(p for p in root.iterdir() if p.is_dir() and ENVIRONMENT_FOLDER.match(p.name)):
        for folder in [top, *sorted(p for p in top.iterdir() if p.is_dir())]:
            where = folder.relative_to(root).as_posix()
            found.extend(replace(pin, source=f"{where}/{pin.source}") for pin in _pins_of_folder(folder, notes)
                         if not pin.own)
    per_package: dict[str, set[str]] = {}
    for pin in found:
        per_package.setdefault(pin.package, set()).add(pin.specifier)
    return [pin for pin in found if len(per_package[pin.package]) == 1]


MAX_IMAGE_FILES = 2000  # files looked at for framework images in one repository


def _images_anywhere(root: Path) -> list[Pin]:
    """The framework image the repository's launchers, Dockerfiles and compose files name, wherever they sit, when
    they all name the same one (image_pins' rule for one file, over the repository)."""
    from seqprof.config.project_fields import SKIPPED_FOLDERS

    found: list[Pin] = []
    seen = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        for name in sorted(names):
            reader = _reader(name)
            if reader is None or not (name.endswith((".py", ".sh")) or "docker" in name.lower()
                                      or name.startswith("compose.")):
                continue
            seen += 1
            if seen > MAX_IMAGE_FILES:
                return []
            path = Path(folder) / name
            try:
                found.extend(replace(pin, source=f"{path.relative_to(root).parent.as_posix()}/{pin.source}"
                                     .removeprefix("./")) for pin in image_pins(path))
            except (OSError, UnicodeDecodeError, ValueError):
                continue
    return found if len({(p.package, p.specifier, p.vcs, p.head) for p in found}) == 1 else []


def project_folders(start: Path) -> Iterable[Path]:
    """*start* and its parents up to the folder holding .git, however deep the config sits below it
    (BradleyWang0416's fork keeps configs twelve folders down); at most MAX_LEVELS above when no .git is within
    MAX_GIT_LEVELS."""
    chain = [start, *start.parents][:MAX_GIT_LEVELS + 1]
    root = next((i for i, folder in enumerate(chain) if (folder / ".git").exists()), None)
    if root is not None and root > MAX_LEVELS and chain[root] == SEQPROF_CHECKOUT:
        root = None  # seqprof's own test data: its pyproject pins seqprof's dependencies, not the configs'
    yield from chain[:root + 1] if root is not None else chain[:MAX_LEVELS + 1]


def _reader(name: str):
    low = name.lower()
    if "requirement" in low and low.endswith((".txt", ".in")):  # new_requirements.txt, train_requirement.txt too
        return read_requirements
    if low.endswith(".sh") or low == "dockerfile" or low.startswith("dockerfile.") or low.endswith(".dockerfile"):
        return lambda path: read_install_script(path) + image_pins(path)
    if low.endswith(".py") and low != "setup.py" or low.startswith(("docker-compose", "compose.")):
        return image_pins  # a launcher that runs the configs in a framework's image (Modal's from_registry)
    return {"pyproject.toml": read_pyproject, ".gitmodules": read_gitmodules, "uv.lock": read_lock,
            "poetry.lock": read_lock, "environment.yml": read_environment, "environment.yaml": read_environment,
            "env.yml": read_environment, "env.yaml": read_environment,
            "setup.py": read_setup_py, "pipfile": read_pipfile, "pipfile.lock": read_pipfile_lock}.get(low)


def _text(path: Path) -> str:
    if path.stat().st_size > MAX_PIN_FILE_BYTES:
        raise ValueError(f"over {MAX_PIN_FILE_BYTES // (1024 * 1024)} MiB")
    return path.read_text(encoding="utf-8")


def requirement(text: str, source: str) -> Pin | None:
    """A Pin from one PEP 508 requirement string (``trl[vllm]>=0.19,<0.21 ; python_version>'3.9'``)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    editable = _EDITABLE.match(text)
    if editable is not None:  # a checkout's copy: a commit seqprof cannot place among releases
        name = normalize(editable.group(1))
        return Pin(name, "", source, vcs=True, head=False) if name in PACKAGES else None

    bare = _BARE_VCS.match(text)
    if bare is not None:  # without #egg= pip names it from its metadata: the repository's name stands for that
        name = normalize(bare.group(2) or re.sub(r"(\.git)?(@[^/]*)?/?$", "", bare.group(1)).rsplit("/", 1)[-1])
        ref = re.search(r"\.git@([^#\s/]+)$|github\.com/[^/]+/[^/@]+@([^#\s/]+)$", bare.group(1))
        head = ((ref.group(1) or ref.group(2)) if ref else "") in ("", "main", "master")
        return Pin(name, "", source, vcs=True, head=head) if name in PACKAGES else None
    url = _URL_REQUIREMENT.match(text)
    if url is not None:
        name = normalize(url.group(1))
        ref = re.search(r"\.git@([^#\s]+)|@([^/#\s]+)$", url.group(0).split("@", 1)[1])
        ref_name = (ref.group(1) or ref.group(2)) if ref else ""
        head = ref_name in ("", "main", "master")
        return Pin(name, "", source, vcs=True, head=head) if name in PACKAGES else None
    m = _REQUIREMENT.match(text)
    if m is None:
        return None
    name = normalize(m.group(1))
    if name not in PACKAGES:
        return None
    spec = m.group(3).replace(" ", "")
    try:
        SpecifierSet(spec)
    except InvalidSpecifier:
        raise ValueError(f"'{text.strip()}' has no valid version specifier") from None
    return Pin(name, spec, source, exact=False)


def editable_checkout(target: str, source: str) -> Pin | None:
    """`-e ../torchtune`, `-e ./LLaMA-Factory[torch]`: a local checkout of a framework (a fork, a submodule, a
    sibling clone) installed in place, at a commit seqprof cannot place among releases; None for anything else
    (`-e .`, the project itself, whose own version setup.py / pyproject.toml give)."""
    if "://" in target or target.startswith(("git+", "hg+", "svn+", "bzr+")):
        return None
    folder = re.sub(r"\[[^\]]*\]$", "", target.strip("'\"")).rstrip("/\\")
    name = normalize(re.split(r"[/\\]", folder)[-1]) if folder not in ("", ".") else ""
    return Pin(name, "", f"{source} (a local checkout)", vcs=True, head=False, checkout=folder) \
        if name in PACKAGES else None


# a framework's own images: the tag names the release (axolotlai/axolotl:0.12.1-py3.11-cu126-2.7.1), or the day a
# nightly was built (main-20250812-...); main-latest and the -base images (no axolotl in them) say nothing
_IMAGE = re.compile(r"\b(?:axolotlai|winglian)/(?P<package>axolotl)(?:-cloud)?(?::(?P<tag>[\w.+-]+)|@sha256:"
                    r"(?P<digest>[0-9a-f]{7,64}|\{\w+\}))")
_IMAGE_RELEASE = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?(?:\.post\d+)?)(?:-|$)")
_IMAGE_NIGHTLY = re.compile(r"^main-(\d{4})(\d{2})(\d{2})(?:-|$)")


def image_pins(path: Path) -> list[Pin]:
    """The framework images a file names (a Dockerfile's FROM, a Modal launcher's from_registry, a compose file's
    image:): a release tag is that release; a nightly is the last release before the day it was built; a main
    build with no date in its tag (`main-py3.10-cu118-2.1.1`) or an image pinned by digest is a build of some
    commit, which seqprof cannot place among releases. `main-latest` is the main branch, except under winglian/,
    which axolotl stopped pushing to on 2025-11-14 (0fbde69e9, "personal repo is deprecated"): its main-latest is
    main of that day, 0.13.0.dev. Two images of different releases in one file say nothing."""
    text = _text(path) if path.is_file() and path.stat().st_size <= MAX_IMAGE_FILE_BYTES else ""
    if "axolotl" not in text:
        return []
    found: list[Pin] = []
    for match in _IMAGE.finditer(text):
        package, tag = match.group("package"), match.group("tag")
        line = text.count("\n", 0, match.start()) + 1
        image = f"{path.name}:{line} (image {match.group(0)}"
        release = _IMAGE_RELEASE.match(tag) if tag else None
        nightly = _IMAGE_NIGHTLY.match(tag) if tag else None
        if tag in ("main-latest", "latest") and not match.group(0).startswith("winglian/"):
            # rebuilt from the main branch every night: newer than every release
            found.append(Pin(package, "", f"{image}, the main branch)", vcs=True, head=True))
            continue
        if (match.group("digest") or tag.startswith("main")) and not nightly:
            found.append(Pin(package, "", f"{image}, a build of a commit seqprof cannot date)", vcs=True))
            continue
        if release:
            found.append(Pin(package, f"=={release.group(1)}", image + ")", exact=True))
        elif nightly:
            built = "-".join(nightly.groups())
            before = _release_before(package, built)
            if before:
                found.append(Pin(package, f"=={before}", f"{image}, a nightly built after {before})", exact=True))
    return found if len({(pin.specifier, pin.vcs, pin.head) for pin in found}) == 1 else []


MAX_IMAGE_FILE_BYTES = 256 * 1024


def _release_before(package: str, day: str) -> str | None:
    """The newest release of *package* out on or before *day* (keys/release_dates.json, gen_release_dates.py)."""
    from seqprof.config.dialects.common import load_keys_file

    dates = load_keys_file("release_dates")["packages"].get(package, {})
    out = [version for version, released in dates.items() if released <= day]
    return out[-1] if out else None


_PIP_INSTALL = re.compile(r"(?:^|[\s;&|(])(?:uv\s+)?(?:python[\d.]*\s+-m\s+)?pip[\d.]*\s+install\s+(.*)$")


def read_install_script(path: Path) -> list[Pin]:
    """`pip install ...` lines of a shell script or Dockerfile (setup.sh, install.sh, `RUN pip install`): the
    requirements they name and the local checkouts they install editable (`pip install -e ../torchtune`)."""
    return _install_lines(_text(path).splitlines(), path.name)


README = re.compile(r"^readme(\.(md|rst|txt|markdown))?$", re.I)
_FENCE = re.compile(r"^\s*(```|~~~)")


def read_readme(path: Path) -> list[Pin]:
    """The `pip install` lines of a README's code blocks (```shell ... ```): NV-Reason-CXR installs for training
    with `uv pip install trl==0.22.2 transformers==4.56.1` and pins nothing in a file; RLHFlow's pair-pm clones
    axolotl and checks out a commit. Prose and inline code are left out; find_pins uses these only for packages no
    project file pins, and only where the README agrees with itself."""
    lines = _text(path).splitlines()
    inside, kept = False, []
    for line in lines:
        fence = bool(_FENCE.match(line))
        kept.append(line if inside and not fence else "")
        inside = inside != fence
    return [pin for pin in _install_lines(kept, path.name) if not pin.own]


def _install_lines(lines: list[str], name: str) -> list[Pin]:
    import shlex

    out: list[Pin] = []
    here = ""  # the folder a `cd` moved into, relative to the file's own
    cloned = {m.group(1) for line in lines for m in _GIT_CLONE.finditer(line)}  # _cloned_checkouts' business
    i = 0
    while i < len(lines):
        start, line = i, lines[i]
        while line.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line.rstrip()[:-1] + " " + lines[i]
        i += 1
        line = re.sub(r"(^|\s)#.*$", "", line)
        for command in re.split(r"&&|\|\||;", line):
            moved = _CD.match(command)
            if moved is not None:  # `cd LLaMA-Factory` then `pip install -e .`: that checkout
                here = "" if moved.group(1) in ("..", "-", "~") else \
                    f"{here}/{moved.group(1)}".strip("/") if not moved.group(1).startswith("/") else ""
                continue
            found = _PIP_INSTALL.search(command)
            if found is None:
                continue
            try:
                words = shlex.split(found.group(1))
            except ValueError:
                continue
            source = f"{name}:{start + 1}"
            editable = False
            for word in words:
                if word in ("-e", "--editable"):
                    editable = True
                    continue
                if word.startswith("-"):
                    editable = False
                    continue
                if word.rstrip("/") in (".", "./") and here and here.rsplit("/", 1)[-1] not in cloned:
                    word = here
                pin = editable_checkout(word, source) if editable or word == here and here else None
                if pin is None and not editable:
                    try:
                        pin = requirement(word, source)
                    except ValueError:
                        pin = None
                editable = False
                if pin is not None:
                    out.append(pin)
    return out + _cloned_checkouts(lines, name)


_CD = re.compile(r"^\s*cd\s+([\w./~-]+)\s*$")
_GIT_CLONE = re.compile(r"\bgit\s+clone\s+(?:-\S+\s+)*(?:https?://|git@)\S*?[/:][\w.-]+/([\w.-]+?)(?:\.git)?/?(?:\s|$)")
_GIT_CHECKOUT = re.compile(r"\bgit\s+(?:checkout|switch)\s+(?:-\S+\s+)*([\w./-]+)")
_INSTALL_HERE = re.compile(r"\bpip[\d.]*\s+install\s+(?:-\S+\s+)*(?:-e\s+|--editable\s+)?\.(?:\[[^\]]*\])?(?:\s|$)")
_RELEASE_TAG = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?)$")


def _cloned_checkouts(lines: list[str], name: str) -> list[Pin]:
    """`git clone .../axolotl`, `cd axolotl`, `git checkout 55cc214c...`, `pip install -e .` (RLHFlow's pair-pm
    README): the framework installed from that checkout. A commit is a pin seqprof cannot place among releases, a
    release tag (`v0.4.1`) that release, and no checkout the main branch (newer than every release)."""
    out: list[Pin] = []
    clone: tuple[str, int] | None = None
    ref = ""
    for number, line in enumerate(lines, 1):
        cloned = _GIT_CLONE.search(line)
        if cloned:
            package = normalize(cloned.group(1))
            clone, ref = ((package, number) if package in FRAMEWORKS else None), ""
            continue
        checkout = _GIT_CHECKOUT.search(line)
        if clone and checkout:
            ref = checkout.group(1)
            tag = _RELEASE_TAG.match(ref)
            if tag:  # installed here or by another file: which, the install line below or find_pins decides
                out.append(Pin(clone[0], f"=={tag.group(1)}", f"{name}:{clone[1]}", cloned_only=True))
        elif clone and _INSTALL_HERE.search(line):
            out = [p for p in out if not (p.cloned_only and p.package == clone[0])]
            source = f"{name}:{clone[1]}"
            tag = _RELEASE_TAG.match(ref)
            out.append(Pin(clone[0], f"=={tag.group(1)}", source) if tag else
                       Pin(clone[0], "", source, vcs=True, head=ref in ("", "main", "master")))
            clone = None
    return out


def read_gitmodules(path: Path) -> list[Pin]:
    """A framework vendored as a git submodule (`url = https://github.com/pytorch/torchtune.git`): the commit the
    submodule records, which seqprof cannot place among releases."""
    out = []
    for number, line in enumerate(_text(path).splitlines(), 1):
        url = re.match(r"^\s*url\s*=\s*(\S+?)(?:\.git)?/?\s*$", line)
        if url is None:
            continue
        name = normalize(re.split(r"[/:]", url.group(1))[-1])
        if name in PACKAGES:
            out.append(Pin(name, "", f"{path.name}:{number} (a git submodule)", vcs=True, head=False))
    return out


def read_requirements(path: Path, _seen: frozenset[Path] = frozenset()) -> list[Pin]:
    """pip requirements, following -r/-c includes (relative to the file), skipping other options."""
    if path.resolve() in _seen:
        return []
    seen = _seen | {path.resolve()}
    out: list[Pin] = []
    lines = _text(path).splitlines()
    i = 0
    while i < len(lines):
        start = i
        line = lines[i]
        while line.rstrip().endswith("\\") and i + 1 < len(lines):  # a continued line
            i += 1
            line = line.rstrip()[:-1] + " " + lines[i]
        i += 1
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if not line:
            continue
        include = re.match(r"^(?:-r|-c|--requirement|--constraint)[\s=]+(\S+)", line)
        if include:
            other = path.parent / include.group(1)
            if other.is_file():
                out.extend(read_requirements(other, seen))
            continue
        local = re.match(r"^(?:-e|--editable)[\s=]+(\S+)\s*$", line)
        if local is not None and _EDITABLE.match(line) is None:
            pin = editable_checkout(local.group(1), f"{path.name}:{start + 1}")
            if pin is not None:
                out.append(pin)
            continue
        if line.startswith("-") and _EDITABLE.match(line) is None:
            continue  # -e ., --index-url, --hash ...: no version constraint of ours
        exported = _CONDA_EXPORT.match(line)
        if exported is not None:  # conda's export format: the exact version installed
            name = normalize(exported.group(1))
            if name in PACKAGES:
                out.append(Pin(name, f"=={exported.group(2)}", f"{path.name}:{start + 1}", exact=True))
            continue
        pin = requirement(line, f"{path.name}:{start + 1}")
        if pin is not None:
            out.append(pin)
    return out


def _line_of(text: str, name: str) -> int:
    """1-based line that first names package *name* (TOML readers keep no lines)."""
    pattern = re.compile(rf"(^|[\"'\s\[,]){re.escape(name)}([\"'\s\[=<>~!^;,]|$)", re.IGNORECASE)
    for i, line in enumerate(text.splitlines(), 1):
        if pattern.search(line):
            return i
    return 1


def parse_toml(text: str) -> Mapping:
    """TOML text -> data (tomllib, or tomli on Python 3.10)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(text)


def read_pyproject(path: Path) -> list[Pin]:
    """[project] dependencies / optional-dependencies, [dependency-groups], [tool.poetry.dependencies]."""
    text = _text(path)
    data = parse_toml(text)
    strings: list[str] = list(data.get("project", {}).get("dependencies", []))
    for group in (data.get("project", {}).get("optional-dependencies", {}),
                  data.get("dependency-groups", {}), data.get("tool", {}).get("pdm", {}).get("dev-dependencies", {})):
        for items in group.values():
            strings.extend(s for s in items if isinstance(s, str))
    out = []
    for s in strings:
        m = _EDITABLE.match(s) or _URL_REQUIREMENT.match(s) or _REQUIREMENT.match(s)
        if m:
            line = next((i for i, ln in enumerate(text.splitlines(), 1) if s in ln), None) \
                if _EDITABLE.match(s) else None
            pin = requirement(s, f"{path.name}:{line or _line_of(text, m.group(1))}")
            if pin is not None:
                out.append(pin)
    own = _pyproject_own_version(data, text, path)
    if own is not None:
        out.append(own)
    poetry = data.get("tool", {}).get("poetry", {})
    tables = [poetry.get("dependencies", {})] + [g.get("dependencies", {}) for g in poetry.get("group", {}).values()]
    for table in tables:
        for name, value in table.items():
            if normalize(name) not in PACKAGES:
                continue
            spec = value.get("version", "") if isinstance(value, Mapping) else value
            if isinstance(spec, str):
                out.append(Pin(normalize(name), poetry_specifier(spec), f"{path.name}:{_line_of(text, name)}"))
    return out


def poetry_specifier(spec: str) -> str:
    """Poetry's ``^0.19.1`` / ``~4.57`` / ``*`` as a PEP 440 specifier."""
    parts = []
    for item in (s.strip() for s in spec.split(",")):
        if item in ("", "*"):
            continue
        if item[0] in "^~" and not item.startswith("~="):
            base = [int(x) for x in re.findall(r"\d+", item)[:3]]
            if item[0] == "^":  # the left-most non-zero part may not change
                nonzero = next((i for i, x in enumerate(base) if x), len(base) - 1)
                upper = base[:nonzero] + [base[nonzero] + 1]
            else:  # ~1.2 -> <1.3, ~1 -> <2
                upper = base[:2] if len(base) > 1 else base[:1]
                upper[-1] += 1
            parts += [">=" + ".".join(map(str, base)), "<" + ".".join(map(str, upper))]
        elif item[0].isdigit():
            parts.append("==" + item)
        else:
            parts.append(item)
    return ",".join(parts)


def read_lock(path: Path) -> list[Pin]:
    """uv.lock / poetry.lock: the resolved version of each [[package]]."""
    text = _text(path)
    out = []
    for package in parse_toml(text).get("package", []):
        name = normalize(str(package.get("name", "")))
        version = package.get("version")
        if name in PACKAGES and isinstance(version, str):
            line = next((i for i, ln in enumerate(text.splitlines(), 1)
                         if re.fullmatch(rf"\s*name\s*=\s*\"{re.escape(package['name'])}\"\s*", ln)), 1)
            out.append(Pin(name, f"=={version}", f"{path.name}:{line}", exact=True))
    return out


def read_pipfile(path: Path) -> list[Pin]:
    """Pipenv's Pipfile: [packages] and [dev-packages], each `name = "==4.10.0"` (or "*", or a table with a
    version)."""
    text = _text(path)
    data = parse_toml(text)
    out = []
    for table in (data.get("packages", {}), data.get("dev-packages", {})):
        for name, value in table.items():
            spec = value.get("version", "*") if isinstance(value, Mapping) else value
            if normalize(name) in PACKAGES and isinstance(spec, str):
                out.append(Pin(normalize(name), "" if spec.strip() == "*" else spec.strip(),
                               f"{path.name}:{_line_of(text, name)}"))
    return out


def read_pipfile_lock(path: Path) -> list[Pin]:
    """Pipfile.lock (JSON): the resolved `"version": "==x"` of each package in "default" and "develop"."""
    import json

    text = _text(path)
    data = json.loads(text)
    out = []
    for section in ("default", "develop"):
        for name, entry in (data.get(section) or {}).items():
            version = entry.get("version") if isinstance(entry, Mapping) else None
            if normalize(name) in PACKAGES and isinstance(version, str) and version.startswith("=="):
                out.append(Pin(normalize(name), version, f"{path.name}:{_line_of(text, name)}",
                               exact=True))
    return out


def read_environment(path: Path) -> list[Pin]:
    """conda environment.yml: ``dependencies`` (conda specs; ``=`` is a prefix match) and its ``pip:`` list; or, under
    that name too, a `conda list --explicit` export (``@EXPLICIT`` then one package URL a line), whose file names
    are exact versions."""
    import yaml

    text = _text(path)
    if re.search(r"^@EXPLICIT\s*$", text, re.M):
        return _explicit_conda(text, path.name)
    data = yaml.safe_load(text) or {}
    out = []
    for dep in data.get("dependencies") or []:
        if isinstance(dep, Mapping):
            for line in dep.get("pip") or []:
                source = f"{path.name}:{_line_of(text, str(line).split('=')[0].strip())}"
                editable = re.match(r"^\s*(?:-e|--editable)\s+(\S+)\s*$", str(line))
                pin = editable_checkout(editable.group(1), source) if editable and "#egg=" not in line else \
                    requirement(str(line), source)
                if pin is not None:
                    out.append(pin)
            continue
        m = _CONDA.match(str(dep))
        if m is None or normalize(m.group(1)) not in PACKAGES:
            continue
        spec = m.group(3).replace(" ", "")
        if re.fullmatch(r"=[^=<>!~].*", spec):
            spec = "==" + spec[1:].rstrip("*").rstrip(".") + ".*"
        out.append(Pin(normalize(m.group(1)), spec, f"{path.name}:{_line_of(text, m.group(1))}"))
    return out


def _extras_strings(tree: ast.AST) -> set[int]:
    """The string nodes of setup.py's optional extras (`extras_require=...`, or a dict assigned to a name with
    "extra" in it, LLaMA-Factory's `extra_require = {"sglang": ["transformers==4.51.1", ...]}`): a plain
    `pip install .` installs none of them, so they pin nothing."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "extras_require":
            roots.append(node.value)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and "extra" in t.id.lower() for t in targets) and node.value is not None:
                roots.append(node.value)
    return {id(n) for root in roots for n in ast.walk(root) if isinstance(n, ast.Constant)}


_CONDA_PACKAGE_FILE = re.compile(r"/([A-Za-z0-9_.+-]+?)-([0-9][^-/]*)-[^-/]+\.(?:conda|tar\.bz2)(?:#\w+)?\s*$")


def _explicit_conda(text: str, name: str) -> list[Pin]:
    """Exact pins from a `conda list --explicit` export: `.../noarch/transformers-4.51.3-pyhd8ed1ab_0.conda`."""
    out = []
    for line_no, line in enumerate(text.splitlines(), 1):
        m = _CONDA_PACKAGE_FILE.search(line.strip())
        if m is not None and normalize(m.group(1)) in PACKAGES:
            out.append(Pin(normalize(m.group(1)), f"=={m.group(2)}", f"{name}:{line_no}", exact=True))
    return out


def read_setup_py(path: Path) -> list[Pin]:
    """Requirement strings of the packages seqprof judges, wherever setup.py writes them literally (never executed):
    ``install_requires=[...]``, or the HF idiom of a ``_deps = [...]`` table that ``deps_list()`` picks from."""
    text = _text(path)
    out = []
    tree = ast.parse(text)
    optional = _extras_strings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 400 and \
                id(node) not in optional:
            try:
                pin = requirement(node.value, f"{path.name}:{node.lineno}")
            except ValueError:
                continue  # a string that only looks like a requirement
            if pin is not None:
                out.append(pin)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "setup":
            words = {kw.arg: kw.value for kw in node.keywords
                     if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)}
            if "name" in words and "version" in words:
                own = _own_version(words["name"].value, words["version"].value,
                                   f"{path.name}:{words['version'].lineno}")
                if own is not None:
                    out.append(own)
            elif "name" in words:  # version=get_version(), which reads it out of a module of the package
                written = _version_module(tree, path.parent)
                own = _own_version(words["name"].value, *written) if written else None
                if own is not None:
                    out.append(own)
            break
    return out


def _version_module(tree: ast.Module, root: Path) -> tuple[str, str] | None:
    """(version, source) from the module a setup.py reads its version out of: LLaMA-Factory's get_version() opens
    os.path.join("src", "llamafactory", "extras", "env.py") and takes its VERSION = "0.9.3.dev0"."""
    for node in ast.walk(tree):
        parts = None
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "join" and node.args and all(
                isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
            parts = [a.value for a in node.args]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(".py"):
            parts = node.value.split("/")
        if not parts or not parts[-1].endswith(".py") or any(p in ("..", "") for p in parts):
            continue
        file = root.joinpath(*parts)
        version = _assigned_string(file, ("VERSION", "__version__")) if file.is_file() else None
        if version:
            return version, f"{'/'.join(parts)} (setup.py's version)"
    return None


def _own_version(name: str, version: str, source: str) -> Pin | None:
    """The exact pin of a checkout that is one of the frameworks itself, at the version it names."""
    from packaging.version import InvalidVersion, Version

    if normalize(name) not in FRAMEWORKS:
        return None
    try:
        Version(version)
    except InvalidVersion:
        return None
    return Pin(normalize(name), f"=={version}", f"{source}, this checkout's own version", exact=True, own=True)


def _pyproject_own_version(data: Mapping, text: str, path: Path) -> Pin | None:
    """[project] name + version, or a dynamic version setuptools reads from a file (axolotl: VERSION), or from an
    attribute the build generates out of version.txt (torchtune), or hatchling from a file by a pattern
    (LLaMA-Factory)."""
    project = data.get("project", {})
    name = project.get("name")
    if not isinstance(name, str):
        return None
    version = project.get("version")
    if isinstance(version, str):
        return _own_version(name, version, f"{path.name}:{_line_of(text, 'version')}")
    hatch = data.get("tool", {}).get("hatch", {}).get("version", {})
    if isinstance(hatch, Mapping) and isinstance(hatch.get("path"), str):  # LLaMA-Factory from 0.9.4: hatchling
        return _hatch_version(name, hatch, path)
    dynamic = data.get("tool", {}).get("setuptools", {}).get("dynamic", {}).get("version", {})
    file = dynamic.get("file") if isinstance(dynamic, Mapping) else None
    if isinstance(file, list):
        file = file[0] if file else None
    if file is None and isinstance(dynamic, Mapping) and isinstance(dynamic.get("attr"), str):
        written = _version_attribute(path.parent, dynamic["attr"])
        if written is not None:
            return _own_version(name, written[0], f"{written[1]} ({path.name}'s dynamic version)")
        # a module the build writes (torchtune's setup.py turns version.txt into torchtune/version.py)
        file = next((n for n in ("version.txt", "VERSION", "VERSION.txt") if (path.parent / n).is_file()), None)
    if not isinstance(file, str) or Path(file).is_absolute() or ".." in Path(file).parts:
        return None
    version_file = path.parent / file
    if not version_file.is_file():
        return None
    return _own_version(name, _text(version_file).strip(), f"{version_file.name} ({path.name}'s dynamic version)")


# hatchling's default version pattern (hatchling/version/source/regex.py)
HATCH_PATTERN = r"""(?i)^(__version__|VERSION) *= *([\'"])v?(?P<version>.+?)\2"""


def _hatch_version(name: str, hatch: Mapping, path: Path) -> Pin | None:
    """`[tool.hatch.version] path = "src/llamafactory/extras/env.py"`: the version hatchling reads there with the
    table's `pattern` (its own default when none is given)."""
    file = hatch["path"]
    if Path(file).is_absolute() or ".." in Path(file).parts or not (path.parent / file).is_file():
        return None
    pattern = hatch.get("pattern") if isinstance(hatch.get("pattern"), str) else HATCH_PATTERN
    try:
        found = re.search(pattern, _text(path.parent / file), re.M)
    except re.error:
        return None
    if found is None or "version" not in found.groupdict():
        return None
    return _own_version(name, found.group("version"), f"{file} ({path.name}'s dynamic version)")


def _version_attribute(root: Path, attr: str) -> tuple[str, str] | None:
    """(version, file) of setuptools' `version = {attr = "pkg.__version__"}` when the module writes it literally."""
    module, _, name = attr.rpartition(".")
    if not module or ".." in module:
        return None
    base = root.joinpath(*module.split("."))
    for file in (base / "__init__.py", base.with_suffix(".py")):
        if file.is_file():
            version = _assigned_string(file, (name,))
            return (version, file.relative_to(root).as_posix()) if version else None
    return None


def _assigned_string(file: Path, names: Sequence[str]) -> str | None:
    """The string a module assigns at its top level to one of *names* (`__version__ = "0.5.0"`), written literally."""
    pattern = "|".join(map(re.escape, names))
    found = re.search(rf"^(?:{pattern})\s*=\s*[\"']([^\"']+)[\"']", _text(file), re.M)
    return found.group(1) if found else None


# ---------------------------------------------------------------- which versions take a key

@dataclass(frozen=True)
class Removal:
    """A key the newest release lacks: the release that removed it, and what the pins make of that."""

    package: str
    removed_in: str  # 'trl 0.20': the first release (minor) without the key
    verdict: str  # 'error': every pinned version lacks it | 'warning': a pinned version has it | 'assumed': no pin
    #               | 'unknown': pinned to a git commit (a note, not a warning: the commit may still have it)
    #               | 'later': deprecated in a release after every pinned one (KeyHistory.arrival)
    detail: str  # the sentence appended to the diagnostic's message
    fact: str = ""  # 'later': what the pins lack, without what to do about it (for a message that says more)


class KeyHistory:
    """keys/key_history.json (scripts/gen_key_history.py): per framework, when each class's fields came and went."""

    def __init__(self, data: Mapping) -> None:
        self.data = data

    @staticmethod
    def load() -> KeyHistory:
        from seqprof.config.dialects.common import load_keys_file

        companion_file = load_keys_file("companion_requires")
        torchtune = {"torchtune": load_keys_file("torchtune_history")["torchtune"]}
        return KeyHistory({**load_keys_file("key_history"), **companion_file["packages"], **torchtune,
                           "shared": companion_file.get("shared", {})})

    def versions(self, package: str) -> list[str]:
        return list(self.data[package]["versions"])

    def newest(self, package: str) -> str:
        return self.versions(package)[-1]

    def having(self, package: str, key: str, classes: Iterable[str], table: str = "classes") -> set[str]:
        """The versions (of the generated list) in which one of *classes* has field *key*; with *table* "values",
        in which the Enum typing field *classes* has member *key* (axolotl's chat_template: qwen_25)."""
        order = self.versions(package)
        index = {v: i for i, v in enumerate(order)}
        out: set[str] = set()
        for cls in classes:
            for since, until in self.data[package].get(table, {}).get(cls, {}).get("fields", {}).get(key, ()):
                out.update(order[index[since]:index[until] if until else len(order)])
        return out

    def ever(self, package: str, classes: Iterable[str]) -> set[str]:
        """Every field any of *classes* had in any version."""
        fields = self.data[package]["classes"]
        return {k for cls in classes for k in fields.get(cls, {}).get("fields", {})}

    def step(self, package: str) -> str:
        """'minor' (one generated version stands for its minor release) or 'patch' (every release is listed:
        LLaMA-Factory's patches add and drop arguments)."""
        return self.data[package].get("step", "minor")

    def release(self, package: str, version: str) -> str:
        """How a generated version is named in a message: 'trl 0.20', 'llamafactory 0.9.5'."""
        return f"{package} {version if self.step(package) == 'patch' else minor(version)}"

    def requires(self, package: str, version: str, dependency: str) -> str | None:
        """The specifier release *version* of *package* gives *dependency* in its metadata; None if not recorded."""
        return self.data[package].get("requires", {}).get(version, {}).get(dependency)

    def allowed(self, package: str, pins: Pins) -> list[str] | None:
        """The generated versions of *package* the pins allow (allowed_minors, by patch for a 'patch' history)."""
        return allowed_minors(pins, package, self.versions(package), patch=self.step(package) == "patch")

    def fields_in(self, package: str, version: str, classes: Iterable[str]) -> set[str]:
        """The fields *classes* have in generated *version* of *package*."""
        classes = list(classes)
        return {k for k in self.ever(package, classes) if version in self.having(package, k, classes)}

    def removal(self, package: str, key: str, classes: Sequence[str], pins: Pins) -> Removal | None:
        """How a key the newest version of *package* lacks stands under *pins*; None if the newest has it or none did."""
        order = self.versions(package)
        having = self.having(package, key, classes)
        if not having or order[-1] in having:
            return None
        removed_in = self.removed_in(package, having)
        allowed = self.allowed(package, pins)
        vcs = pins.vcs(package)
        if allowed is None and vcs is not None and vcs.head:  # the branch head is past the newest release
            return Removal(package, removed_in, "error",
                           f"removed in {removed_in}, and {package} is installed from its main branch ({vcs.source}), "
                           "which is newer")
        if allowed is None and vcs is not None:
            return Removal(package, removed_in, "unknown",
                           f"removed in {removed_in}; {package} is pinned to a commit ({vcs.source}), which seqprof "
                           "cannot place among releases")
        if allowed is None:
            return Removal(package, removed_in, "assumed", f"removed in {removed_in}")
        pinned = pins.describe(package)
        if not allowed:  # the pins allow no release the history knows: say so, judge as without pins
            first = self.release(package, order[0]).split()[-1]
            return Removal(package, removed_in, "assumed",
                           f"removed in {removed_in}; {pinned} matches no release from {first} on")
        builds = [b for b in map(_development_base, pins.of(package)) if b]
        if builds and max(allowed, key=order.index) not in having and any(v in having for v in allowed):
            return Removal(package, removed_in, "assumed",  # 0.9.2.dev0 against a key 0.9.2 removed: either way
                           f"removed in {removed_in}, and {pinned} is a development build of {builds[0]}, which "
                           f"seqprof cannot place between {self.release(package, allowed[0]).split()[-1]} (which has "
                           f"it) and {builds[0]} (which lacks it)")
        return self.removal_among(package, key, classes, allowed, pinned)

    def removed_in(self, package: str, having: Iterable[str]) -> str:
        """'trl 0.20': the release after the last one of *having* (which must not hold the newest)."""
        order = self.versions(package)
        last = max(having, key=order.index)
        return self.release(package, order[order.index(last) + 1])

    def removal_among(self, package: str, key: str, classes: Sequence[str], allowed: Sequence[str],
                      pinned: str) -> Removal | None:
        """How a key stands when *allowed* (generated versions; *pinned* says why, e.g. 'trl>=0.20 (requirements.txt:1)')
        may run: a warning if one has it, an error if none does; None if the newest has it or none ever did."""
        order = self.versions(package)
        having = self.having(package, key, classes)
        if not having or order[-1] in having:
            return None
        removed_in = self.removed_in(package, having)
        if max(allowed, key=order.index) in having:  # what pip installs has it (older allowed ones may predate it)
            return Removal(package, removed_in, "warning",
                           f"{pinned} still has it, {removed_in} removes it: it breaks on that upgrade")
        newest = self.release(package, max(allowed, key=order.index))
        if any(v in having for v in allowed):  # a range across the removal: a fresh install gets the newest
            return Removal(package, removed_in, "error",
                           f"removed in {removed_in}, and {pinned} allows it: pip installs {newest}, which lacks it "
                           "(releases before it still have it)")
        return Removal(package, removed_in, "error",
                       f"removed in {removed_in}, and every release {pinned} allows lacks it")

    def premature(self, package: str, key: str, classes: Sequence[str], pins: Pins) -> Removal | None:
        """A field that every release *pins* allow lacks and a later release added (GRPOConfig.log_completions,
        trl 0.15, in a project pinned to trl==0.14.0): HfArgumentParser/TrlParser refuse it there. None when
        unpinned, when a pinned release has it, or when it was removed rather than not yet added."""
        allowed = self.allowed(package, pins)
        having = self.having(package, key, classes)
        if not allowed or not having or any(v in having for v in allowed):
            return None
        order = self.versions(package)
        first = min(having, key=order.index)
        if order.index(first) < max(order.index(v) for v in allowed):
            return None  # it came and went before the pins (a removal's business, not this)
        return Removal(package, self.release(package, first), "error",
                       f"{pins.describe(package)} has no '{key}' yet: {self.release(package, first)} added it")

    def arrival(self, package: str, replacement: str, classes: Sequence[str], pins: Pins,
                since: str | None = None) -> Removal | None:
        """A deprecated key whose *replacement* no pinned release has yet: the deprecation lies past the pins.

        transformers 5.23 made gradient_checkpointing a deprecated alias of activation_checkpointing; a project
        pinned to 4.52 cannot use the new name, so the old one is right there (a note, not a warning). A commit pin
        (`@git+...@acdbe627`) cannot be placed among releases, so whether it has the replacement is unknown: a note
        too. None when the pins allow a release with the replacement, when *package* is unpinned or installed from
        its main branch, or when the history never had the replacement. *since*: the release from which the
        replacement takes the old key's value (transformers 5.0's warmup_steps reads a float ratio; 4.x's an int)."""
        from packaging.version import Version

        order = self.versions(package)
        having = [v for v in self.having(package, replacement, classes)
                  if since is None or Version(v) >= Version(since)]
        allowed = self.allowed(package, pins)
        vcs = pins.vcs(package)
        if having and allowed is None and vcs is not None and not vcs.head:
            first = self.release(package, min(having, key=order.index))
            return Removal(package, first, "later",
                           f"{package} is pinned to a commit ({vcs.source}), which seqprof cannot place among "
                           f"releases; '{replacement}' arrived in {first}: check the commit before renaming")
        if having and self.older_than_known(package, pins):  # allowed() stands the oldest known in for it
            first = self.release(package, min(having, key=order.index))
            fact = (f"{pins.describe(package)} is older than every {package} release seqprof has read "
                    f"({self.release(package, order[0])} on), so whether it has '{replacement}' is unknown")
            return Removal(package, first, "later", f"{fact}: check it before renaming", fact)
        if not having or not allowed or any(v in having for v in allowed):
            return None
        first = self.release(package, min(having, key=order.index))
        what = f"no '{replacement}' yet ({first} added it)" if since is None else \
            f"no '{replacement}' that reads this value yet ({first} made it read it)"
        fact = f"{pins.describe(package)} has {what}"
        return Removal(package, first, "later", f"{fact}: nothing to change before that upgrade", fact)


    def older_than_known(self, package: str, pins: Pins) -> bool:
        """Whether the pins on *package* allow only releases older than the oldest the history holds (mingruimingrui's
        transformers==4.0.1, where the history starts at 4.36): what that release has is unknown."""
        from packaging.version import InvalidVersion, Version

        found = pins.of(package)
        order = self.versions(package)
        if not found or not order:
            return False
        named = {m for p in found for m in re.findall(r"\d+(?:\.\d+)+", p.specifier)}
        try:
            older = [v for v in named if Version(v) < Version(order[0]) and all(p.allows(v) for p in found)]
        except InvalidVersion:
            return False
        return bool(older) and not any(all(p.allows(v) for p in found) for v in order)


def with_requirement(pins: Pins, history: KeyHistory, package: str, dependency: str) -> Pins:
    """*pins* and the *dependency* range that the newest release of *package* they allow requires: pip installs
    that release, then a *dependency* inside its range (trl<0.13 installs 0.12.2, which requires transformers<4.47).
    Only the range's caps count (<, <=, ==, ~=): a floor such as trl 1.16's transformers>=4.56.2 excludes only old
    releases, which pip would not pick either, and the project's own range already says which it allows. Unchanged
    when *package* is unpinned, the release caps nothing, or the cap and the project's own pins on *dependency*
    have no release in common (the project's pin is then what it installs)."""
    if any(p.own for p in pins.of(package)):
        return pins  # a checkout of *package*: its own requirement files are read as the project's pins
    allowed = history.allowed(package, pins)
    if allowed is None and package in COMPANIONS and pins.pins.get(package) and pins.vcs(package) is None:
        allowed = history.versions(package)  # listed without a version: pip installs the newest release
    spec = history.requires(package, allowed[-1], dependency) if allowed else None
    spec = ",".join(c.strip() for c in (spec or "").split(",") if c.strip().startswith(("<", "==", "~=")))
    if not spec or pins.vcs(dependency):
        return pins
    pin = Pin(dependency, spec, f"what {package} {allowed[-1]} requires")
    joined = Pins({**pins.pins, dependency: pins.pins.get(dependency, ()) + (pin,)}, pins.notes)
    narrowed = history.allowed(dependency, joined)
    if any(p.exact for p in pins.pins.get(dependency, ())) or not narrowed or \
            narrowed == history.allowed(dependency, pins):
        return pins  # a lock, a conflict (the project's own pin is what it installs), or nothing narrowed
    return joined


def with_dependency_floor(pins: Pins, history: KeyHistory, package: str, dependency: str) -> Pins:
    """*pins* and a cap on *package* where the project pins *dependency* below what its newer releases require: trl
    1.16 requires transformers>=4.56.2, so beside transformers==4.51.2 pip installs trl 0.19 (0.20 requires >=4.53.2),
    whose GRPOConfig still has max_prompt_length. Unchanged when *package* is pinned exactly or to a commit, or
    *dependency* is not pinned, or no release of *package* meets the pin (the pins then conflict; the project's own
    range stands)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if any(p.exact for p in pins.pins.get(package, ())) or pins.vcs(package) is not None or pins.vcs(dependency):
        return pins
    own = pins.of(dependency)
    candidates = [p.specifier[2:] for p in own if re.fullmatch(r"==\d[\w.]*", p.specifier)][:1] or \
        history.allowed(dependency, pins) or []
    if not own or not candidates:
        return pins
    order = history.versions(package)
    allowed = history.allowed(package, pins) or order

    def meets(version: str) -> bool:
        spec = history.requires(package, version, dependency)
        try:
            return not spec or any(SpecifierSet(spec).contains(c, prereleases=True) for c in candidates)
        except InvalidSpecifier:
            return True

    if allowed and pins.of(package) and not any(meets(v) for v in allowed):
        return _conflicting(pins, package, dependency, history.requires(package, allowed[0], dependency) or "")
    first_out = _first_missed(allowed, meets, order)
    if first_out is None:
        return pins
    why = f"{dependency}{own[0].specifier} ({own[0].source}); {package} {minor(first_out)} requires " \
          f"{dependency}{history.requires(package, first_out, dependency)}"
    return _capped(pins, package, first_out, why)


def _conflicting(pins: Pins, package: str, dependency: str, floor: str) -> Pins:
    """*pins* with the *dependency* pins' sources saying that no release of *package* the project allows can be
    installed beside them (YuhoLens: transformers==4.48.0 beside trl>=1.2.0, whose first release requires
    transformers>=4.56.2): pip refuses the pair, so what the pinned release has is no promise."""
    (first, *_) = pins.of(package)
    clash = f"{package}{first.specifier} ({first.source}) requires {dependency}{floor}: pip cannot install both"
    marked = tuple(replace(p, source=f"{p.source}; but {clash}") if p in pins.of(dependency) else p
                   for p in pins.pins.get(dependency, ()))
    return Pins({**pins.pins, dependency: marked}, pins.notes)


def _first_missed(allowed: Sequence[str], meets, order: Sequence[str]) -> str | None:
    """The first release of *allowed* above the newest that *meets* what the project pins; None when the newest
    allowed meets it (nothing to cap) or none does (a conflict: the project's own range stands)."""
    keep = [v for v in allowed if meets(v)]
    if not keep or keep[-1] == allowed[-1]:
        return None
    return next(v for v in allowed if order.index(v) > order.index(keep[-1]))


def _capped(pins: Pins, package: str, first_out: str, why: str) -> Pins:
    """*pins* with *package* capped below *first_out*'s minor release (a generated version stands for its minor)."""
    cap = Pin(package, f"<{minor(first_out)}.0", why)
    return Pins({**pins.pins, package: pins.pins.get(package, ()) + (cap,)}, pins.notes)


def with_trl_and_transformers(pins: Pins, history: KeyHistory) -> Pins:
    """*pins* with trl capped where a transformers pin misses newer trl releases' floors, then transformers capped by
    what the trl release pip picks requires: the pair a fresh install of the project gets."""
    pins = with_dependency_floor(pins, history, "trl", "transformers")
    return with_requirement(pins, history, "trl", "transformers")


def with_companions(pins: Pins, history: KeyHistory) -> Pins:
    """*pins* (read from a project's files) and the trl / transformers caps of the vLLM or Unsloth release a fresh
    install of them gets: a project listing `vllm` beside an open `transformers` runs a transformers below what
    vllm 0.34 allows (<5.23), where transformers 5.23's activation_checkpointing_kwargs does not exist yet; and the
    transformers cap of the libraries the project pins itself (with_shared_dependencies)."""
    pins = with_shared_dependencies(pins, history)
    for companion in COMPANIONS:
        for dependency in ("trl", "transformers"):
            pins = with_requirement(pins, history, companion, dependency)
    return pins


# frameworks a library pin bounds only where the same files name the framework too (one pip resolution): a
# requirements freeze without trl (NYCU-NLP-Lab's MathEDU: accelerate==0.29.3) says nothing of a trl installed later
INSTALLED_TOGETHER_ONLY = frozenset({"trl"})


def with_shared_dependencies(pins: Pins, history: KeyHistory) -> Pins:
    """*pins* and a cap on a framework that the project's pin on a library it shares bounds: pip cannot install a
    transformers whose own huggingface-hub range misses the project's (huggingface-hub<1.0 meets no transformers
    from 5.0 on, which requires >=1.3), nor a trl whose accelerate range misses it (accelerate==0.29.2 meets no trl
    from 0.12 on), so the newest release that meets it is what runs. Only a cap is added
    (pip takes the newest release it can); a framework pinned exactly or to a commit, or a library pin no release
    meets, changes nothing. A framework installed from its main branch is capped too: iezhuozhuo/openr1's
    transformers @ git+...main beside huggingface-hub<1.0 installed while main still met that pin, a 4.x."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    shared = history.data.get("shared") or {}
    for framework, table in shared.get("requires", {}).items():
        checkout = pins.vcs(framework)
        if any(p.exact for p in pins.pins.get(framework, ())) or checkout is not None and not checkout.head:
            continue
        if framework in INSTALLED_TOGETHER_ONLY and framework not in pins.pins:
            continue  # trl installed apart from the file that pins accelerate: pip upgrades accelerate for it
        order = history.versions(framework)
        for library in SHARED_LIBRARIES:
            own = pins.of(library)
            releases = [r for r in shared.get("releases", {}).get(library, ()) if all(p.allows(r) for p in own)]
            if not own or not releases:
                continue
            allowed = history.allowed(framework, pins) or order

            def meets(version: str) -> bool:
                spec = table.get(version, {}).get(library)
                try:
                    return spec is None or any(SpecifierSet(spec).contains(r, prereleases=True) for r in releases)
                except InvalidSpecifier:
                    return True

            first_out = _first_missed(allowed, meets, order)
            if first_out is not None:
                branch = "" if checkout is None else f"; the main branch {checkout.source} names requires it " \
                    "too, so pip cannot install both as written, and only a release before it runs with that pin"
                pins = _capped(pins, framework, first_out, f"{library}{own[0].specifier} ({own[0].source}); "
                               f"{framework} {minor(first_out)} requires {library}{table[first_out][library]}"
                               f"{branch}")
    return pins


def minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def allowed_minors(pins: Pins, package: str, order: Sequence[str], *, patch: bool = False) -> list[str] | None:
    """The generated versions (one per minor release) the pins allow; None when *package* is unpinned.

    Each generated version stands for its whole minor release: a pin allowing its .0 or its last patch allows
    it (with *patch*, every release is listed and stands only for itself). A pin above the newest release known
    is taken as the newest (a later release is judged like it), and one below the oldest known as the oldest
    (transformers==4.34 judged as 4.36: the history starts there)."""
    found = pins.of(package)
    if not found:
        return None

    def allows(pin: Pin, version: str) -> bool:
        base = _development_base(pin)
        if base is not None:
            return version in _around(base, order, patch)
        return pin.allows(version) if patch else _allows_minor(pin, version)

    out = [v for v in order if all(allows(p, v) for p in found)]
    if not out:  # files that contradict each other (requirements.txt ==4.38.2, setup.py ==4.37.0) are alternative
        # installs: each one's releases are possible
        by_file: dict[str, list[Pin]] = {}
        for pin in found:
            by_file.setdefault(_pin_file(pin), []).append(pin)
        if len(by_file) > 1:
            out = [v for v in order if any(all(allows(p, v) for p in group) for group in by_file.values())]
    if not out:
        from packaging.version import InvalidVersion, Version

        newest = order[-1]
        try:
            above = all(p.allows(f"{int(newest.split('.')[0]) + 99}.0.0") or
                        any(Version(v) > Version(newest) for v in re.findall(r"\d+(?:\.\d+)+", p.specifier))
                        for p in found)
        except InvalidVersion:
            above = False
        if above:
            out = [newest]
        oldest = Version(order[0])
        try:
            below = all(any(Version(v) < oldest and p.allows(v) for v in re.findall(r"\d+(?:\.\d+)+", p.specifier))
                        for p in found)
        except InvalidVersion:
            below = False
        if below and not out:
            out = [order[0]]
    return out


def _development_base(pin: Pin) -> str | None:
    """'0.9.3' for `==0.9.3.dev0` (or rc1, b2): a build between the release before 0.9.3 and 0.9.3, which a
    checkout of the framework's main branch names itself (LLaMA-Factory's extras/env.py); None for other pins."""
    from packaging.version import InvalidVersion, Version

    exact = re.fullmatch(r"===?\s*(\S+)", pin.specifier)
    if not exact:
        return None
    try:
        version = Version(exact.group(1))
    except InvalidVersion:
        return None
    return version.base_version if version.is_prerelease or version.is_devrelease else None


def _around(base: str, order: Sequence[str], patch: bool) -> list[str]:
    """The releases of *order* a development build of *base* may behave as: the one before it and *base* itself
    (by minor release unless *patch*)."""
    from packaging.version import Version

    key = Version if patch else (lambda v: Version(minor(v)))
    target = key(base)
    below = [v for v in order if key(v) < target]
    return ([below[-1]] if below else []) + [v for v in order if key(v) == target]


def _pin_file(pin: Pin) -> str:
    """The file a pin was read from, a derived cap's too ('transformers<4.40 (tokenizers==0.15.2 (requirements.txt:253)
    ...)' is requirements.txt's)."""
    named = re.findall(r"([\w./-]+\.(?:txt|in|py|toml|lock|ya?ml|cfg)|Pipfile|Dockerfile[\w.-]*|\.gitmodules):\d+",
                       pin.source)
    return named[-1] if named else pin.source


def range_allows_minor(specifier: str, version: str) -> bool:
    """Whether a requirement's range (`<=5.6.0,>=4.55.0`, LLaMA-Factory 0.9.5's transformers) allows some patch of
    generated *version*'s minor release (5.6.2 stands for 5.6, whose 5.6.0 the range takes)."""
    return _allows_minor(Pin("", specifier, ""), version)


def _allows_minor(pin: Pin, version: str) -> bool:
    """Whether *pin* allows some patch of *version*'s minor release (==4.57.1 allows the 4.57 the history lists)."""
    exact = re.fullmatch(r"===?\s*(\d+\.\d+)(?:\.[\w.*]+)?", pin.specifier)
    if exact:
        return exact.group(1) == minor(version)
    # a patch the specifier itself names (`>=4.46.1,<=4.46.1`, parler-tts' exact pin written as a range)
    named = [v for v in re.findall(r"\d+\.\d+\.\d+", pin.specifier) if minor(v) == minor(version)]
    return pin.allows(version) or pin.allows(minor(version) + ".0") or any(pin.allows(v) for v in named)


def assumed(packages: Iterable[str], pins: Pins, history: KeyHistory) -> str | None:
    """'assuming trl 1.16 / transformers 5.24 (no pins found beside the config)' for the unpinned ones."""
    free = [p for p in packages if not pins.of(p)]
    if not free:
        return None
    names = " / ".join(history.release(p, history.newest(p)) for p in free)
    commits = [f"{p} at a commit ({pins.vcs(p).source})" for p in free if pins.vcs(p) is not None]
    if commits:
        return f"assuming {names} ({', '.join(commits)} cannot be placed among releases)"
    which = "pins" if len(free) > 1 else f"{free[0]} pin"
    return f"assuming {names} (no {which} found beside the config)"


def describe_versions(packages: Iterable[str], pins: Pins, history: KeyHistory) -> dict[str, dict]:
    """Per package, what lint judged keys against: the pin and where it came from, or the newest release assumed
    (also for a pin to a git commit, which names no release)."""
    out = {}
    for package in packages:
        found = pins.of(package)
        if found:
            out[package] = {"pinned": ",".join(p.specifier for p in found), "source": ", ".join(p.source for p in found),
                            "assumed": None}
        elif pins.vcs(package) is not None:  # `trl @ git+...@69ad852`: pinned, to a commit no release names
            out[package] = {"pinned": None, "source": pins.vcs(package).source, "assumed": history.newest(package),
                            "commit": True}
        else:
            out[package] = {"pinned": None, "source": None, "assumed": history.newest(package)}
    return out


@lru_cache(maxsize=256)
def _pins_in(folder: str) -> Pins:
    return find_pins(Path(folder) / "config")


def pins_beside(config_path: str) -> Pins:
    """find_pins for a config file on disk, cached per folder; no pins for a config parsed from a string."""
    path = Path(config_path)
    return _pins_in(str(path.resolve().parent)) if path.is_file() else Pins()

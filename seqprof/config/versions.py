"""The framework versions a project pins, found in the files beside its config.

Whether a key is an error or a warning depends on the version that will run it: TRL removed SFTConfig's
``max_seq_length`` in 0.20, so a config pinned to trl==0.19 still works and one pinned to trl>=0.20 does not.
The pins come from the files a project installs from (pin_files reads each kind), found in the config's folder
and each parent up to the repository root (a folder holding .git, however deep the config sits) or MAX_LEVELS
folders up; then from the repository's environment folders, the framework image its launchers name, and its
README's install steps, for what nothing above the config pins. A framework checkout the project installs
(`cd LLaMA-Factory && pip install -e .`) runs at its own version, with its own requirements.

A file that cannot be parsed is skipped with a note; it never stops the lint. key_history judges keys under the
pins found.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from seqprof.config.pin_files import (
    ENVIRONMENT_NAMED,
    README,
    cloned_checkouts,
    image_pins,
    launcher_pins,
    read_environment,
    read_install_script,
    read_readme,
    reader_for,
)
from seqprof.config.pins import PACKAGES, Pin, Pins

MAX_LEVELS = 4  # parent folders searched above the config's own when no .git marks the root
MAX_GIT_LEVELS = 24  # how far up a .git marking the repository root is looked for
SEQPROF_CHECKOUT = Path(__file__).resolve().parents[2]  # a source checkout of seqprof itself (tests/data lies in it)


def find_pins(config_path: str | Path) -> Pins:
    """Pins from the project files in the config's folder and its parents, up to the repository root."""
    found: list[Pin] = []
    notes: list[str] = []
    folders = list(project_folders(Path(config_path).resolve().parent))
    repository = (folders[-1] / ".git").exists()
    for folder in folders:  # outside a repository, a folder above the config's holds other projects' launchers
        found.extend(_pins_of_folder(folder, notes, launchers=repository or folder == folders[0]))
    root = folders[-1]
    if repository:
        found = _in_the_entered_environment(found, root)
    pins: dict[str, list[Pin]] = {}
    for pin in found:
        if pin.package in PACKAGES:
            pins.setdefault(pin.package, []).append(pin)
    for package, found_pins in pins.items():  # `pip install --upgrade trl` after the project's own install
        upgrades = [p for p in found_pins if p.upgrade]
        if upgrades:
            pins[package] = [_newest_release(upgrades[-1])]
    if repository:  # the repository's environment folders, for what nothing above the config pins to a version
        pinned = {package for package, found_pins in pins.items()
                  if any(p.specifier or p.vcs or p.upgrade for p in found_pins)}
        beside = [pin for pin in _environment_pins_beside(folders, notes) if pin.package not in pinned]
        for pin in beside:  # the nearer environment folder, where the config's own project keeps its pins
            if pin.package in PACKAGES:
                pins.setdefault(pin.package, []).append(pin)
        pinned |= {pin.package for pin in beside}
        for pin in _environment_pins(root, notes):
            if pin.package in PACKAGES and pin.package not in pinned:
                pins.setdefault(pin.package, []).append(pin)
        if "axolotl" not in pins:  # an image the project's launcher runs the configs in (Modal's src/common.py)
            pins.update({pin.package: [pin] for pin in _images_anywhere(root)})
    if repository:  # a package of the repository installed into the environment the launchers enter
        entered = _entered_package_pins(root, notes)
        for package in {pin.package for pin in entered}:
            pins[package] = [pin for pin in entered if pin.package == package]
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
    if repository:
        for pin in _imported_library_pins(root):
            pins.setdefault(pin.package, [pin])
    return Pins({k: tuple(v) for k, v in pins.items()}, tuple(notes))


DOCUMENTS = (".md", ".rst", ".txt", ".ipynb")  # launch lines in prose: Train/README_FINETUNING.md's clone of
# "axolotl-ai/axolotl" (phaelon74/llm-abliteration) is a reader's step, not the job that runs


@lru_cache(maxsize=256)
def _launch_file_clones(config_path: str) -> tuple[Pin, ...]:
    """The framework a file that runs the config clones and installs above its launch line (pclucas14/SWE-agent's
    Amulet job run_agent/amlt_config/run_1r1m_32B.yaml: `git clone .../ShiZhengyan/LLaMA-Factory.git`, `cd
    LLaMA-Factory`, `pip install -e ".[torch,metrics]"`, then `llamafactory-cli train` on the config): that checkout,
    here a fork's. Only the launching framework's own package, which the job then runs; and only from job files and
    scripts: a document's code blocks are read as install steps only in the project's README (_readme_pins)."""
    from seqprof.config.launches import framework_launches
    from seqprof.config.project_fields import project_root, source_text

    root = project_root(Path(config_path))
    if not (root / ".git").exists():
        return ()  # outside a repository, a folder above the config's holds other projects' job files
    out: list[Pin] = []
    for launch in framework_launches(config_path):
        file, _, number = launch.where.rpartition(":")
        if file.lower().endswith(DOCUMENTS) or not number.isdigit():
            continue
        lines = source_text(root / file).splitlines()[:int(number)]
        out += [pin for pin in cloned_checkouts(lines, file) if pin.package == launch.dialect]
    return tuple(out)


# libraries no package index carries, which a project's code imports after installing them from their repository,
# and the pin each puts on a shared library: alignment-handbook's setup.py requires huggingface-hub<1.0 in every
# release (v0.1.0 to v0.3.0) and on its main branch (0.4.0.dev0), so no transformers from 5.0 (huggingface-hub>=1.3)
# installs beside it
IMPORTED_LIBRARY_PINS = {"alignment": ("alignment-handbook", "huggingface-hub", "<1.0")}


def _imported_library_pins(root: Path) -> list[Pin]:
    """The pins IMPORTED_LIBRARY_PINS implies where the project's Python imports such a library that the repository
    does not hold itself (a package of its own named so, src/alignment/ with or without __init__.py), unless what it
    holds is a checkout of the library itself (_library_checkout)."""
    from seqprof.config.project_fields import code_match_at, python_files

    out = []
    for module, (library, package, specifier) in IMPORTED_LIBRARY_PINS.items():
        if any(f.parent.name == module and not _library_checkout(f.parent.parent, library) for f in python_files(root)):
            continue
        where = code_match_at(root, re.compile(rf"^[ \t]*(?:from\s+{module}(?:\.\w+)*\s+import\b|import\s+{module}\b)",
                                               re.M))
        if where is not None:
            out.append(Pin(package, specifier, f"{library}, which {where} imports ({module}) and whose setup.py "
                                               f"requires {package}{specifier}"))
    return out


def _library_checkout(folder: Path, library: str) -> bool:
    """Whether *folder* is the src/ of a checkout of *library* itself (ucr-rai/base-and-edit's alignment-handbook/src/
    beside the handbook's setup.py): installed from there, the package brings the library's own requirements."""
    setup = folder.parent / "setup.py"
    try:
        return folder.name == "src" and setup.is_file() and f'name="{library}"' in setup.read_text(errors="replace")
    except OSError:
        return False


def _newest_release(upgrade: Pin) -> Pin:
    """An install script's unversioned `pip install --upgrade trl`, as the release it installs: the newest one
    (Corleno/Med-R1's setup.sh upgrades the trl==0.14.0 its setup.py pins to 1.16)."""
    from seqprof.config.key_history import KeyHistory

    history = KeyHistory.load()
    if upgrade.package not in history.data or not history.versions(upgrade.package):
        return upgrade
    return replace(upgrade, specifier=f">={history.newest(upgrade.package)}",
                   source=f"{upgrade.source}: pip install --upgrade {upgrade.package}, the newest release")


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


def _in_the_entered_environment(found: list[Pin], root: Path) -> list[Pin]:
    """*found* without the pins of named environments the launchers never enter, where the pin files set up several
    and the launchers enter one of them (pins_beside narrows it further, to the environment the config's own
    command lines run in)."""
    named = {p.environment for p in found if p.package in PACKAGES} - {None}
    used = named & _activated_environments(root) if len(named) > 1 else set()
    return [p for p in found if p.environment is None or p.environment in used] if len(used) == 1 else found


def _in_the_environment_running(pins: Pins, config: Path) -> Pins:
    """*pins* without those of named environments the config's command lines do not run in, where the pin files
    set up several: XuHuang441/SimPO's env_install.sh builds `inpo` (transformers 4.53.1, for vLLM decoding), its
    environment.yml `sim` (transformers 4.44.2, trl 0.9.6), and the lines that train on its configs run in `sim`
    (`conda activate .../envs/sim` above them, or `.../envs/sim/bin/accelerate launch`)."""
    named = {p.environment for found in pins.pins.values() for p in found} - {None}
    folders = list(project_folders(config.parent))
    if len(named) < 2 or not (folders[-1] / ".git").exists():
        return pins
    used = named & _environments_running(config, folders[-1]) or named & _uv_environments_named_by_folders(config,
                                                                                                  folders[-1])
    if len(used) != 1:
        return pins
    kept = {package: tuple(p for p in found if p.environment is None or p.environment in used)
            for package, found in pins.pins.items()}
    return replace(pins, pins={package: found for package, found in kept.items() if found})


def _environments_running(config: Path, root: Path) -> set[str]:
    """The environments the command lines naming *config* run in: one the line itself enters (`.../envs/sim/bin/
    accelerate`), else the last one its script activates above it."""
    from seqprof.config.launches import command_lines

    out: set[str] = set()
    for file, number, line in command_lines(root, config)[0]:
        inline = {a or b or c for a, b, c in ACTIVATED.findall(line)} | \
            {f"uv {kind} {name}" for kind, name in UV_SELECTED.findall(line)}
        if inline:
            out |= inline
            continue
        above = [text for text in _uncommented_lines(root / file)[:number - 1] if ACTIVATED.search(text)]
        out |= {a or b or c for a, b, c in ACTIVATED.findall(above[-1])} if above else set()
    return out


def _uv_environments_named_by_folders(config: Path, root: Path) -> set[str]:
    """The uv groups and extras the config's folders name (linalg-zero's config/sft/*.yaml run in its `sft` group,
    whose pins conflict with the grpo and data-gen groups'), for a config no command line names a group for."""
    try:
        parts = config.parent.relative_to(root).parts
    except ValueError:
        return set()
    return {f"uv {kind} {part}" for part in parts for kind in ("group", "extra")}


def _readme_pins(folders: Sequence[Path], notes: list[str]) -> list[Pin]:
    """One pin per package the READMEs of *folders* install, the nearest README first; a package they give two
    different versions (one for inference, another for training) is left out. An install line with no version
    (tiny-think's `uv pip install trl`) counts, as a bare requirements.txt line does, where no README line gives
    the package a version."""
    per_package: dict[str, list[Pin]] = {}
    unversioned: dict[str, list[Pin]] = {}
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
                elif pin.package in PACKAGES and pin.checkout is None and not pin.cloned_only:
                    unversioned.setdefault(pin.package, []).append(pin)
    for package, found in unversioned.items():
        per_package.setdefault(package, found)
    named = {p.environment for found in per_package.values() for p in found} - {None}
    if len(named) > 1:  # the README sets up several environments: the one the launchers run in, where that is one
        used = named & _activated_environments(folders[-1])
        if len(used) == 1:
            per_package = {package: [p for p in found if p.environment in used]
                           for package, found in per_package.items()}
    return [found[0] for found in per_package.values()
            if found and len({(p.specifier, p.vcs, p.head) for p in found}) == 1]


# a launcher entering an environment: `conda activate sim` (or `conda activate /home/u/.conda/envs/sim`),
# `source activate sim`, `.../miniconda3/envs/sim/bin/accelerate`,
# a virtual environment's `source openr1/bin/activate`
ACTIVATED = re.compile(r"(?:^|[\s;&|])(?:(?:conda|source)\s+activate\s+(?:\S*/envs/)?([\w.-]+)|\S*/envs/([\w.-]+)/bin/|"
                       r"(?:source|\.)\s+(?:\S*/)?([\w.-]+)/bin/activate\b)", re.M)
# a command line run in one uv dependency group or extra: `uv run --group sft accelerate launch ...`
UV_SELECTED = re.compile(r"\buv\s+run\b.*?\s--(?:only-)?(group|extra)[=\s]+([\w.-]+)")
LAUNCHER_SUFFIXES = (".sh", ".slurm", ".sbatch", ".bash")


def _activated_environments(root: Path) -> set[str]:
    """The environment names the shell launchers at the repository root and one folder down enter, outside
    comments (XuHuang441/SimPO_slurm's run_sppo.slurm runs `/hai/.../envs/sim/bin/accelerate launch`)."""
    return _entered_by(_shell_files(root, 1))


def _entered_by(launchers: Iterable[Path]) -> set[str]:
    """The environment names *launchers* enter (ACTIVATED), outside comments."""
    return {a or b or c for path in launchers for a, b, c in ACTIVATED.findall(_uncommented(path))}


def _shell_files(root: Path, depth: int) -> list[Path]:
    """The shell scripts at the repository root and up to *depth* folders below it (hidden, vendored and virtual
    environment folders left out)."""
    from seqprof.config.project_fields import SKIPPED_FOLDERS

    folders, level = [root] if root.is_dir() else [], [root] if root.is_dir() else []
    for _ in range(depth):
        level = [p for f in level for p in sorted(f.iterdir()) if p.is_dir() and not p.name.startswith(".")
                 and p.name not in SKIPPED_FOLDERS]
        folders += level
    return [path for folder in folders for path in sorted(folder.iterdir())
            if path.suffix in LAUNCHER_SUFFIXES and path.is_file()]


def _uncommented(path: Path) -> str:
    return "\n".join(line for line in _uncommented_lines(path) if line)


def _uncommented_lines(path: Path) -> list[str]:
    """*path*'s lines, a comment line left blank (so that the numbers hold)."""
    try:
        return ["" if line.lstrip().startswith("#") else line
                for line in path.read_text(errors="replace").splitlines()]
    except OSError:
        return []


# `uv pip install -e "llm2025compet/training/open-r1[dev]"`: a package of the repository installed editable
EDITABLE = re.compile(r"\bpip\s+install\s+(?:-\S+\s+)*?(?:-e|--editable)\s+[\"']?([^\s\"'\[]+)")


def _entered_package_pins(root: Path, notes: list[str]) -> list[Pin]:
    """The pins of a package of the repository (its own setup.py or pyproject.toml below the root) that an install
    script installs editable into an environment it makes, where the project's launchers enter that environment:
    Damin3927/llm2025compet's create_open-r1_env.sh makes `uv venv openr1` and installs training/open-r1
    (transformers==4.54.1, trl==0.19.0), and its launchers `source openr1/bin/activate`; the root pyproject.toml's
    transformers>=4.53.3 is another environment's."""
    entered = _entered_by(path for path in _shell_files(root, 3) if not INSTALL_SCRIPT.match(path.name))
    if not entered:  # the install script enters the environment it makes; a launcher must enter it too
        return []
    for script in _shell_files(root, 2):
        if not INSTALL_SCRIPT.match(script.name):
            continue
        text = _uncommented(script)
        if not set(ENVIRONMENT_NAMED.findall(text)) & entered:
            continue
        for match in EDITABLE.finditer(text):
            package = _repository_folder(root, match.group(1), script.parent)
            if package is None or not any((package / name).is_file() for name in ("setup.py", "pyproject.toml")):
                continue
            where = package.relative_to(root).as_posix()
            found = [replace(pin, source=f"{where}/{pin.source}, installed by "
                                         f"{script.relative_to(root).as_posix()}")
                     for pin in _pins_of_folder(package, notes, launchers=False)
                     if pin.package in PACKAGES and pin.specifier and not pin.own]
            if found:
                return found
    return []


def _repository_folder(root: Path, written: str, base: Path | None = None) -> Path | None:
    """The folder below *root* that an install path names by its tail (`llm2025compet/training/open-r1` is the
    repository's training/open-r1, wherever the author cloned it), or that a relative path names from the install
    script's own folder *base* (arugo11's openr1-training/create_open-r1_env.sh installs `-e "open-r1[dev]"`, its
    sibling openr1-training/open-r1); None for the root itself or no such folder."""
    parts = [p for p in Path(written).parts if p not in (".", "/")]
    beside = base.joinpath(*parts) if base is not None and parts and not Path(written).is_absolute() else None
    if beside is not None and beside.is_dir() and beside.resolve() != root.resolve() and \
            beside.resolve().is_relative_to(root.resolve()):
        return beside
    for start in range(len(parts)):
        tail = parts[start:]
        if ".." in tail:
            continue
        folder = root.joinpath(*tail)
        if folder.is_dir() and folder.resolve() != root.resolve() and folder.resolve().is_relative_to(root.resolve()):
            return folder
    return None


def _pins_of_folder(folder: Path, notes: list[str], launchers: bool = True) -> list[Pin]:
    """The pins of the project files directly in *folder* (with *launchers*, also the framework images its Python
    launchers name); a file that cannot be read is a note."""
    import yaml

    found: list[Pin] = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else ():
        reader = reader_for(path.name) or (read_environment if _conda_environment(str(path)) else None)
        if reader is None or not path.is_file() or reader in (image_pins, launcher_pins) and not launchers:
            continue
        try:
            found.extend(reader(path))
        except (OSError, UnicodeDecodeError, ValueError, SyntaxError, TypeError, KeyError, AttributeError,
                RecursionError, yaml.YAMLError) as exc:  # a file of another format under a pin file's name
            notes.append(f"{path}: not read for version pins ({type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:120]})")
    return found


_CONDA_SECTIONS = (re.compile(r"^channels:\s*$", re.M), re.compile(r"^dependencies:\s*$", re.M))


@lru_cache(maxsize=4096)
def _conda_environment(path: str) -> bool:
    """A conda environment file under a name of its own (PenGuln/DFT's dft.yml, `conda env create -f dft.yml`):
    a YAML file with top-level channels: and dependencies: sections."""
    if not path.lower().endswith((".yml", ".yaml")) or not os.path.isfile(path):  # never open a FIFO or a device
        return False
    try:
        if os.path.getsize(path) > 256 * 1024:
            return False
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return False
    return all(section.search(text) for section in _CONDA_SECTIONS)


# folders at a repository's root that hold its environments (envfiles/requirements_cuda128.txt,
# installation/docker-arm64-cuda/requirements-freeze.txt), searched two levels down
ENVIRONMENT_FOLDER = re.compile(r"^\.?(envs?|env[-_]?files?|environments?|install(ation)?s?|setup|docker(files?)?|"
                                r"containers?|requirements?|deps|dependencies|conda|\.?devcontainer|\w+[-_]setup)$", re.I)


# a script whose name says it sets up the environment, in any folder at the root or one below it
# (K-bhuvan/chess-llm's scripts/install_unsloth_blackwell.sh, which its README runs after `pip install -e .` to cap
# transformers and trl; shangshang-wang/Tina's scripts/set/set_env.sh, which runs `pip install trl==0.15.2`)
INSTALL_SCRIPT = re.compile(r"^(?:[\w.-]*[-_.])?(?:install|setup|env|environment)\d*(?:[-_.][\w.-]*)?\.sh$", re.I)


def _environment_pins(root: Path, notes: list[str]) -> list[Pin]:
    """Pins in the repository root's environment folders (and their subfolders), and in the install scripts of its
    other folders (and their subfolders), each named by its path from the root, kept per package only where every
    file agrees on it: two images pinning different releases say nothing about which one runs the config."""
    found: list[Pin] = []
    from seqprof.config.project_fields import SKIPPED_FOLDERS

    for top in sorted(p for p in root.iterdir() if p.is_dir() and (ENVIRONMENT_FOLDER.match(p.name) or
                      not p.name.startswith(".") and p.name not in SKIPPED_FOLDERS)):
        environment = bool(ENVIRONMENT_FOLDER.match(top.name))
        for folder in [top, *sorted(p for p in top.iterdir() if p.is_dir() and p.name not in SKIPPED_FOLDERS)]:
            where = folder.relative_to(root).as_posix()
            pins = _pins_of_folder(folder, notes) if environment else _install_scripts_of(folder, notes)
            found.extend(replace(pin, source=f"{where}/{pin.source}") for pin in pins if not pin.own)
    return _agreeing(found)


def _environment_pins_beside(folders: Sequence[Path], notes: list[str]) -> list[Pin]:
    """Pins in environment folders beside the config's folder or one of its parents below the repository root
    (Azure/azureml-examples' lab keeps src/grpo_trainer_config.yaml and environment/requirements.txt side by side),
    the nearest level that has any, kept per package only where its files agree."""
    for level in folders[:-1]:
        parent = level.parent
        if parent == folders[-1] or parent not in folders:
            break  # the root's environment folders are _environment_pins'
        found: list[Pin] = []
        for folder in sorted(p for p in parent.iterdir() if p.is_dir() and p != level and
                             ENVIRONMENT_FOLDER.match(p.name)):
            where = folder.relative_to(folders[-1]).as_posix()
            found.extend(replace(pin, source=f"{where}/{pin.source}") for pin in _pins_of_folder(folder, notes)
                         if not pin.own)
        if found:
            return _named_first(found, folders)
    return []


def _named_first(found: list[Pin], folders: Sequence[Path]) -> list[Pin]:
    """*found*, agreeing (_agreeing), where the files named for one of the config's folders come first: moodlep/cai's
    hf_setup/ keeps alignment-handbook-setup-sft.py and -setup.dpo.py, whose transformers differ; a config under
    dpo/ runs in the dpo file's environment, and the other files count only for packages it does not pin."""
    words = {folder.name.lower() for folder in folders[:-1]}

    def named(pin: Pin) -> bool:
        file = pin.source.split(":")[0].rsplit("/", 1)[-1].lower()
        return bool(words & set(re.split(r"[-_.]+", file.rsplit(".", 1)[0])))

    chosen = _agreeing([pin for pin in found if named(pin)])
    packages = {pin.package for pin in chosen}
    return chosen + [pin for pin in _agreeing([pin for pin in found if not named(pin)]) if pin.package not in packages]


def _agreeing(found: list[Pin]) -> list[Pin]:
    """*found*, keeping a package's pins only where every file gives it the same specifier: two images pinning
    different releases say nothing about which one runs the config."""
    per_package: dict[str, set[str]] = {}
    for pin in found:
        per_package.setdefault(pin.package, set()).add(pin.specifier)
    return [pin for pin in found if len(per_package[pin.package]) == 1]


def _install_scripts_of(folder: Path, notes: list[str]) -> list[Pin]:
    """The pins of the install scripts (INSTALL_SCRIPT) directly in *folder*."""
    found: list[Pin] = []
    for path in sorted(folder.iterdir()):
        if INSTALL_SCRIPT.match(path.name) and path.is_file():
            try:
                found.extend(read_install_script(path))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                notes.append(f"{path}: not read for version pins ({type(exc).__name__})")
    return found


MAX_IMAGE_FILES = 2000  # files looked at for framework images in one repository


def _images_anywhere(root: Path) -> list[Pin]:
    """The framework image the repository's launchers, Dockerfiles and compose files name, wherever they sit, when
    they all name the same one (image_pins' rule for one file, over the repository), or else when the files among
    them that train with axolotl do."""
    from seqprof.config.project_fields import SKIPPED_FOLDERS

    found: list[Pin] = []
    training: list[Pin] = []
    seen = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        for name in sorted(names):
            reader = reader_for(name)
            if reader is None or not (name.endswith((".py", ".sh")) or "docker" in name.lower()
                                      or name.startswith("compose.")):
                continue
            seen += 1
            if seen > MAX_IMAGE_FILES:
                return []
            path = Path(folder) / name
            try:
                pins = [replace(pin, source=f"{path.relative_to(root).parent.as_posix()}/{pin.source}"
                                .removeprefix("./")) for pin in image_pins(path)]
                if pins and AXOLOTL_TRAINS.search(path.read_text(encoding="utf-8", errors="replace")):
                    training.extend(pins)
                found.extend(pins)
            except (OSError, UnicodeDecodeError, ValueError):
                continue
    for pins in (found, training):  # all images; else those that train (a validator's image never runs the config)
        if len({(p.package, p.specifier, p.vcs, p.head) for p in pins}) == 1:
            return pins
    return []


def _images_holding(config: Path) -> list[Pin]:
    """The framework image of the Dockerfiles that copy *config* into it (G.O.D forks' standalone-text-trainer
    .dockerfile `COPY core/config/base.yml /workspace/axolotl/base.yml`, beside a validator's Dockerfile of another
    image, which _images_anywhere cannot choose between) when they name one; [] otherwise or outside a repository."""
    folders = list(project_folders(config.parent))
    root = folders[-1].resolve()
    if not (root / ".git").exists() or not config.is_relative_to(root):
        return []
    copying = re.compile(rf"^\s*(?:COPY|ADD)\s+(?:--\S+\s+)*(?:\S+\s+)*?(?:\./)?"
                         rf"{re.escape(config.relative_to(root).as_posix())}\s", re.M | re.I)
    found = [replace(pin, source=f"{pin.source}, which copies {config.name} into it")
             for text, pins in _framework_dockerfiles(str(root)) if copying.search(text) for pin in pins]
    return found if len({(p.package, p.specifier, p.vcs, p.head) for p in found}) == 1 else []


@lru_cache(maxsize=64)
def _framework_dockerfiles(root: str) -> tuple[tuple[str, tuple[Pin, ...]], ...]:
    """(text, framework images) of each Dockerfile under *root* that names a framework image, one walk per
    repository and run."""
    from seqprof.config.project_fields import SKIPPED_FOLDERS

    out = []
    seen = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        for name in sorted(n for n in names if "docker" in n.lower()):
            seen += 1
            if seen > MAX_IMAGE_FILES:
                return ()
            path = Path(folder) / name
            try:
                pins = image_pins(path)
                if pins:
                    where = path.relative_to(root).parent.as_posix()
                    out.append((path.read_text(encoding="utf-8", errors="replace"), tuple(
                        replace(pin, source=f"{where}/{pin.source}".removeprefix("./")) for pin in pins)))
            except (OSError, UnicodeDecodeError, ValueError):
                continue
    return tuple(out)


# a file whose command trains with axolotl (rayonlabs G.O.D's miner.dockerfile: `axolotl.cli.train`), unlike an
# image the same repository builds for something else
AXOLOTL_TRAINS = re.compile(r"\baxolotl\.cli\.train\b|\baxolotl\s+train\b")


def project_folders(start: Path) -> Iterable[Path]:
    """*start* and its parents up to the folder holding .git, however deep the config sits below it
    (BradleyWang0416's fork keeps configs twelve folders down); at most MAX_LEVELS above when no .git is within
    MAX_GIT_LEVELS."""
    chain = [start, *start.parents][:MAX_GIT_LEVELS + 1]
    root = next((i for i, folder in enumerate(chain) if (folder / ".git").exists()), None)
    if root is not None and root > MAX_LEVELS and chain[root] == SEQPROF_CHECKOUT:
        root = None  # seqprof's own test data: its pyproject pins seqprof's dependencies, not the configs'
    yield from chain[:root + 1] if root is not None else chain[:MAX_LEVELS + 1]


@lru_cache(maxsize=256)
def _pins_in(folder: str) -> Pins:
    return find_pins(Path(folder) / "config")


def pins_beside(config_path: str) -> Pins:
    """find_pins for a config file on disk, cached per folder, and a framework a file that runs this config clones
    where nothing pins it; no pins for a config parsed from a string."""
    path = Path(config_path)
    if not path.is_file():
        return Pins()
    pins = _in_the_environment_running(_pins_in(str(path.resolve().parent)), path.resolve())
    if "axolotl" not in pins.pins:
        held = _images_holding(path.resolve())
        if held:
            pins = replace(pins, pins={**pins.pins, held[0].package: tuple(held)})
    cloned = [pin for pin in _launch_file_clones(str(path.resolve())) if pin.package not in pins.pins]
    return replace(pins, pins={**pins.pins, **{pin.package: (pin,) for pin in cloned}}) if cloned else pins

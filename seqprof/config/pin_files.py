"""Readers of the files a project installs from, one per kind: each turns a file into the Pins it states.

requirements*.txt (and any *requirement*.txt: pip's format, ``-r``/``-c`` includes, extras, markers, conda
exports), pyproject.toml (PEP 621 and its requires-python, dependency groups, poetry's ``^``/``~``), uv.lock /
poetry.lock (exact versions), Pipfile / Pipfile.lock, environment.yml (conda and its ``pip:`` list), setup.py (a
literal install_requires), shell scripts and Dockerfiles (their ``pip install`` lines and framework images), Python
launchers and compose files (framework images), .gitmodules (a vendored framework: a commit), and a README's
``pip install`` lines in its code blocks. A checkout of a framework names its own version (setup.py's version=,
pyproject's [project] version or a dynamic version read from a file), which is an exact, `own` pin.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from seqprof.config.pins import FRAMEWORKS, PACKAGES, Pin, normalize

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


# requirements files under the misspellings projects commit (requirments.txt, requirement.txt is caught above)
MISSPELLED_REQUIREMENTS = re.compile(r"^(?:[\w.-]*[-_])?(?:requirments|requirmentes|requierments|requiremnts|"
                                     r"requeriments|requrements)(?:[-_][\w.-]*)?\.txt$")


# a conda environment file under another name than environment.yml / env.yml (read_environment wants its
# `dependencies:`; a file without them pins nothing)
CONDA_ENVIRONMENT = re.compile(r"^(?:[\w.]+[_-])?(?:conda[_-]?env|environment|conda)(?:[_-][\w.-]+)?\.ya?ml$")


# a setup.py under another name, kept to be copied over a framework's own (`alignment-handbook-setup-sft.py`)
SETUP_COPY = re.compile(r"^[\w.-]*[-_.]setup(?:[-_.][\w.-]*)?\.py$|^setup[-_.][\w.-]+\.py$")


def reader_for(name: str):
    """The reader of a file named *name*, None for a file that pins nothing."""
    low = name.lower()
    if "requirement" in low and low.endswith((".txt", ".in")):  # new_requirements.txt, train_requirement.txt too
        return read_requirements
    if MISSPELLED_REQUIREMENTS.match(low):  # PhiVanDat123/riskKD's requirments.txt, which its README installs
        return read_requirements
    if low.endswith(".sh") or low == "dockerfile" or low.startswith("dockerfile.") or low.endswith(".dockerfile"):
        return lambda path: read_install_script(path) + image_pins(path)
    if SETUP_COPY.match(low):  # moodlep/cai's hf_setup/alignment-handbook-setup.dpo.py, copied over the handbook's
        return setup_copy_pins
    if low.endswith(".py") and low != "setup.py":
        return launcher_pins  # a launcher that runs the configs in an image or an environment of its own
    if low.startswith(("docker-compose", "compose.")):
        return image_pins
    if CONDA_ENVIRONMENT.match(low):  # riyazahuja/ImProver's conda_env.yml, environment-gpu.yml
        return read_environment
    if "requirement" in low and low.endswith((".yaml", ".yml")):  # a `dependencies:` list of pip lines (a
        return read_environment  # Databricks environment spec, qian-yu-db's cli/axolotl/requirements.yaml)
    return {"pyproject.toml": read_pyproject, ".gitmodules": read_gitmodules, "uv.lock": read_lock,
            "poetry.lock": read_lock, "environment.yml": read_environment, "environment.yaml": read_environment,
            "env.yml": read_environment, "env.yaml": read_environment,
            "setup.py": read_setup_py, "pipfile": read_pipfile, "pipfile.lock": read_pipfile_lock}.get(low)


def _text(path: Path) -> str:
    if path.stat().st_size > MAX_PIN_FILE_BYTES:
        raise ValueError(f"over {MAX_PIN_FILE_BYTES // (1024 * 1024)} MiB")
    return path.read_text(encoding="utf-8")


# a git ref that is a release's tag (trl's v0.16.0, transformers' v4.45.2): that release's code
RELEASE_TAG = re.compile(r"v?(\d+\.\d+(?:\.\d+)?)")


def _vcs_pin(name: str, ref: str, source: str, url: str = "") -> Pin | None:
    """A git install of *name* at *ref*: the release a tag names, else a commit seqprof cannot place, or the head.
    The head of another repository than the package's own (a personal fork on gitee) is a commit too: its main
    branch follows no release."""
    if name not in PACKAGES:
        return None
    tag = RELEASE_TAG.fullmatch(ref)
    if tag is not None:
        return Pin(name, f"=={tag.group(1)}", f"{source} (the v{tag.group(1)} tag)")
    fork = fork_repository(name, url)
    if fork:
        return Pin(name, "", f"{source} (a fork, {fork}: a commit seqprof cannot place among releases)", vcs=True,
                   head=False, fork=fork)
    return Pin(name, "", source, vcs=True, head=ref in ("", "main", "master"))


def fork_repository(package: str, text: str) -> str:
    """'owner/name' of the repository *text* (a URL, a clone line) names, when it is another one than *package*'s
    own (OWN_REPOSITORIES): a fork, whose arguments and requirements are its own; '' otherwise."""
    host = _REPOSITORY.search(text)
    repository = f"{host.group(1)}/{host.group(2)}" if host is not None else ""
    return repository if repository and package in OWN_REPOSITORIES and \
        repository.lower() not in OWN_REPOSITORIES[package] else ""


# the repositories a framework's own main branch lives in (renamed ones under both names)
OWN_REPOSITORIES = {
    "transformers": {"huggingface/transformers"},
    "trl": {"huggingface/trl", "lvwerra/trl"},
    "axolotl": {"axolotl-ai-cloud/axolotl", "openaccess-ai-collective/axolotl"},
    "llamafactory": {"hiyouga/llama-factory", "hiyouga/llamafactory", "hiyouga/chatglm-efficient-tuning",
                     "hiyouga/llama-efficient-tuning"},
    "torchtune": {"pytorch/torchtune", "meta-pytorch/torchtune"},
    "accelerate": {"huggingface/accelerate"},
    "huggingface-hub": {"huggingface/huggingface_hub"},
    "tokenizers": {"huggingface/tokenizers"},
}
_REPOSITORY = re.compile(r"(?:github\.com|gitee\.com|gitlab\.com|bitbucket\.org)[/:]([\w.-]+)/([\w.-]+?)"
                         r"(?:\.git)?(?:[@/#]|$)")


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
        if name in RECIPE_LAYERS:
            return _layer_hub_cap(name, source)
        ref = re.search(r"\.git@([^#\s/]+)$|github\.com/[^/]+/[^/@]+@([^#\s/]+)$", bare.group(1))
        return _vcs_pin(name, (ref.group(1) or ref.group(2)) if ref else "", source, bare.group(1))
    url = _URL_REQUIREMENT.match(text)
    if url is not None:
        name = normalize(url.group(1))
        if url.group(0).split("@", 1)[1].strip().startswith("file:"):
            # `trl @ file:///mfs1/u/max/trl` (max-kaufmann/open-r1): a copy on the author's disk, no release and
            # no head of main
            return Pin(name, "", f"{source} (a local copy: a commit seqprof cannot place among releases)",
                       vcs=True, head=False) if name in PACKAGES else None
        ref = re.search(r"\.git@([^#\s]+)|@([^/#\s]+)$", url.group(0).split("@", 1)[1])
        return _vcs_pin(name, (ref.group(1) or ref.group(2)) if ref else "", source, url.group(0))
    m = _REQUIREMENT.match(text)
    if m is None:
        return None
    name = normalize(m.group(1))
    if name in RECIPE_LAYERS:
        return _layer_hub_cap(name, source)
    if name not in PACKAGES:
        return None
    spec = m.group(3).replace(" ", "")
    try:
        SpecifierSet(spec)
    except InvalidSpecifier:
        raise ValueError(f"'{text.strip()}' has no valid version specifier") from None
    return Pin(name, spec, source, exact=False)


# the recipe layers on TRL: every release's setup.py caps huggingface-hub below 1.0 (alignment-handbook's
# "huggingface-hub>=0.14.1,<1.0" in 2023 up to its 2025 rewrite; open-r1's "huggingface-hub[cli,hf_xet]>=0.30.2,<1.0"),
# and transformers from 5.0 on requires huggingface-hub>=1.3: installing the layer keeps transformers at 4.x
RECIPE_LAYERS = frozenset({"alignment-handbook", "open-r1"})
LAYER_HUB_CAP = "<1.0"


def _layer_hub_cap(name: str, source: str) -> Pin:
    """The huggingface-hub cap an install of a recipe layer brings (dvlab-research/Step-DPO's requirements.txt:
    `git+https://github.com/huggingface/alignment-handbook@606d2e9`)."""
    return Pin("huggingface-hub", LAYER_HUB_CAP, f"{source}: {name}'s setup.py requires "
                                                 f"huggingface-hub{LAYER_HUB_CAP}")


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
_IMAGE = re.compile(r"\b(?:axolotlai|winglian)/(?P<package>axolotl)(?:-cloud|-runpod)?(?::(?P<tag>[\w.+-]+)|@sha256:"
                    r"(?P<digest>[0-9a-f]{7,64}|\{\w+\}))")
_IMAGE_RELEASE = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?(?:\.post\d+)?)(?:-|$)")
_IMAGE_NIGHTLY = re.compile(r"^main-(\d{4})(\d{2})(\d{2})(?:-|$)")


def launcher_pins(path: Path) -> list[Pin]:
    """The pins of a Python launcher: the framework image it runs the configs in (image_pins), the environment
    a Metaflow flow builds for its steps (flow_environment_pins), and the install lines its comments give."""
    return image_pins(path) + flow_environment_pins(path) + commented_install_lines(path)


_COMMENTED_PIP = re.compile(r"^\s*#+\s*((?:python3?\s+-m\s+)?pip3?\s+install\s.*)$")


def commented_install_lines(path: Path) -> list[Pin]:
    """The `# pip install ...` comment lines of a Python script, the environment its author names for it
    (zdfb/toy-r1-zero's train_R1_zero.py: `# pip install git+https://github.com/huggingface/trl.git@e95f9fb...`
    over the TrlParser that reads train_R1_zero.yaml)."""
    lines = [m.group(1) if m else "" for m in map(_COMMENTED_PIP.match, _text(path).splitlines())]
    return _install_lines(lines, path.name) if any(lines) else []


_FLOW_ENVIRONMENTS = {"pypi_base": "packages", "pypi": "packages", "conda_base": "libraries", "conda": "libraries"}


def flow_environment_pins(path: Path) -> list[Pin]:
    """The packages a Metaflow flow's `@pypi_base(packages={"transformers": "4.45.0"})` (or @pypi, @conda_base,
    @conda) installs for the steps that run the config: Metaflow builds that environment itself, whatever the
    repository's requirements say (outerbounds/metaflow-checkpoint-examples' nim_lora flow). A bare version is that
    release; a package two decorators give different versions says nothing."""
    import ast

    text = _text(path) if path.is_file() and path.stat().st_size <= MAX_IMAGE_FILE_BYTES else ""
    if "@pypi" not in text and "@conda" not in text:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found: dict[str, set[tuple[str, int]]] = {}
    for node in ast.walk(tree):
        for decorator in getattr(node, "decorator_list", ()):
            name = decorator.func.id if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name) \
                else None
            listed = next((k.value for k in decorator.keywords if k.arg == _FLOW_ENVIRONMENTS[name]), None) \
                if name in _FLOW_ENVIRONMENTS else None
            if not isinstance(listed, ast.Dict):
                continue
            for key, value in zip(listed.keys, listed.values):
                if isinstance(key, ast.Constant) and isinstance(value, ast.Constant) and \
                        isinstance(key.value, str) and isinstance(value.value, str) and value.value.strip():
                    version = value.value.strip()
                    spec = version if version[0] in "=<>!~" else f"=={version}"
                    found.setdefault(key.value.lower().replace("_", "-"), set()).add((spec, key.lineno))
    pins = []
    for package, specs in found.items():
        if len({spec for spec, _ in specs}) == 1:
            spec, line = min(specs, key=lambda s: s[1])
            pins.append(Pin(package, spec, f"{path.name}:{line} (a Metaflow flow's environment)",
                            exact=spec.startswith("==") and "*" not in spec))
    return pins


def image_pins(path: Path) -> list[Pin]:
    """The framework images a file names (a Dockerfile's FROM, a Modal launcher's from_registry, a compose file's
    image:): a release tag is that release; a nightly is the last release before the day it was built; a main
    build with no date in its tag (`main-py3.10-cu118-2.1.1`) or an image pinned by digest is a build of some
    commit, which seqprof cannot place among releases. `main-latest` is the main branch, except under winglian/,
    which axolotl stopped pushing to on 2025-11-14 (0fbde69e9, "personal repo is deprecated"): its main-latest is
    main of that day, 0.13.0.dev. Two images of different releases in one file say nothing."""
    text = _text(path) if path.is_file() and path.stat().st_size <= MAX_IMAGE_FILE_BYTES else ""
    return _images_named(text, path.name)


def _images_named(text: str, name: str) -> list[Pin]:
    """image_pins over *text*, a file called *name* (or a README's code blocks)."""
    if "axolotl" not in text:
        return []
    found: list[Pin] = []
    for match in _IMAGE.finditer(text):
        package, tag = match.group("package"), match.group("tag")
        line = text.count("\n", 0, match.start()) + 1
        image = f"{name}:{line} (image {match.group(0)}"
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
            elif first := _first_release(package):  # main before the first release the dates know: its development
                # build (Souging/G.O.D-test's winglian/axolotl:main-20241101: 0.5.0.dev0)
                found.append(Pin(package, f"=={first}.dev0", f"{image}, a nightly built before {first})", exact=True))
    return found if len({(pin.specifier, pin.vcs, pin.head) for pin in found}) == 1 else []


MAX_IMAGE_FILE_BYTES = 256 * 1024


def _release_before(package: str, day: str) -> str | None:
    """The newest release of *package* out on or before *day* (keys/release_dates.json, gen_release_dates.py)."""
    from seqprof.config.dialects.common import load_keys_file

    dates = load_keys_file("release_dates")["packages"].get(package, {})
    out = [version for version, released in dates.items() if released <= day]
    return out[-1] if out else None


def _first_release(package: str) -> str | None:
    """The oldest release of *package* keys/release_dates.json holds."""
    from seqprof.config.dialects.common import load_keys_file

    return next(iter(load_keys_file("release_dates")["packages"].get(package, {})), None)


_PIP_INSTALL = re.compile(r"(?:^|[\s;&|(])(?:uv\s+)?(?:python[\d.]*\s+-m\s+)?pip[\d.]*\s+install\s+(.*)$")


def read_install_script(path: Path) -> list[Pin]:
    """`pip install ...` lines of a shell script or Dockerfile (setup.sh, install.sh, `RUN pip install`): the
    requirements they name and the local checkouts they install editable (`pip install -e ../torchtune`), and the
    conda environment file it installs (`conda env update -f ./scripts/set/environment.yml`)."""
    lines = _text(path).splitlines()
    named = _environment_names(_with_variables(lines))
    return [replace(pin, environment=named.get(_line_number(pin.source))) for pin in _install_lines(lines, path.name)] \
        + _installed_environment_files(lines, path) + _installed_requirement_files(lines, path)


_SHELL_VARIABLE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_]\w*)=[\"']?([\w.-]+)[\"']?\s*(?:#.*)?$")


def _with_variables(lines: list[str]) -> list[str]:
    """*lines* with the script's plain `NAME=value` variables written out (`ENV_NAME="inpo"` ... `conda create -n
    $ENV_NAME`), so the environment it names can be read."""
    values: dict[str, str] = {}
    out = []
    for line in lines:
        assigned = _SHELL_VARIABLE.match(line)
        if assigned:
            values[assigned.group(1)] = assigned.group(2)
        out.append(re.sub(r"\$\{?([A-Za-z_]\w*)\}?", lambda m: values.get(m.group(1), m.group(0)), line))
    return out


def _line_number(source: str) -> int:
    found = re.search(r":(\d+)", source)
    return int(found.group(1)) if found else 0


# `conda env create -f environment.yml`, `conda env update --file ./scripts/set/environment.yml`
_CONDA_ENV_FILE = re.compile(r"\bconda\s+env\s+(?:create|update)\b[^\n;&|#]*?\s(?:-f|--file)[\s=]+"
                             r"[\"']?([\w./-]+\.ya?ml)")


def _installed_environment_files(lines: list[str], script: Path) -> list[Pin]:
    """The pins of the conda environment files a script installs (LYF22034/open-rs2-grpo-lora's set_env.sh, which
    its README runs from the repository root: `conda env update -f ./scripts/set/environment.yml`), the path read
    from the script's own folder or from a folder above it (where the README runs it)."""
    out: list[Pin] = []
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("#"):
            continue
        for match in _CONDA_ENV_FILE.finditer(line):
            written = match.group(1)
            if written.startswith("/"):
                continue
            for folder in (script.parent, *script.parent.parents)[:MAX_SCRIPT_DEPTH]:
                target = folder / written
                if target.is_file():
                    out.extend(replace(pin, source=f"{pin.source}, installed by {script.name}:{number}")
                               for pin in _environment_or_nothing(target))
                    break
                if (folder / ".git").exists():
                    break
    return out


MAX_SCRIPT_DEPTH = 4  # folders looked in for an installed environment file: the script's own and three above it

# `pip install --no-deps -r /opt/graphix/requirements-a4.lock`, `pip install -c constraints.txt trl`
_REQUIREMENT_FILE = re.compile(r"\bpip[\d.]*\s+install\b[^\n;&|#]*?\s(?:-r|--requirement|-c|--constraint)[\s=]+"
                               r"[\"']?([\w./-]+)")
_COPY = re.compile(r"^\s*(?:COPY|ADD)\s+((?:--\S+\s+)*)([^\[].*?)\s*$", re.I)


def _installed_requirement_files(lines: list[str], script: Path) -> list[Pin]:
    """The pins of the requirements files a script or Dockerfile installs with `-r` / `-c` under a name no pin
    reader takes (cenourin/graphix-t5-scibench's docker/modern/Dockerfile: `COPY requirements-a4.lock
    /opt/graphix/...` then `pip install --no-deps -r /opt/graphix/requirements-a4.lock`): a path inside the image is
    followed back through its COPY line to the file beside the Dockerfile; a relative one is read from the script's
    folder or one above. A requirements*.txt is read where it lies, so it is not read twice."""
    joined: list[tuple[int, str]] = []
    for number, line in enumerate(lines, 1):
        if joined and joined[-1][1].rstrip().endswith("\\"):
            joined[-1] = (joined[-1][0], joined[-1][1].rstrip()[:-1] + " " + line)
        else:
            joined.append((number, line))
    copied: dict[str, str] = {}  # a path in the image -> the file (or folder) of the build context copied there
    for _, line in joined:
        found = _COPY.match(line)
        words = found.group(2).split() if found is not None and "--from" not in found.group(1) else []
        for source in words[:-1]:
            target = words[-1]
            copied[f"{target.rstrip('/')}/{Path(source).name}" if target.endswith("/") or len(words) > 2
                   else target] = source
    out: list[Pin] = []
    for number, line in joined:
        if line.lstrip().startswith("#"):
            continue
        for match in _REQUIREMENT_FILE.finditer(line):
            written = match.group(1)
            inside = copied.get(written) or next((f"{source.rstrip('/')}/{written[len(target.rstrip('/')) + 1:]}"
                                                  for target, source in copied.items()
                                                  if written.startswith(target.rstrip("/") + "/")), None)
            wanted = inside or (None if written.startswith("/") else written)
            if wanted is None or reader_for(Path(wanted).name) is not None:
                continue  # a requirements*.txt is read where it lies, as the project's pin file
            for folder in (script.parent, *script.parent.parents)[:MAX_SCRIPT_DEPTH]:
                target = folder / wanted
                if target.is_file() and target.resolve() != script.resolve():
                    out.extend(replace(pin, source=f"{script.name}:{number}, which installs {written}, line "
                                                   f"{pin.source.rsplit(':', 1)[-1]}")
                               for pin in read_requirements(target))
                    break
                if (folder / ".git").exists():
                    break
    return out


def _environment_or_nothing(path: Path) -> list[Pin]:
    """read_environment, or no pins where the file is no readable environment (a broken file another script names
    must not stop lint: the script's own pins still count)."""
    import yaml

    try:
        return read_environment(path)
    except (OSError, UnicodeDecodeError, ValueError, TypeError, AttributeError, yaml.YAMLError):
        return []


README = re.compile(r"^readme(\.(md|rst|txt|markdown))?$", re.I)
_FENCE = re.compile(r"^\s*(```|~~~)")


_DOCKER_LINE = re.compile(r"\s*(?:sudo\s+)?docker\s+(?:run|pull)\b")


def read_readme(path: Path) -> list[Pin]:
    """The `pip install` lines of a README's code blocks (```shell ... ```): NV-Reason-CXR installs for training
    with `uv pip install trl==0.22.2 transformers==4.56.1` and pins nothing in a file; RLHFlow's pair-pm clones
    axolotl and checks out a commit. Prose and inline code are left out; find_pins uses these only for packages no
    project file pins, and only where the README agrees with itself."""
    inside, kept, prose = False, [], []  # the code blocks' lines and the rest, each blank where the other is
    for line in _text(path).splitlines():
        fence = bool(_FENCE.match(line))
        kept.append(line if inside and not fence else "")
        prose.append(line if not inside and not fence else "")
        inside = inside != fence
    installed = [pin for pin in _install_lines(kept, path.name) if not pin.own]
    named = _environment_names(kept)
    installed = [replace(pin, environment=named.get(_line_number(pin.source))) for pin in installed]
    # the framework image its code blocks run (jcparrad's `docker run ... winglian/axolotl:main-py3.10-cu118-2.0.1`)
    commands = [code or (text if _DOCKER_LINE.match(text) else "") for code, text in zip(kept, prose)]
    images = _images_named("\n".join(commands), path.name)  # a `docker run` line outside a code block too
    return installed + _listed_environment(kept, prose, path.name) + _commented_requirements(kept, path.name) + images


# a named environment made or entered: `conda create -n sim python=3.10`, `conda activate inpo`, `python -m venv .rl`
ENVIRONMENT_NAMED = re.compile(r"\b(?:conda\s+(?:create|run)\s+(?:\S+\s+)*?(?:-n|--name)\s+|"
                               r"(?:conda|source)\s+activate\s+|-m\s+venv\s+|uv\s+venv\s+)([\w.-]+)")


def _environment_names(lines: list[str]) -> dict[int, str]:
    """Line number -> the environment the README's code made or entered last above it (XuHuang441/SimPO_slurm
    installs `sim` for training and `inpo` for vLLM decoding, each with its own transformers)."""
    out, current = {}, None
    for number, line in enumerate(lines, 1):
        found = ENVIRONMENT_NAMED.search(line)
        current = found.group(1) if found else current
        out[number] = current
    return out


# a README heading over the environment the author ran: "Requirements", "Dependencies", "Environment", "依赖环境"
_ENVIRONMENT_HEADING = re.compile(r"^\s*#+\s.*(requirement|dependenc|environment|prerequisite|依赖|环境|요구|환경)",
                                  re.I)
# one of its list items naming a package and a version: `- transformers 4.27.3`, `* trl==0.9.6`, `- torch: 2.1`
_LISTED_VERSION = re.compile(r"^\s*[-*+]\s+`?([A-Za-z][\w.-]*)`?\s*(?:(==|>=|~=|<=|=)|:|\s)\s*v?(\d+(?:\.\d+)+)`?\s*$")


# a requirements-file line in a README's code block: `transformers==3.0.0`, `nlp==0.2.0 # only if you fine-tune`
# (conda's `trl=0.11.0`, HumainLab/Understand_MarginPO's "## Requirements" block, is that release and its patches)
_REQUIREMENT_LINE = re.compile(r"^\s*([A-Za-z][\w.-]*)\s*(==|>=|~=|<=|=)\s*v?(\d+(?:\.\d+)+)\s*(?:#.*)?$")


def _listed_environment(kept: list[str], prose: list[str], name: str) -> list[Pin]:
    """The versions a README gives under its requirements heading: list items of its *prose* (the lines outside code
    blocks: zejunwang1/gpt2classifier's "依赖环境": `- transformers 4.27.3`; a bare version is that release), and
    requirement lines of its code blocks, *kept* (NeilFranks/question_generation's "## Requirements" block:
    `transformers==3.0.0`): the environment the configs were written for."""
    out: list[Pin] = []
    under = False
    for number, (code, text) in enumerate(zip(kept, prose), 1):
        if re.match(r"^\s*#+\s", text):
            under = bool(_ENVIRONMENT_HEADING.match(text))
            continue
        listed = (_REQUIREMENT_LINE.match(code) if code else _LISTED_VERSION.match(text)) if under else None
        if listed and normalize(listed.group(1)) in PACKAGES:
            operator, version = listed.group(2) or "==", listed.group(3)
            out.append(Pin(normalize(listed.group(1)), f"=={version}.*" if operator == "=" else f"{operator}{version}",
                           f"{name}:{number}"))
    return out


# a code block's comment that names one exact version: `# transformers==4.48.1`
_COMMENTED_REQUIREMENT = re.compile(r"^\s*#\s*([A-Za-z][\w.-]*)\s*==\s*v?(\d+(?:\.\d+)+)\S*\s*$")


def _commented_requirements(kept: list[str], name: str) -> list[Pin]:
    """The versions a README's code block lists as a run of comments, one exact `# package==version` per line
    (uukuguy/Replicate-R1: `# torch==2.5.1`, `# transformers==4.48.1`, `# trl==0.14.0` above its install steps;
    jxiw/MambaInLlama: "check your version matches those"): the environment the author ran. A lone commented
    requirement may be an alternative left out, so only a run of two or more counts."""
    out: list[Pin] = []
    run: list[tuple[int, re.Match]] = []
    for number, line in enumerate([*kept, ""], 1):
        found = _COMMENTED_REQUIREMENT.match(line)
        if found:
            run.append((number, found))
            continue
        if len(run) >= 2:
            out += [Pin(normalize(m.group(1)), f"=={m.group(2)}", f"{name}:{at}") for at, m in run
                    if normalize(m.group(1)) in PACKAGES]
        run = []
    return out


def _install_lines(lines: list[str], name: str) -> list[Pin]:
    import shlex

    out: list[Pin] = []
    here = ""  # the folder a `cd` moved into, relative to the file's own
    cloned = {m.group(1) for line in lines for m in _GIT_CLONE.finditer(line)}  # cloned_checkouts' business
    i = 0
    while i < len(lines):
        start, line = i, lines[i]
        while i + 1 < len(lines) and (line.rstrip().endswith("\\") or  # a continued line, or one whose
                                      _PIP_INSTALL.search(line) and _ARGUMENT_LINE.match(lines[i + 1])):  # \ was lost
            i += 1
            line = line.rstrip().removesuffix("\\") + " " + lines[i]
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
            upgrade = "-U" in words or "--upgrade" in words
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
                        pin = requirement(_EXTRAS_LAST.sub(r"\1[\3]\2", word), source)
                    except ValueError:
                        pin = None
                editable = False
                if pin is not None:
                    out.append(replace(pin, upgrade=True) if upgrade and not pin.specifier and not pin.vcs
                               and pin.checkout is None else pin)
    return _last_word_upgrades(out) + cloned_checkouts(lines, name)


def _last_word_upgrades(pins: list[Pin]) -> list[Pin]:
    """*pins* of one script, an unversioned upgrade kept as one only where no later line installs the package
    again (`pip install -U trl` then `pip install trl==0.14.0` ends at 0.14.0)."""
    last = {pin.package: i for i, pin in enumerate(pins)}
    return [replace(pin, upgrade=False) if pin.upgrade and last[pin.package] != i else pin
            for i, pin in enumerate(pins)]


_CD = re.compile(r"^\s*cd\s+([\w./~-]+)\s*$")
# `pip install axolotl==0.8.0[vllm,flash-attn]` (himanshushukla12/grpo_code's README): pip refuses the extras after the
# version, and the reader who mends it keeps that version (its own how-to writes axolotl[vllm,flash-attn]==0.8.0)
_EXTRAS_LAST = re.compile(r"^([A-Za-z0-9][\w.-]*)(==[\w.+!-]+)\[([\w,.-]+)\]$")
# an indented line holding one requirement and a backslash, after a `pip install` whose continuation broke one line
# up (XuHuang441/SimPO_slurm's README: a wheel URL with trailing blanks, then `  transformers==4.44.2 \`)
_ARGUMENT_LINE = re.compile(r"^\s+[A-Za-z][\w.\[\],-]*\s*(?:[=<>~!]=?\s*[\w.*]+)?\s*\\\s*$")
# options before the URL, with their values (`--depth 1`, `-b v0.4.1`; pclucas14/SWE-agent's Amulet job)
_GIT_CLONE = re.compile(r"\bgit\s+clone\s+(?:-\S+(?:\s+(?!https?://|git@|-)\S+)?\s+)*"
                        r"(?:https?://|git@)\S*?[/:][\w.-]+/([\w.-]+?)(?:\.git)?/?(?:\s|$)")
# `git reset --hard 18e455c...` moves the clone to that commit as a checkout does (MLAI-Yonsei/ManuExtract's README)
_GIT_CHECKOUT = re.compile(r"\bgit\s+(?:checkout|switch|reset\s+--hard)\s+(?:-\S+\s+)*([\w./-]+)")
_INSTALL_HERE = re.compile(r"\bpip[\d.]*\s+install\s+(?:-\S+\s+)*(?:-e\s+|--editable\s+)?"
                           r"([\"']?)\.(?:\[[^\]]*\])?\1(?:\s|$)")  # `pip install -e '.[deepspeed]'` too
_RELEASE_TAG = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?)$")


def cloned_checkouts(lines: list[str], name: str) -> list[Pin]:
    """`git clone .../axolotl`, `cd axolotl`, `git checkout 55cc214c...`, `pip install -e .` (RLHFlow's pair-pm
    README): the framework installed from that checkout. A commit is a pin seqprof cannot place among releases, a
    release tag (`v0.4.1`) that release, and no checkout the main branch (newer than every release). A recipe layer
    (alignment-handbook) installed so brings its huggingface-hub cap."""
    out: list[Pin] = []
    clone: tuple[str, int] | None = None
    ref, fork = "", ""
    for number, line in enumerate(lines, 1):
        cloned = _GIT_CLONE.search(line)
        if cloned:
            package = _cloned_package(cloned.group(1))
            clone, ref = ((package, number) if package in FRAMEWORKS or package in RECIPE_LAYERS else None), ""
            fork = fork_repository(package, cloned.group(0)) if clone is not None else ""
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
            if clone[0] in RECIPE_LAYERS:  # junkangwu/alpha-DPO's README clones alignment-handbook and installs it
                out.append(_layer_hub_cap(clone[0], source))
                clone = None
                continue
            tag = _RELEASE_TAG.match(ref)
            if fork:  # kunato/axolotl cloned by lingjoor's Dockerfile.train: the fork's own commit, whatever its tags
                out.append(Pin(clone[0], "", f"{source} (a fork's checkout, {fork})", vcs=True, fork=fork))
            else:
                out.append(Pin(clone[0], f"=={tag.group(1)}", source) if tag else
                           Pin(clone[0], "", source, vcs=True, head=ref in ("", "main", "master")))
            clone = None
    return out


# a fork's repository named after the framework it changes (Qihoo360/360-LLaMA-Factory, which orange0629's README
# clones and installs with `pip install -e .`): that framework, at the fork's commit
_NAMED_AFTER = {"llamafactory": re.compile(r"(?:^|[-_.])llama[-_.]?factory(?:[-_.]|$)", re.I),
                "axolotl": re.compile(r"(?:^|[-_.])axolotl(?:[-_.]|$)", re.I),
                "torchtune": re.compile(r"(?:^|[-_.])torchtune(?:[-_.]|$)", re.I)}


def _cloned_package(repository: str) -> str:
    """The package a cloned *repository* (its name) holds: the framework it is named after, else its own name."""
    package = normalize(repository)
    if package in FRAMEWORKS or package in RECIPE_LAYERS:
        return package
    return next((framework for framework, named in _NAMED_AFTER.items() if named.search(repository)), package)


def read_gitmodules(path: Path) -> list[Pin]:
    """A framework vendored as a git submodule (`url = https://github.com/pytorch/torchtune.git`): the commit the
    submodule records, which seqprof cannot place among releases. A submodule of another repository named after the
    framework is a fork of it (open-thoughts/OpenThoughts-Agent's sft/llamafactory is mlfoundations/llama-factory,
    whose parser declares include_mfu)."""
    out = []
    for number, line in enumerate(_text(path).splitlines(), 1):
        url = re.match(r"^\s*url\s*=\s*(\S+?)(?:\.git)?/?\s*$", line)
        if url is None:
            continue
        name = _cloned_package(re.split(r"[/:]", url.group(1))[-1])
        if name not in PACKAGES:
            continue
        fork = fork_repository(name, url.group(1))
        said = f"a git submodule, a fork: {fork}" if fork else "a git submodule"
        out.append(Pin(name, "", f"{path.name}:{number} ({said})", vcs=True, head=False, fork=fork))
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
    conflicting = _uv_conflicting_groups(data)
    lines = text.splitlines()
    # (requirement, the line its group's list opens on, the environment a conflicting group makes)
    strings: list[tuple[str, int, str | None]] = [(s, 0, None) for s in data.get("project", {}).get("dependencies", [])]
    for kind, group in (("extra", data.get("project", {}).get("optional-dependencies", {})),
                        ("group", data.get("dependency-groups", {})),
                        ("group", data.get("tool", {}).get("pdm", {}).get("dev-dependencies", {}))):
        for name, items in group.items():
            environment = f"uv {kind} {name}" if (kind, name) in conflicting else None
            start = next((i for i, ln in enumerate(lines)
                          if re.match(rf"""\s*["']?{re.escape(name)}["']?\s*=\s*\[""", ln)), 0)
            strings.extend((s, start, environment) for s in items if isinstance(s, str))
    out = []
    for s, start, environment in strings:
        m = _EDITABLE.match(s) or _URL_REQUIREMENT.match(s) or _REQUIREMENT.match(s)
        if m:
            line = next((i for i, ln in enumerate(lines[start:], start + 1) if f'"{s}"' in ln or f"'{s}'" in ln),
                        None)  # the line in its own group, where two groups pin one package
            pin = requirement(s, f"{path.name}:{line or _line_of(text, m.group(1))}")
            if pin is not None:
                out.append(replace(pin, environment=environment))
    own = _pyproject_own_version(data, text, path)
    if own is not None:
        out.append(own)
    python = data.get("project", {}).get("requires-python")
    if isinstance(python, str) and python.strip():  # the interpreter the project runs on: pip refuses a transformers
        # whose own Requires-Python it misses (karbon-asr's ">=3.9, <3.11" meets no transformers from 5.21 on)
        out.append(Pin("python", python.replace(" ", ""), f"{path.name}:{_line_of(text, 'requires-python')}"))
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


def _uv_conflicting_groups(data: Mapping) -> set[tuple[str, str]]:
    """("group", name) / ("extra", name) of the dependency groups and extras `[tool.uv] conflicts` declares
    mutually exclusive: each is an environment of its own (atomwalk12/linalg-zero's data-gen, sft and grpo groups pin
    transformers 4.55.2, 4.56.2 and >=4.53.2, one `uv sync --group` at a time), not one set of pins."""
    out = set()
    sets = data.get("tool", {}).get("uv", {}).get("conflicts", [])
    for members in sets if isinstance(sets, list) else ():
        for member in members if isinstance(members, list) else ():
            if isinstance(member, Mapping):
                out |= {(kind, str(member[kind])) for kind in ("group", "extra") if kind in member}
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
    named = data.get("name") if isinstance(data.get("name"), str) else None  # `name: sim`: the env it creates
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
        if re.fullmatch(r"=[^=<>!~].*", spec):  # `python=3.8.13=h12debd9_0`: version, then a build string
            spec = "==" + spec[1:].split("=")[0].rstrip("*").rstrip(".") + ".*"
        elif re.fullmatch(r"==[^=]+=[^=]+", spec):  # `python==3.8.13=h12debd9_0`
            spec = spec.rsplit("=", 1)[0]
        out.append(Pin(normalize(m.group(1)), spec, f"{path.name}:{_line_of(text, m.group(1))}"))
    return [replace(pin, environment=named) for pin in out]


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
    # the package's own name (`setup(name="alignment-handbook")` in a copy of the handbook) is no requirement
    optional |= {id(kw.value) for node in ast.walk(tree) if isinstance(node, ast.Call) for kw in node.keywords
                 if kw.arg == "name"}
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


MIN_LISTED_REQUIREMENTS = 3  # a list of fewer strings is not a dependency table


def setup_copy_pins(path: Path) -> list[Pin]:
    """A setup.py copy's requirement lists, and the framework images it names as any Python launcher does."""
    return requirement_lists(path) + launcher_pins(path)


def requirement_lists(path: Path) -> list[Pin]:
    """Pins from the literal requirement lists of a Python file that is not setup.py (a copy of one under another
    name): a list of MIN_LISTED_REQUIREMENTS or more strings, each a requirement, as the handbook's ``_deps`` table
    is. Other strings in the file (a script's paths, its messages) pin nothing."""
    from packaging.requirements import InvalidRequirement, Requirement

    tree = ast.parse(_text(path))
    out: list[Pin] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.List) or len(node.elts) < MIN_LISTED_REQUIREMENTS or not all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            continue
        try:
            for e in node.elts:
                Requirement(e.value)
            listed = [requirement(e.value, f"{path.name}:{e.lineno}") for e in node.elts]
        except (InvalidRequirement, ValueError):
            continue  # a list of other strings
        out.extend(pin for pin in listed if pin is not None)
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
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # Path(here) / "src" / "axolotl" / ...
            parts = _divided_path(node)
        if not parts or not parts[-1].endswith(".py") or any(p in ("..", "") for p in parts):
            continue
        file = root.joinpath(*parts)
        version = _assigned_string(file, ("VERSION", "__version__")) if file.is_file() else None
        if version:
            return version, f"{'/'.join(parts)} (setup.py's version)"
    return None


def _divided_path(node: ast.BinOp) -> list[str]:
    """The literal parts of a pathlib chain, `Path(os.path.dirname(__file__)) / "src" / "axolotl" / "__init__.py"`
    -> ['src', 'axolotl', '__init__.py'] (axolotl's own setup.py get_package_version)."""
    parts: list[str] = []
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        if not (isinstance(node.right, ast.Constant) and isinstance(node.right.value, str)):
            return []
        parts.insert(0, node.right.value)
        node = node.left
    return parts


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
    if file is None and "version" in (project.get("dynamic") or []) and (path.parent / "setup.py").is_file():
        try:  # setup(version=get_package_version()) reading src/axolotl/__init__.py (a fork of axolotl's 0.13 layout)
            written = _version_module(ast.parse(_text(path.parent / "setup.py")), path.parent)
        except SyntaxError:
            written = None
        return _own_version(name, *written) if written else None
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

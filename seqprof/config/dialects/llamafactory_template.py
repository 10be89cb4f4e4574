"""LLaMA-Factory's `template:` against the chat templates the release that runs registers: any other name stops the run
at data loading (data/template.py get_template_and_fix_tokenizer: "Template X does not exist."), once the tokenizer
has loaded and before the model loads. Releases add templates (qwen3 in 0.9.3) and drop them (0.9.5 dropped
baichuan2, cpm3, xverse ...), so the name is judged by the releases the project's pins allow, and an unpinned
project's (most often a clone of main) by every name a release or a commit of main ever registered."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from seqprof.config.dialects.common import nearest
from seqprof.config.key_history import KeyHistory
from seqprof.config.loader import LoadedConfig
from seqprof.config.plan import ConfigDiagnostic
from seqprof.config.pins import Pins

TEMPLATE = "template"  # key_history.json llamafactory "values": the names each release registers
NAME = re.compile(r"[A-Za-z0-9][\w.\-]*")  # a name, not a blank (`<model_template>`, `${TEMPLATE}`, '')
REGISTERED = re.compile(r"""register_template\(\s*(?:name\s*=\s*)?(?:(["'])([^"'\n]+)\1|([^\s,)]+))""")
# a folder named after LLaMA-Factory the config sits in: a copy whose data/template.py may register its own names
# (NovaSky-AI/SkyThought's skythought/train/LLaMA-Factory registers qwen25)
COPY_FOLDER = re.compile(r"llama[-_ ]?factory", re.I)


def unregistered_template(cfg: LoadedConfig, pins: Pins, own_pins: Pins) -> ConfigDiagnostic | None:
    """`template: X` that no LLaMA-Factory release the project's own llamafactory pin allows registers (*pins*: with
    the caps its other pins put on it; *own_pins*: as its files state them). With no llamafactory pin of its own (or
    a git install of hiyouga/LLaMA-Factory) the project most often runs a clone of main, whose templates lie between
    releases (main registered `gpt` from August to December 2025, in no release): then a name is judged against every
    name main ever registered (keys/llamafactory_main_templates.json). Not judged: a copy or fork of LLaMA-Factory
    (SkyThought's registers `qwen25`), a checkout in the project, a name the project registers itself
    (register_template in its code, or in the steps its README and scripts give), and a blank a launcher fills in."""
    name = cfg.get(TEMPLATE)
    if not isinstance(name, str) or not NAME.fullmatch(name) or _own_copy(cfg.path, pins) or \
            _registered_by_project(cfg.path, name):
        return None
    history = KeyHistory.load()
    pinned = bool(own_pins.of("llamafactory"))
    if not pinned:
        return _unregistered_on_main(cfg, name, history)
    allowed = history.allowed("llamafactory", pins)
    if not allowed:
        return None  # pins no release meets: a copy seqprof cannot date
    having = history.having("llamafactory", name, [TEMPLATE], table="values")
    if having & set(allowed):
        return None  # a release the pins allow registers it (which one pip picks depends on more than the pins)
    run = allowed[-1]
    order = history.versions("llamafactory")
    runs = f"LLaMA-Factory {allowed[0]}" + (f"-{run}" if len(allowed) > 1 else "")
    later = [v for v in order if v in having and order.index(v) > order.index(run)]
    earlier = [v for v in order if v in having and order.index(v) < order.index(allowed[0])]
    if later:
        since = f"; {later[0]} added it, so it needs llamafactory>={later[0]}"
    elif earlier:
        gone = order[order.index(earlier[-1]) + 1]
        since = f"; releases up to {earlier[-1]} registered it, {gone} dropped it"
    else:
        since = f"; no LLaMA-Factory release ({order[0]}-{order[-1]}) registers it"
    choices = sorted(v for v in history.data["llamafactory"]["values"][TEMPLATE]["fields"]
                     if run in history.having("llamafactory", v, [TEMPLATE], table="values"))
    guess = _guess(name, choices) if not later and not earlier else None
    return _diagnostic(cfg, name, f"{runs} (the releases {pins.describe('llamafactory')} allows) registers",
                       since, guess)


def _unregistered_on_main(cfg: LoadedConfig, name: str, history: KeyHistory) -> ConfigDiagnostic | None:
    """An unpinned project's name, judged by every name a release or a commit of main ever registered."""
    main = main_templates()
    order = history.versions("llamafactory")
    released = history.data["llamafactory"]["values"][TEMPLATE]["fields"]
    if name in main["templates"] or name in released:
        return None
    now = sorted(n for n, spans in main["templates"].items() if spans[-1][1] is None)
    return _diagnostic(cfg, name, "LLaMA-Factory (no llamafactory pin found: a clone of main or the newest "
                       "release) registers", f"; no release ({order[0]}-{order[-1]}) and no commit of main "
                       f"(to {main['head']['day']}) ever registered it", _guess(name, now))


def _guess(name: str, choices: list[str]) -> str | None:
    # two edits make `kimi` `mimo`: a short name's near miss is one edit away
    guess = nearest(name, choices, reach=1 if len(name) < 8 else 2)
    return guess[0] if len(guess) == 1 else None


def _diagnostic(cfg: LoadedConfig, name: str, who: str, since: str, guess: str | None) -> ConfigDiagnostic:
    return ConfigDiagnostic(
        kind="invalid_value", key=TEMPLATE, file=cfg.path, line=cfg.line(TEMPLATE) or 1,
        message=f"{who} no chat template '{name}' (data/template.py){since}: get_template_and_fix_tokenizer "
                f"raises \"Template {name} does not exist.\" once the tokenizer has loaded, before the model "
                "loads" + (f"; did you mean {guess!r}?" if guess else ""),
        suggestion=f"template: {guess}" if guess else None)


@functools.lru_cache(maxsize=1)
def main_templates() -> dict:
    """keys/llamafactory_main_templates.json (scripts/gen_llamafactory_main_templates.py): each name main
    registered, with the days it came and went."""
    return json.loads((Path(__file__).parent / "keys" / "llamafactory_main_templates.json").read_text())


def _own_copy(config_path: str, pins: Pins) -> bool:
    """The project runs a LLaMA-Factory whose templates neither releases nor main say: it is a fork or carries a copy
    (named llamafactory, or a LLaMA-Factory folder the config sits in), or installs one from a checkout or a fork's
    git URL (a git install of hiyouga/LLaMA-Factory is main)."""
    from seqprof.config.dialects.llamafactory import carries_llamafactory
    from seqprof.config.project_fields import framework_fork, project_root, vendored_checkout

    vcs = pins.vcs("llamafactory")
    if vcs is not None and vcs.fork or framework_fork(config_path) is not None or \
            carries_llamafactory(config_path):
        return True
    path = Path(config_path).resolve()
    root = project_root(config_path)
    inside = path.parent.relative_to(root).parts if path.is_relative_to(root) else ()
    return any(COPY_FOLDER.search(part) for part in (root.name, *inside)) or \
        vendored_checkout(config_path, "llamafactory") is not None


def _registered_by_project(config_path: str, name: str) -> bool:
    """Whether the project registers templates itself under this name, or under one it builds at run time: its code
    (`from llamafactory.data.template import register_template`, then register_template(name="my_chat", ...)), or
    the steps its README and scripts give for a clone (AI-confused/RolePlay-LLM's README: add
    `_register_template(name="qwen-roleplay", ...)` to the clone's data/template.py)."""
    from seqprof.config.project_fields import project_root, python_files, source_text

    if not Path(config_path).is_file():
        return False
    root = project_root(config_path)
    for file in [*python_files(root), *_text_files(root)]:
        text = source_text(file)
        if "register_template" not in text:
            continue
        if file.suffix != ".py" and (_word(name).search(text) or EDITED_REGISTRY.search(text)):  # a step that
            return True  # registers it, or has the clone's data/template.py edited (Lumiat/ParaGen-Dataset's README)
        for match in REGISTERED.finditer(text):
            if match.group(2) == name or match.group(3) and file.suffix == ".py":  # its name, or one it computes
                return True
    return False


# data/template.py, not a script of the project's own (EgoBlind-RA runs scripts/register_template.py)
EDITED_REGISTRY = re.compile(r"(?<![\w])template\.py")


def _word(name: str) -> re.Pattern:
    """*name* as a whole name: `kimi` is not in `kimi_vl_nothink`."""
    return re.compile(rf"(?<![\w.\-]){re.escape(name)}(?![\w.\-])")


TEXT_FILES = (".md", ".rst", ".txt", ".sh", ".ipynb")
MAX_TEXT_FILES = 400


def _text_files(root: Path) -> list[Path]:
    """The READMEs, docs, shell scripts and notebooks of the project, its root and two folders down."""
    import os

    from seqprof.config.project_fields import SKIPPED_FOLDERS

    found: list[Path] = []
    for folder, dirs, names in os.walk(root):
        depth = len(Path(folder).relative_to(root).parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS) if depth < 2 else []
        found.extend(Path(folder) / n for n in sorted(names) if n.lower().endswith(TEXT_FILES))
        if len(found) >= MAX_TEXT_FILES:
            break
    return found[:MAX_TEXT_FILES]

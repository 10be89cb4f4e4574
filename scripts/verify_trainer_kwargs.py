"""Check keys/trl_trainer_kwargs.json against the real constructors of the installed TRL release.

    python scripts/verify_trainer_kwargs.py       # in an environment with torch and one trl release

For every trainer class the table knows and the installed trl exports (from `trl`, else `trl.experimental.*`), it
calls the class with one keyword at a time, each keyword any release's constructor took, and records what Python
does: a TypeError naming the keyword as unexpected (refused), or anything else (taken: the call got past binding
its arguments, and failed later for want of a model, or not at all). That is set beside what seqprof's table says
for that release (SP408 / SP403 on a config key a script hands the trainer) and every disagreement is printed; the
exit status is the number of them. The table's '**' (keywords passed on to transformers' Trainer) is left out:
those the Trainer refuses are refused here too.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from pathlib import Path

TABLE = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys" / "trl_trainer_kwargs.json"


def _release(version: str, known: list[str]) -> str | None:
    """The generated release standing for *version* (same minor), None when the table has none."""
    minor = version.split(".")[:2]
    return next((v for v in known if v.split(".")[:2] == minor), None)


def _takes(spans: list, version: str, order: list[str]) -> bool:
    index = order.index(version)
    return any(order.index(since) <= index and (until is None or index < order.index(until)) for since, until in spans)


def _find_class(trl, name: str):
    """The class *name* as the installed trl exports it; None when it does not, or its optional dependency
    (diffusers for DDPO/AlignProp) is not installed."""
    try:
        found = getattr(trl, name, None)
    except Exception:  # noqa: BLE001 - trl's lazy module raises RuntimeError on a missing optional dependency
        return None
    if found is not None:
        return found
    try:
        experimental = importlib.import_module("trl.experimental")
    except ImportError:
        return None
    for module in pkgutil.iter_modules(experimental.__path__, "trl.experimental."):
        try:
            found = getattr(importlib.import_module(module.name), name, None)
        except Exception:  # an optional dependency of another experimental trainer
            continue
        if found is not None:
            return found
    return None


def refused(cls, keyword: str) -> bool:
    """Whether calling *cls* with *keyword* alone fails on that keyword as Python binds the call."""
    try:
        cls(**{keyword: None})
    except TypeError as exc:
        return "unexpected keyword argument" in str(exc) and f"'{keyword}'" in str(exc)
    except Exception:  # noqa: BLE001 - past binding: no model, no dataset ...
        return False
    return False


def main() -> int:
    import trl

    table = json.loads(TABLE.read_text())
    order = table["versions"]
    release = _release(trl.__version__, order)
    if release is None:
        print(f"trl {trl.__version__}: no release of its minor in the table")
        return 1
    disagreements = checked = 0
    for name, entry in sorted(table["classes"].items()):
        if not _takes(entry["versions"], release, order):
            continue
        cls = _find_class(trl, name)
        if cls is None:
            continue
        for keyword, spans in sorted(entry["fields"].items()):
            if keyword == "**":
                continue
            says = _takes(spans, release, order) or _takes(entry["fields"].get("**", []), release, order)
            real = not refused(cls, keyword)
            checked += 1
            if says != real:
                disagreements += 1
                print(f"{name}({keyword}=...): table says {'taken' if says else 'refused'} at trl {release}, "
                      f"trl {trl.__version__} {'takes' if real else 'refuses'} it")
    print(f"trl {trl.__version__} (table: {release}): {checked} keywords checked, {disagreements} disagreements")
    return disagreements


if __name__ == "__main__":
    sys.exit(main())

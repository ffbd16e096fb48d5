"""Count the names of shared/api-targets.md that each tracejit module offers.

    python tools/api_coverage.py [path/to/api-targets.md] [--missing]

The default list is tools/api-targets.md, a copy of the team's shared/api-targets.md (refresh
it when that file changes).

Prints one line per module: offered / listed, and with --missing the names still absent.
A name counts when the module has an attribute of that name (a dotted name, `debug.print`,
one attribute after another; `make_jaxpr (here: make_ir)` is looked up as `make_ir`).
tests/unit/test_api_coverage.py fails on any missing name it does not list with a reason;
tests/backend/test_tnp_surface.py checks that each offered tracejit.numpy name is tested.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

DEFAULT = Path(__file__).resolve().parent / "api-targets.md"
# heading in api-targets.md -> the tracejit module that should offer its names
MODULES = {
    "tracejit.numpy": "tracejit.numpy",
    "tracejit.numpy.linalg": "tracejit.numpy.linalg",
    "tracejit.numpy.fft": "tracejit.numpy.fft",
    "tracejit.random": "tracejit.random",
    "tracejit.nn": "tracejit.nn",
    "tracejit.lax": "tracejit.lax",
    "tracejit": "tracejit",
}


def _name(item: str) -> str:
    """The name to look up for one backticked item: its first word, or its `(here: x)`."""
    here = re.search(r"\(here: ([^)\s]+)\)", item)
    return here.group(1) if here else item.split()[0]


def targets(text: str) -> dict[str, list[str]]:
    """{module heading: [names]} from the `## module (...)` sections of api-targets.md."""
    out = {}
    for section in re.split(r"^## ", text, flags=re.MULTILINE)[1:]:
        heading, _, body = section.partition("\n")
        module = heading.split()[0].rstrip(":")
        if module in MODULES:
            out[module] = [_name(n) for n in re.findall(r"`([^`]+)`", body)]
    return out


def stated_counts(text: str) -> dict[str, int]:
    """{module heading: N} for the headings that state `N names`."""
    found = re.findall(r"^## (\S+?):?(?: \([^)]*\))?:? (\d+) names", text, flags=re.MULTILINE)
    return {module: int(n) for module, n in found}


def has(module, name: str) -> bool:
    """Whether `module` offers `name` (dotted: one attribute after another)."""
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def _module(name: str):
    """The module, None when it does not exist (yet)."""
    try:
        return importlib.import_module(MODULES[name])
    except ImportError:
        return None


def coverage(text: str) -> dict[str, tuple[list[str], list[str]]]:
    """{module: (offered names, missing names)}."""
    result = {}
    for module, names in targets(text).items():
        mod = _module(module)
        have = [n for n in names if mod is not None and has(mod, n)]
        result[module] = (have, [n for n in names if n not in have])
    return result


def main(argv: list[str]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's tracejit
    paths = [a for a in argv if not a.startswith("--")]
    text = Path(paths[0] if paths else DEFAULT).read_text()
    for module, (have, missing) in coverage(text).items():
        print(f"{module:24} {len(have):4d} / {len(have) + len(missing)}")
        if "--missing" in argv and missing:
            print("    missing:", " ".join(missing))


if __name__ == "__main__":
    main(sys.argv[1:])

"""Produce the IR and code shown in docs/compiler.md by running tracejit on one function.

    python tools/docs_pipeline.py            # print every stage
    python tools/docs_pipeline.py --write    # refresh the marked blocks of docs/compiler.md
                                             # and its picture (needs Graphviz's `dot`)

The page marks each generated block with an HTML comment naming its stage, right above the
fence (`<!-- pipeline:traced -->`). tests/backend/test_docs.py checks that every marked block still
equals what tracejit prints, so the page cannot drift from the compiler.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import tracejit as tj
from tracejit import dot

PAGE = Path(__file__).resolve().parent.parent / "docs" / "compiler.md"
PICTURE = PAGE.parent / "img" / "log_softmax_schedule.svg"  # the schedule_dot stage, drawn
MARK = re.compile(r"(<!-- pipeline:(?P<stage>[a-z_]+) -->\n```\w*\n)(?P<body>.*?)(```)", re.DOTALL)


def log_softmax(x):
    """Written the naive way: the compiler makes it stable and fuses it into one kernel."""
    return np.log(np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True))


def _kernels_only(source: str) -> str:
    """The kernel functions of the schedule: no shared preamble, no entry point and step
    table (the page describes those in prose; they change more often than kernels do)."""
    start = source.index("static void k0")
    ends = [source.find(m, start) for m in ("static int tj_step", 'extern "C" int tj_run')]
    end = min(e for e in ends if e >= 0)
    return source[start:end].rstrip() + "\n"


def stages() -> dict[str, str]:
    """Every stage of compiling `log_softmax` on an f32[4,8] input, as tracejit prints it:
    the debug dump's files (`00_traced.txt` is the stage `traced`) and a few more."""
    x = np.zeros((4, 8), np.float32)
    saved = (tj.config.debug_dir, tj.config.default_device)
    with tempfile.TemporaryDirectory() as tmp:
        tj.config.debug_dir, tj.config.default_device = tmp, "cpu"
        try:
            tj.jit(log_softmax)(x)
        finally:
            tj.config.debug_dir, tj.config.default_device = saved
        (folder,) = Path(tmp).iterdir()
        found = {
            p.name.split("_", 1)[1].removesuffix(".txt").replace(".", "_"): p.read_text()
            for p in folder.iterdir()
        }
    _, vjp_fn = tj.vjp(log_softmax, x)
    found["kernel"] = _kernels_only(found.pop("source_cpp"))
    lowered = tj.jit(log_softmax).lower(x)
    found["optimized"] = lowered.as_text() + "\n"
    found["schedule_dot"] = dot.schedule_dot(lowered)
    found["vjp_forward"] = str(vjp_fn.forward) + "\n"
    found["vjp_backward"] = str(vjp_fn.backward) + "\n"
    return found


def refresh(page: str, found: dict[str, str]) -> str:
    """`page` with every marked block replaced by the stage it names."""

    def fill(m: re.Match) -> str:
        if m["stage"] not in found:
            raise KeyError(f"docs/compiler.md marks an unknown stage {m['stage']!r}")
        return m.group(1) + found[m["stage"]] + m.group(4)

    return MARK.sub(fill, page)


def marked_stages(page: str) -> list[str]:
    return [m["stage"] for m in MARK.finditer(page)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/compiler.md")
    args = parser.parse_args(argv)
    found = stages()
    if args.write:
        PAGE.write_text(refresh(PAGE.read_text(), found))
        PICTURE.parent.mkdir(exist_ok=True)
        subprocess.run(
            ["dot", "-Tsvg", "-o", str(PICTURE)], input=found["schedule_dot"], text=True, check=True
        )  # Graphviz
        print(f"updated {PAGE} and {PICTURE}")
        return 0
    for name, text in found.items():
        print(f"=== {name}\n{text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

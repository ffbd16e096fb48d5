"""Run the code blocks of a Markdown page: shared by tests/backend/test_readme.py and test_docs.py.

A ```python block runs; blocks of one page run in order in one namespace, so a page can build
on its earlier blocks. A ``` or ```text block right after a python block is that block's
expected output: what it prints must equal it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
from pathlib import Path

import tracejit as tj

FENCE = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclasses.dataclass
class Block:
    lang: str  # the fence's first word ("python", "bash", "text" or "")
    line: int  # the line of the block's first code line in the page
    code: str
    expected_output: str | None = None  # for python blocks followed by an output block


def blocks(text: str) -> list[Block]:
    """The fenced code blocks of a page, each python block with its expected output."""
    found: list[Block] = []
    previous: Block | None = None  # a python block that just ended, without output yet
    previous_end = 0
    for m in FENCE.finditer(text):
        lang = (m["info"].split() or [""])[0]
        line = text.count("\n", 0, m.start("body")) + 1
        follows = previous is not None and not text[previous_end : m.start()].strip()
        if lang in ("", "text") and follows:
            previous.expected_output = m["body"]
            previous = None
        else:
            found.append(Block(lang, line, m["body"]))
            previous = found[-1] if lang == "python" else None
        previous_end = m.end()
    return found


@contextlib.contextmanager
def saved_config():
    """Restore every `tj.config` setting a page changes."""
    before = {f.name: getattr(tj.config, f.name) for f in dataclasses.fields(tj.config)}
    try:
        yield
    finally:
        for name, value in before.items():
            setattr(tj.config, name, value)


def run_python_blocks(path: Path) -> int:
    """Run every python block of `path` in order; returns how many ran.

    Tracebacks point at the page: code is compiled under the page's name with its own line
    numbers."""
    namespace: dict = {"__name__": f"page_{path.stem.replace('-', '_')}"}
    ran = 0
    with saved_config():
        for block in blocks(path.read_text()):
            if block.lang != "python":
                continue
            code = compile("\n" * (block.line - 1) + block.code, str(path), "exec")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(code, namespace)  # noqa: S102  (running the page is the test)
            if block.expected_output is not None:
                assert out.getvalue() == block.expected_output, (
                    f"{path.name}:{block.line}: the output shown under this block differs from "
                    f"what it prints:\n{out.getvalue()}"
                )
            ran += 1
    return ran

"""The documentation is true: every Python example in docs/*.md runs (and prints what the page
shows under it), every page is in the site's navigation, and the IR and code that
docs/compiler.md shows are what tracejit prints today."""

from __future__ import annotations

import html
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _markdown import blocks, run_python_blocks

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))


def _has_python(page: Path) -> bool:
    return any(b.lang == "python" for b in blocks(page.read_text()))


@pytest.mark.parametrize("page", [p for p in PAGES if _has_python(p)], ids=lambda p: p.name)
def test_page_examples_run(page, tmp_path, monkeypatch):
    if "graph_svg(" in page.read_text() and shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed (apt install graphviz): the page renders SVG")
    monkeypatch.chdir(tmp_path)  # files an example writes land in a scratch folder
    assert run_python_blocks(page) > 0


def test_the_site_builds_without_warnings(tmp_path):
    """`mkdocs build --strict` (every warning an error: broken links, missing API names)."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("MkDocs is not installed (pip install -e '.[test]' installs it)")
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(cmd, check=False, cwd=ROOT, capture_output=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    assert (tmp_path / "site" / "api" / "index.html").is_file()


def test_every_page_is_in_the_navigation():
    nav = re.findall(r":\s*([\w-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.MULTILINE)
    assert sorted(nav) == sorted(p.name for p in PAGES)


def test_api_page_names_exist():
    """Every `::: name` of docs/api.md (rendered by mkdocstrings) and every member it lists
    is importable, so the reference cannot point at a moved or removed name."""
    entries: list[tuple[str, list[str]]] = []
    for line in (DOCS / "api.md").read_text().splitlines():
        if line.startswith("::: "):
            entries.append((line[4:].strip(), []))
        elif line.strip().startswith("members: [") and entries:
            entries[-1][1].extend(m.strip() for m in line.split("[")[1].rstrip("]").split(","))
    assert len(entries) >= 30
    for name, members in entries:
        obj = _resolve(name)
        for member in members:
            assert hasattr(obj, member), f"docs/api.md: {name} has no member {member}"


def _resolve(name: str):
    module, _, attr = name.rpartition(".")
    try:
        return importlib.import_module(name)
    except ImportError:
        return getattr(importlib.import_module(module), attr)


def test_compiler_page_shows_what_tracejit_prints():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import docs_pipeline
    finally:
        sys.path.remove(str(ROOT / "tools"))
    page = (DOCS / "compiler.md").read_text()
    stages = docs_pipeline.stages()
    assert len(docs_pipeline.marked_stages(page)) >= 6
    refreshed = docs_pipeline.refresh(page, stages)
    for stage in docs_pipeline.marked_stages(page):
        mine = _marked_block(page, stage)
        now = _marked_block(refreshed, stage)
        assert mine == now, (
            f"docs/compiler.md's {stage!r} block is out of date; what tracejit prints now:\n"
            f"{now}\nRefresh the page with `python tools/docs_pipeline.py --write` and reread "
            "its prose around that block."
        )


def test_compiler_page_picture_draws_the_schedule_shown():
    """docs/img/log_softmax_schedule.svg (rendered by Graphviz) is not stale: every label of
    the page's schedule_dot block appears in its text."""
    page = (DOCS / "compiler.md").read_text()
    labels = re.findall(r'label="((?:[^"\\]|\\.)*)"', _marked_block(page, "schedule_dot"))
    svg = ET.parse(DOCS / "img" / "log_softmax_schedule.svg").getroot()
    texts = {(t.text or "").strip() for t in svg.iter() if t.tag.endswith("text")}
    lines = {line.strip() for lab in labels for line in lab.split("\\n")}
    assert len(lines) >= 6
    assert lines <= {html.unescape(t) for t in texts}, lines - texts


def _marked_block(page: str, stage: str) -> str:
    fenced = page.split(f"<!-- pipeline:{stage} -->", 1)[1].split("```", 2)[1]
    return fenced.split("\n", 1)[1]  # without the fence's language word

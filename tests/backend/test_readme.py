"""The README works as written: its Python blocks run, and its shell commands are checked.

Shell commands are parsed (`bash -n`); each one is then run when it is cheap and safe here
(the example programs, `python -m tracejit ...`), or checked against the repository: the
files it runs exist, the extras it installs are defined in pyproject.toml, and the test
command is the one CI runs (.ci/run).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from _markdown import blocks, run_python_blocks

import tracejit as tj

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SHELL = ("bash", "sh", "shell", "console")


def shell_commands() -> list[str]:
    """Every simple command of the README's shell blocks, comments and `&&` chains split."""
    commands = []
    for block in blocks(README.read_text()):
        if block.lang not in SHELL:
            continue
        for line in block.code.splitlines():
            line = line.split(" #")[0].strip()
            commands += [c.strip() for c in line.split("&&") if c.strip()]
    return commands


def _words(command: str) -> list[str]:
    """The command's words without leading `VAR=value` and `env -u NAME` prefixes."""
    words = shlex.split(command)
    while words and (re.fullmatch(r"[A-Z_]+=\S*", words[0]) or words[0] == "env"):
        words = words[3:] if words[0] == "env" and words[1:2] == ["-u"] else words[1:]
        while words[:1] == ["-u"]:
            words = words[2:]
    return words


def _extras() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text()
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([a-z0-9_-]+)\s*=", section, re.MULTILINE))


def _run(words: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "TRACEJIT_CACHE_DIR": tj.config.cache_dir}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, *words[1:]], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )


def test_readme_python_blocks_run():
    assert run_python_blocks(README) >= 3


def test_readme_shell_blocks_parse():
    for block in blocks(README.read_text()):
        if block.lang in SHELL:
            subprocess.run(["bash", "-n", "-c", block.code], check=True)


def test_readme_states_the_two_commands_with_the_venv_step():
    venv = "python3 -m venv .venv && . .venv/bin/activate && "
    text = README.read_text()
    assert venv + 'pip install -e ".[examples]" && python examples/train_mlp.py' in text
    assert venv + 'pip install -e ".[test]" && python -m pytest' in text
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install -e ".[test]"' in ci and "python -m pytest" in ci  # the same commands


@pytest.mark.parametrize("command", shell_commands())
def test_readme_shell_command(command):
    words = _words(command)
    if words[:1] == ["pip"]:
        for spec in (w for w in words if w.startswith(".[")):
            missing = set(spec[2:-1].split(",")) - _extras()
            assert not missing, f"{command!r}: pyproject.toml has no extra {missing}"
    elif words[:3] == ["python", "-m", "pytest"]:  # CI runs the suite; check its target
        assert all((ROOT / w).exists() for w in words[3:]), f"{command!r}: a path is missing"
    elif words[:1] == ["mkdocs"]:  # building the site needs the docs extra; check its config
        assert words == ["mkdocs", "build", "--strict"] and (ROOT / "mkdocs.yml").exists()
    elif words[:3] == ["python", "-m", "tracejit"] or (
        words[:1] == ["python"] and words[1].startswith("examples/")
    ):
        done = _run(words)
        assert done.returncode == 0, f"{command!r} failed:\n{done.stdout}\n{done.stderr}"
    elif words[:1] == ["mpiexec"]:  # tests/backend/test_distributed.py runs it (when MPI is here)
        assert words[3] == "python" and (ROOT / words[4]).exists(), command
    elif words[:1] in (["python"], ["bash"]):
        assert (ROOT / words[1]).exists(), f"{command!r}: {words[1]} is missing"
    else:
        assert words[:3] == ["python3", "-m", "venv"] or words[:1] == ["."], (
            f"the README's command {command!r} is not checked by tests/backend/test_readme.py"
        )

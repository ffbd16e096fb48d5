"""The examples gallery runs: each program, with small sizes where it has them, reaches its
own success check (each exits with an error when its result is wrong: accuracy too low, the
target missed, the loss not going down). train_mlp.py runs in tests/test_readme.py."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

CASES = {
    "quickstart.py": ([], "quickstart OK"),
    "logistic_lbfgs.py": ([], "test accuracy"),
    "nbody_aim.py": (["--steps", "300"], "lands the probe"),
    "char_gru.py": (["--steps", "15", "--hidden", "32"], "sample:"),
}


def test_every_example_is_smoke_tested():
    tested = set(CASES) | {"train_mlp.py"}
    assert {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")} == tested


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_runs(name, monkeypatch, capsys):
    args, final = CASES[name]
    monkeypatch.setattr(sys, "argv", [name, *args])
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")  # SystemExit on a failed check
    out = capsys.readouterr().out
    assert final in out, out[-2000:]

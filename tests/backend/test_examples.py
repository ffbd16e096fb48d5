"""The examples gallery runs: each program, with small sizes where it has them, reaches its
own success check (each exits with an error when its result is wrong: accuracy too low, the
target missed, the loss not going down). train_mlp.py runs in tests/backend/test_readme.py."""

from __future__ import annotations

import importlib.util
import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CASES = {
    "quickstart.py": ([], "quickstart OK"),
    "logistic_lbfgs.py": ([], "test accuracy"),
    "nbody_aim.py": (["--steps", "300"], "lands the probe"),
    "char_gru.py": (["--steps", "15", "--hidden", "32"], "sample:"),
    "cnn_digits.py": ([], "final test accuracy"),
    "vae_digits.py": (["--epochs", "12"], "negative ELBO"),
}
# the PNGs an example draws given `--plot DIR/name.png` (when matplotlib is installed)
PLOTS = {
    "cnn_digits.py": ["cnn.png"],
    "vae_digits.py": ["vae.png", "vae_samples.png"],
    "nbody_aim.py": ["nbody.png"],
    "char_gru.py": ["gru.png"],
}


def test_every_example_is_smoke_tested():
    tested = set(CASES) | {"train_mlp.py"}
    assert {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")} == tested


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_runs(name, monkeypatch, capsys, tmp_path):
    args, final = CASES[name]
    plots = [tmp_path / p for p in PLOTS.get(name, [])]
    if plots:
        args = [*args, "--plot", str(plots[0])]
    monkeypatch.setattr(sys, "argv", [name, *args])
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")  # SystemExit on a failed check
    out = capsys.readouterr().out
    assert final in out, out[-2000:]
    if plots and importlib.util.find_spec("matplotlib") is not None:
        for png in plots:
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png

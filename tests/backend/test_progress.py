"""The compile progress line (issue 10): shown on stderr for a compile slower than
`tj.config.progress_after`, silent for a faster one, off with `tj.config.progress`. Slowness is
simulated by the threshold (0 s: every compile is "slow"), so nothing here depends on timing."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj


@pytest.fixture
def progress(monkeypatch, tmp_path):
    monkeypatch.setattr(tj.config, "cache_dir", str(tmp_path))  # a cold compile: every phase

    def configure(on: bool, after: float) -> None:
        monkeypatch.setattr(tj.config, "progress", on)
        monkeypatch.setattr(tj.config, "progress_after", after)

    return configure


def _compile_something(scale: float) -> None:
    def scaled_tanh(x):
        return np.tanh(x) * scale

    tj.jit(scaled_tanh)(np.ones(5, np.float32))


def test_a_slow_compile_shows_one_updating_line(progress, capsys):
    progress(True, 0.0)
    _compile_something(2.0)
    err = capsys.readouterr().err
    lines = err.split("\n")
    assert len(lines) == 2 and lines[1] == ""  # one line, ended once
    redraws = [r.rstrip() for r in lines[0].split("\r")[1:]]  # each redraw starts with \r
    for phase in ("trace", "passes", "fusion", "codegen"):  # drawn as each phase starts
        assert any(r.startswith(f"[tracejit] jit(scaled_tanh): {phase}, ") for r in redraws)
    final = redraws[-1]
    assert final.startswith("[tracejit] jit(scaled_tanh): done, ")
    assert " nodes, " in final and " steps, " in final and final.endswith(" s")


def test_a_fast_compile_prints_nothing(progress, capsys):
    progress(True, 1e9)
    _compile_something(3.0)
    assert "[tracejit]" not in capsys.readouterr().err


def test_the_switch_turns_it_off(progress, capsys):
    progress(False, 0.0)
    _compile_something(4.0)
    assert "[tracejit]" not in capsys.readouterr().err


def test_the_threshold_must_be_a_duration():
    with pytest.raises(ValueError, match="progress_after"):
        tj.config.progress_after = -1.0

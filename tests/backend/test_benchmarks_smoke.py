"""The benchmark workloads (benchmarks/workloads.py) on tiny sizes: the NumPy oracle is right
(MLP gradient vs central finite differences in float64), tracejit matches it, and the check
the benchmark runs before timing rejects a wrong result. No timing here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "workloads.py"
_spec = importlib.util.spec_from_file_location("bench_workloads", _PATH)
W = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = W  # dataclasses look their module up while the file executes
_spec.loader.exec_module(W)


@pytest.mark.parametrize("name", W.WORKLOADS)
def test_tracejit_workload_matches_numpy(name):
    data = W.make_data(name, "tiny", seed=1)
    built = W.build_tracejit(name, data)
    W.check(name, built.fetch(built.call()), W.reference(name, data), data.get("params"))


def _as64(tree):
    if isinstance(tree, dict):
        return {k: _as64(v) for k, v in tree.items()}
    return np.asarray(tree, np.float64)


def test_numpy_mlp_step_gradient_matches_finite_differences():
    data = _as64(W.make_data("mlp", "tiny", seed=2))
    params, x, y = data["params"], data["x"], data["y"]
    _, new = W._np_mlp_step(params, x, y)
    h = 1e-6
    for k in sorted(params):
        grad = (params[k] - new[k]) / W.LR
        fd = np.zeros_like(params[k])
        for i in np.ndindex(params[k].shape):
            plus = {**params, k: params[k].copy()}
            minus = {**params, k: params[k].copy()}
            plus[k][i] += h
            minus[k][i] -= h
            fd[i] = (W._np_mlp_step(plus, x, y)[0] - W._np_mlp_step(minus, x, y)[0]) / (2 * h)
        np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7, err_msg=k)


@pytest.mark.parametrize("name", ["w1", "softmax", "mlp"])
def test_check_rejects_a_wrong_result(name):
    data = W.make_data(name, "tiny", seed=3)
    want = W.reference(name, data)
    got = [w.copy() for w in want]
    got[-1].flat[0] += 0.1 * (1 + abs(got[-1].flat[0]))
    with pytest.raises(AssertionError):
        W.check(name, got, want, data.get("params"))

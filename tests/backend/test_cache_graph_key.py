"""The persistent key is taken from the traced graph, before passes, fusion, codegen and the
C++ compiler: it is the same in fresh processes, differs whenever the output could, and a
fresh process with a warm disk cache runs none of those phases."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from _fresh_process import run_json

import tracejit as tj
from tracejit import backends, cache
from tracejit.cache import keys

needs_cxx = pytest.mark.skipif(
    (shutil.which("g++") or shutil.which("c++")) is None, reason="no C++ compiler on PATH"
)

# One small program with a gradient, a reduction and a matmul; its value is NumPy's below.
CHILD = r"""
import json, sys
import numpy as np
import tracejit as tj
from tracejit import backends, cache
import tracejit.ir.fusion as fusion
import tracejit.tracer.jit as jit_module

calls = {"fuse": 0, "optimize": 0}
def counting(name, fn):
    def wrapped(*args, **kwargs):
        calls[name] += 1
        return fn(*args, **kwargs)
    return wrapped
fusion.fuse = counting("fuse", fusion.fuse)
jit_module.optimize = counting("optimize", jit_module.optimize)

def loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)

w = np.linspace(-1, 1, 12).reshape(4, 3)
x = np.linspace(0, 2, 20).reshape(5, 4)
graph = tj.make_ir(tj.value_and_grad(loss))(w, x)
key = cache.cache_key(backends.graph_parts(graph, "cpu", "jit(value_and_grad(loss))"))
value, grad = tj.jit(tj.value_and_grad(loss))(w, x)
info = tj.cache_info()
print(json.dumps({"key": key, "value": float(value), "grad": grad.tolist(), **calls,
                  "hits": info["hits"], "misses": info["misses"]}))
"""


def _child(cache_dir: Path, seed: str) -> dict:
    return run_json(CHILD, cache_dir, seed)


@needs_cxx
def test_warm_fresh_process_skips_passes_fusion_and_compiler(tmp_path):
    cold = _child(tmp_path / "cache", "1")
    warm = _child(tmp_path / "cache", "2")
    assert cold["key"] == warm["key"]  # same key in two fresh processes
    assert (cold["misses"], cold["fuse"], cold["optimize"]) == (1, 1, 1)
    assert (warm["hits"], warm["misses"], warm["fuse"], warm["optimize"]) == (1, 0, 0, 0)
    w = np.linspace(-1, 1, 12).reshape(4, 3)
    x = np.linspace(0, 2, 20).reshape(5, 4)
    t = np.tanh(x @ w)
    grad = x.T @ (2 * t * (1 - t * t))  # d/dw sum(tanh(xw)^2), by hand
    for run in (cold, warm):
        np.testing.assert_allclose(run["value"], np.sum(t**2), rtol=1e-12)
        np.testing.assert_allclose(run["grad"], grad, rtol=1e-12)


def _key(fn, *args, device="cpu", name="f"):
    return cache.cache_key(backends.graph_parts(tj.make_ir(fn)(*args), device, name))


X = np.ones(4, np.float32)


@needs_cxx
def test_key_differs_whenever_the_output_could(monkeypatch):
    base = _key(lambda x: x * 2.0, X)
    assert _key(lambda y: y * 2.0, X) == base  # names of Python variables do not matter
    different = {
        "constant": _key(lambda x: x * 3.0, X),
        "signed zero": (_key(lambda x: x / 0.0, X), _key(lambda x: x / -0.0, X)),
        "dtype": _key(lambda x: x * 2.0, X.astype(np.float64)),
        "shape": _key(lambda x: x * 2.0, np.ones(5, np.float32)),
        "primitive": _key(lambda x: x + 2.0, X),
        "array constant": (
            _key(lambda x: x * np.arange(4.0, dtype=np.float32), X),
            _key(lambda x: x * np.arange(1.0, 5.0, dtype=np.float32), X),
        ),
        "name (it is in the generated source)": _key(lambda x: x * 2.0, X, name="g"),
    }
    for what, key in different.items():
        if isinstance(key, tuple):
            assert key[0] != key[1], what
        else:
            assert key != base, what
    for setting, value in (("fp_contract", True), ("memory_budget", 0.5)):
        with monkeypatch.context() as m:
            m.setattr(tj.config, setting, value)
            assert _key(lambda x: x * 2.0, X) != base, setting
    with monkeypatch.context() as m:  # another CPU (e.g. without AVX-512)
        m.setattr(cache, "cpu_identity", lambda: "another cpu")
        assert _key(lambda x: x * 2.0, X) != base
    with monkeypatch.context() as m:  # another tracejit (passes, fusion, codegen)
        m.setattr(keys, "package_hash", lambda: "0" * 64)
        assert _key(lambda x: x * 2.0, X) != base
    with monkeypatch.context() as m:  # another compiler, or flags in CXX
        m.setenv("CXX", f"{shutil.which('g++') or shutil.which('c++')} -O1")
        assert _key(lambda x: x * 2.0, X) != base


def test_devices_early_keys():
    graph = tj.make_ir(lambda x: x * 2.0)(X)
    assert backends.graph_parts(graph, "numpy", "f") is None  # nothing to compile
    cpu, cuda = (backends.graph_parts(graph, d, "f") for d in ("cpu", "cuda"))
    assert cache.cache_key(cpu) != cache.cache_key(cuda)
    assert "compiler" in cpu and "compiler" not in cuda  # NVRTC is keyed per architecture


@needs_cxx
def test_a_stored_executable_loads_without_fusion(device, tmp_path, monkeypatch):
    # Runs on the test device: "cpu" here, "cuda" under the emulator (tests/conftest.py).
    monkeypatch.setattr(tj.config, "cache_dir", str(tmp_path))

    def f(x, y):
        return np.tanh(x * y + 0.5) - np.sum(y, axis=0)

    x, y = np.linspace(-1, 1, 12).reshape(3, 4), np.linspace(0, 2, 12).reshape(3, 4)
    compiled = tj.device_get(tj.jit(f, device=device)(x, y))
    parts = backends.graph_parts(tj.make_ir(f)(x, y), device, "jit(f)")

    def no_fusion(*args, **kwargs):
        raise AssertionError("fusion ran for a stored executable")

    monkeypatch.setattr("tracejit.ir.fusion.fuse", no_fusion)
    executable = backends.load_cached(parts, device, "jit(f)")
    assert executable is not None
    loaded = tj.device_get(executable([x, y])[0])
    np.testing.assert_array_equal(loaded, compiled)
    np.testing.assert_allclose(loaded, np.tanh(x * y + 0.5) - np.sum(y, axis=0), rtol=1e-12)


@needs_cxx
def test_a_deeply_nested_schedule_is_stored_and_loaded(tmp_path, monkeypatch):
    # A long elementwise chain fuses into one expression nested hundreds of levels deep:
    # too deep for the C pickler, so it is pickled on a large stack (tracejit/cache/payload.py).
    import tracejit.numpy as tnp
    from tracejit.cache import payload

    monkeypatch.setattr(tj.config, "cache_dir", str(tmp_path))
    deep = []
    monkeypatch.setattr(
        payload, "_dump_deep", lambda obj, f=payload._dump_deep: deep.append(1) or f(obj)
    )

    def f(x):
        for i in range(600):
            x = x * 1.0001 + 0.5 if i % 2 else tnp.tanh(x)
        return x

    x = np.linspace(-2, 2, 10)
    compiled = tj.jit(f)(x)
    # how deep the C pickler goes before RecursionError depends on the Python version (3.11:
    # the recursion limit; 3.12: a fixed C limit), so the deep path runs only where needed
    assert deep in ([], [1])
    graph = tj.make_ir(f)(x)
    stored_executable = backends.load_cached(backends.graph_parts(graph, "cpu", "jit(f)"), "cpu")
    assert stored_executable is not None
    np.testing.assert_array_equal(stored_executable([x])[0], compiled)
    np.testing.assert_allclose(compiled, tj.jit(f, device="numpy")(x), rtol=1e-12)


def test_an_object_past_every_pickler_limit_is_pickled_on_a_large_stack(monkeypatch):
    from tracejit.cache import payload

    deep = []
    monkeypatch.setattr(
        payload, "_dump_deep", lambda obj, f=payload._dump_deep: deep.append(1) or f(obj)
    )
    nested: list = []
    for _ in range(20_000):  # past 3.11's recursion limit and 3.12's C recursion limit
        nested = [nested]
    data = payload.dumps(nested)
    assert deep == [1] and data is not None
    loaded, depth = payload.loads(data), 0
    while loaded:
        (loaded,) = loaded
        depth += 1
    assert depth == 20_000

"""The C++ backend against the NumPy reference interpreter: every primitive, every dtype.

Compiling costs ~0.2 s of g++ per distinct function, so each test compiles one function per
(dtype, shape) holding many primitives, caches it for the session, and lets hypothesis draw
only values. Shapes come from a small fixed set that covers 0-d, size-1 and size-0 arrays.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from _prims import elementwise_names
from _strategies import arrays_of
from hypothesis import given
from hypothesis import strategies as st

import tracejit as tj
from tracejit.backend_cpu.compiler import find_compiler
from tracejit.errors import TracejitError
from tracejit.tracer.core import bind

try:
    find_compiler()
except TracejitError as exc:  # pragma: no cover - depends on the machine
    pytest.skip(f"no C++ compiler: {exc}", allow_module_level=True)

DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]
SHAPES = [(), (7,), (3, 5), (0, 4)]
KIND = {"b": "b", "i": "i", "f": "f"}


def values(dtype, shape):
    """Arrays of `dtype` and `shape`, with NaN/Inf/-0.0 and integer extremes mixed in."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        elements = st.booleans()
    elif dt.kind == "i":
        info = np.iinfo(dt)
        elements = st.one_of(
            st.integers(-40, 40), st.sampled_from([0, -1, 1, info.min, info.max, 31, 63, 64])
        )
    else:
        special = st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, 1.5, 2.5, -2.5])
        width = 32 if dt == np.float32 else 64
        elements = st.one_of(
            st.floats(-30, 30, width=width), special, st.floats(-1.5, 1.5, width=width)
        )
    return arrays_of(elements, dt, shape)


def assert_same(got, want):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind == "f":
        rtol = 2e-5 if want.dtype == np.float32 else 1e-12
        atol = 1e-6 if want.dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def both(fun, n_static=0):
    return tj.jit(fun, device="cpu"), tj.jit(fun, device="numpy")


def check(fun_pair, *args):
    cpu, ref = fun_pair
    got, want = cpu(*args), ref(*args)
    got = got if isinstance(got, (list, tuple)) else [got]
    want = want if isinstance(want, (list, tuple)) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(np.asarray(g), np.asarray(w))


# ---------------------------------------------------------------- elementwise


@functools.cache
def unary_all(dtype):
    names = elementwise_names(1, np.dtype(dtype).kind)
    return names, both(lambda x: [bind(n, x) for n in names])


@functools.cache
def binary_all(dtype):
    names = elementwise_names(2, np.dtype(dtype).kind)
    return names, both(lambda x, y: [bind(n, x, y) for n in names])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@given(data=st.data())
def test_every_unary_primitive_matches_numpy(dtype, data):
    shape = data.draw(st.sampled_from(SHAPES))
    x = data.draw(values(dtype, shape))
    _, pair = unary_all(dtype)
    check(pair, x)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@given(data=st.data())
def test_every_binary_primitive_matches_numpy(dtype, data):
    shape = data.draw(st.sampled_from(SHAPES))
    x = data.draw(values(dtype, shape))
    y = data.draw(values(dtype, shape))
    _, pair = binary_all(dtype)
    check(pair, x, y)


CONVERT_PAIR = both(
    lambda x: (
        [bind("convert", x, dtype=np.dtype(d)) for d in DTYPES]
        + [bind("select", bind("ne", x, x), x, x)]
    )
)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@given(data=st.data())
def test_convert_and_select_match_numpy(dtype, data):
    x = data.draw(values(dtype, (6,)))
    if np.dtype(dtype).kind == "f":  # out-of-range float -> int casts are undefined in NumPy
        x = np.where(np.abs(x) < 2e9, x, 0).astype(dtype)
    check(CONVERT_PAIR, x)


# ---------------------------------------------------------------- reductions


def _product_safe(x):
    """x with floats kept in [1e-3, 1e3] in magnitude (zeros and NaN stay).

    A product of 12 such values neither overflows nor underflows, so its result does not
    depend on the multiplication order: with inf next to values whose partial product
    underflows to 0, NumPy's own order decides between inf and nan (inf * 0).
    """
    if x.dtype.kind != "f":
        return x
    mag = tj.numpy.clip(tj.numpy.abs(x), 1e-3, 1e3)
    keep = tj.numpy.logical_or(x == 0, tj.numpy.isnan(x))
    return tj.numpy.where(keep, x, tj.numpy.where(x < 0, -mag, mag))


def _reductions(x):
    outs = []
    for axes in [(0,), (1,), (0, 1), (0, 2), (2,)]:
        outs.append(bind("reduce_sum", x, axes=axes))
        outs.append(bind("reduce_max", x, axes=axes))
        outs.append(bind("reduce_min", x, axes=axes))
        outs.append(bind("reduce_prod", _product_safe(x), axes=axes))
    for axis in range(3):
        outs.append(bind("argmax", x, axis=axis))
        outs.append(bind("argmin", x, axis=axis))
    return outs


REDUCE_PAIR = both(_reductions)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@given(data=st.data())
def test_reductions_match_numpy(dtype, data):
    x = data.draw(values(dtype, (2, 3, 4)))
    if np.dtype(dtype).kind == "i":  # keep products exact-and-small; wrapping is tested below
        x = np.clip(x, -3, 3).astype(dtype)
    check(REDUCE_PAIR, x)


def test_integer_sums_wrap_like_numpy():
    x = np.full((3, 4), np.iinfo(np.int32).max, np.int32)
    check(REDUCE_PAIR, np.stack([x, x]).reshape(2, 3, 4))


# ---------------------------------------------------------------- layout, matmul, fallbacks


def _layout(x, y):
    t = tj.numpy.transpose(x, (2, 0, 1))
    return [
        t * 2.0,
        x[:, ::2, ::-1] + 1.0,
        x.reshape(4, 6).T,
        tj.numpy.concatenate([x, x * 3.0], axis=1),
        tj.numpy.pad(x, ((1, 0), (0, 2), (1, 1))),
        x + y,  # y broadcasts over the leading axes
        tj.numpy.flip(x, 0) - x,
        tj.numpy.sum(t, axis=0) * y[:3],
    ]


LAYOUT_PAIR = both(_layout)


@given(data=st.data())
def test_layout_ops_fold_into_loads(data):
    x = data.draw(values(np.float64, (2, 3, 4)))
    y = data.draw(values(np.float64, (4,)))
    check(LAYOUT_PAIR, x, y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_matmul_every_dtype_batched_and_transposed(dtype):
    rng = np.random.default_rng(0)
    a = rng.integers(-5, 5, (2, 3, 4)).astype(dtype)
    b = rng.integers(-5, 5, (2, 5, 4)).astype(dtype)
    pair = both(lambda a, b: [a @ tj.numpy.swapaxes(b, 1, 2), tj.numpy.swapaxes(a, 1, 2) @ a])
    check(pair, a, b)


def test_matmul_with_empty_contraction_is_zero():
    check(both(lambda a, b: a @ b), np.ones((3, 0), np.float32), np.ones((0, 2), np.float32))


def test_former_fallback_primitives_compile_natively():
    def f(x, i):
        return [tj.numpy.take(x, i, axis=0) * 2.0, tj.numpy.cumsum(x, axis=1)]

    x = np.arange(12.0).reshape(4, 3)
    i = np.array([3, 0, -1, 9])
    check(both(f), x, i)
    compiled = tj.jit(f).lower(x, i).compile()
    assert compiled.executable.fallbacks() == []  # backend_cpu/gather.py compiles both


# ---------------------------------------------------------------- fusion shape of the schedule


def _softmax(x):
    return tj.nn.softmax(x, axis=-1)


def _layernorm(x):
    mu = tj.numpy.mean(x, axis=-1, keepdims=True)
    xc = x - mu
    return xc / tj.numpy.sqrt(tj.numpy.mean(xc * xc, axis=-1, keepdims=True) + 1e-5)


@pytest.mark.parametrize(
    "fun", [_softmax, _layernorm, lambda x: tj.nn.logsumexp(x, axis=-1), tj.nn.log_softmax]
)
def test_row_patterns_fuse_into_one_kernel(fun):
    x = np.random.default_rng(1).standard_normal((6, 33)).astype(np.float32)
    x[2, 3] = np.nan
    x[4, :] = -np.inf
    check(both(fun), x)
    assert len(tj.jit(fun).lower(x).compile().kernels()) == 1


def test_elementwise_chain_is_one_kernel_and_source_is_cpp():
    x = np.ones(16, np.float32)
    compiled = tj.jit(lambda x, y: np.tanh(x * y + 0.5 * x) * 2 - y).lower(x, x).compile()
    assert compiled.kernels() == ["k0_loop"]
    assert "tanhf" in compiled.source() and "tj_run" in compiled.source()


# ---------------------------------------------------------------- inputs and edge cases


def test_non_contiguous_and_broadcast_strided_inputs_are_copied_not_misread():
    base = np.arange(48.0).reshape(6, 8)
    f = both(lambda x, y: x * 2.0 + y)
    check(f, base[::2, ::2], np.broadcast_to(np.arange(4.0), (3, 4)))
    check(f, base[:4, :3].T.copy().T[:3, :3], base.T[:3, :3])


def test_nan_and_inf_survive_vector_math():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, 1e30, -1e30, 88.0, -104.0], np.float32)
    pair = both(
        lambda x: [
            tj.numpy.where(tj.numpy.isnan(tj.numpy.exp(x)), 0.0, tj.numpy.tanh(x)),
            tj.numpy.isinf(tj.numpy.exp(x)),
            tj.numpy.log(x),
            tj.numpy.maximum(x, 0.0),
        ]
    )
    check(pair, x)


def test_zero_d_and_size_zero():
    check(both(lambda x: (x * 2 + 1, tj.numpy.sum(x))), np.float64(3.5))
    check(both(lambda x: (tj.numpy.exp(x), tj.numpy.sum(x, axis=0))), np.ones((0, 3)))


def test_outputs_are_fresh_arrays_even_for_inputs_and_duplicates():
    x = np.arange(4.0)
    f = tj.jit(lambda x: (x, x.reshape(2, 2), x + 1, x + 1))
    a, b, c, d = f(x)
    assert not np.shares_memory(a, x) and not np.shares_memory(b, x)
    assert not np.shares_memory(c, d)
    np.testing.assert_array_equal(b, x.reshape(2, 2))


def test_two_threads_call_one_function():
    f = tj.jit(lambda x: tj.numpy.sum(tj.numpy.exp(x) @ x.T, axis=1))
    xs = [np.random.default_rng(i).standard_normal((64, 64)) for i in range(8)]
    want = [tj.jit(f.fun, device="numpy")(x) for x in xs]
    f(xs[0])
    errors = []

    def work(k):
        for _ in range(20):
            for x, w in zip(xs[k::2], want[k::2]):
                if not np.allclose(f(x), w):
                    errors.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_wrong_shape_to_compiled_function_is_a_shape_error():
    compiled = tj.jit(lambda x: x + 1).lower(np.ones(3)).compile()
    with pytest.raises(tj.errors.ShapeError, match=r"shape \(4,\)"):
        compiled(np.ones(4))


# Runs in a fresh process: a parallel function is freed (its library unloaded while the
# runtime's pool threads stay parked), then the process forks and the child runs a parallel
# kernel. Under OpenMP both went wrong: dlclose unloaded the runtime under its workers (a
# segfault on the 16-core GPU machine), and a child forked after a parallel region hung.
_FREE_THEN_FORK = """
import gc, os, time
import numpy as np
import tracejit as tj

def runtimes():
    with open("/proc/self/maps") as maps:
        names = {line.split()[-1] for line in maps if len(line.split()) > 5}
    return sorted(n for n in names if any(k in n for k in ("libgomp", "libomp", "libiomp")))

x = np.ones((512, 512))
f = tj.jit(lambda x: tj.numpy.exp(x) * 2.0)  # big enough for a parallel loop
want = f(x)
del f
gc.collect()
time.sleep(0.2)
g = tj.jit(lambda x: tj.numpy.exp(x) * 2.0 + 0.0)
g(x)
pid = os.fork()
if pid == 0:
    os._exit(0 if np.array_equal(g(x), want) else 3)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status), "runtimes", runtimes())
"""


def test_parallel_functions_survive_being_freed_and_a_fork(tmp_path):
    if not os.path.exists("/proc/self/maps"):
        pytest.skip("needs /proc/self/maps (Linux) to see which libraries are loaded")
    env = dict(os.environ, TRACEJIT_CACHE_DIR=str(tj.config.cache_dir), TRACEJIT_NUM_THREADS="2")
    run = subprocess.run(
        [sys.executable, "-c", _FREE_THEN_FORK],
        env=env,
        cwd=tmp_path,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # A negative code is the signal that killed the process: -11 is the segfault of the bug.
    assert run.returncode == 0, (run.returncode, run.stdout, run.stderr[-2000:])
    # the child computed the right values and exited; no OpenMP runtime was loaded at all
    assert run.stdout.split()[-3:] == ["0", "runtimes", "[]"], run.stdout


def test_matmul_without_blas_uses_the_cpp_loops(monkeypatch):
    from tracejit.backend_cpu import blas

    monkeypatch.setattr(blas, "gemm_pointers", lambda: (0, 0))
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 5, 7)), rng.standard_normal((2, 9, 7))
    check(both(lambda a, b: (a @ tj.numpy.swapaxes(b, 1, 2)) * 1.5), a, b)

"""The CPU program's LAPACK steps (backend_cpu/lapack.py): scipy-openblas32 on the buffers.

Compiled for the CPU, solve/inv/cholesky/det/slogdet of matrices from `lapack.MIN_N` on run
scipy-openblas32's ?getrf/?getrs/?potrf on transposed views; the values are NumPy's to
rounding, batched over leading axes, and a matrix LAPACK rejects gives what NumPy's path gives
(NaN for that matrix; det 0, slogdet (0, -inf)). Without the library NumPy's path runs.
eigh/svd/qr (backend_cpu/lapack_decomp.py) run ?syevd/?heevd, ?gesdd, ?geqrf + ?orgqr/?ungqr,
and eigvalsh/svd(compute_uv=False) the first two with jobz='N' (their own steps, no vectors):
values NumPy's to rounding, vectors up to a sign/phase, NaN for a rejected matrix, and
gradients equal to those through NumPy's path. Each step runs through LAPACK only when the
library has every routine that step calls.
"""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cpu import blas, lapack, lapack_small, lapack_threads

N = lapack.MIN_N + 3
needs_lapack = pytest.mark.skipif(
    lapack.routine(np.dtype(np.float64), "getrf") is None,
    reason="scipy-openblas32 is not installed",
)


def _inputs(dtype, lead=(2,), n=N, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=lead + (n, n))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.normal(size=x.shape)
    a = x / (2.0 * n**0.5) + np.eye(n)  # well conditioned, det within float32's range
    h = x @ np.conj(np.swapaxes(x, -1, -2)) / n + np.eye(n)  # Hermitian positive definite
    b = rng.normal(size=lead + (n, 3))
    return a.astype(dtype), h.astype(dtype), b.astype(dtype)


def _all(m, a, h, b):
    sign, logabs = m.linalg.slogdet(a)
    return (m.linalg.solve(a, b), m.linalg.solve(a, b[..., :1]), m.linalg.inv(a),
            m.linalg.cholesky(h), m.linalg.det(a), sign, logabs)  # fmt: skip


@pytest.fixture
def calls(monkeypatch):
    """Counts the LAPACK path's calls, per primitive."""
    counts = {}
    for name, fn in list(lapack._INTO.items()):

        def counted(*args, _fn=fn, _name=name, **attrs):
            counts[_name] = counts.get(_name, 0) + 1
            return _fn(*args, **attrs)

        monkeypatch.setitem(lapack._INTO, name, counted)
    return counts


def _close(got, want, dtype):
    rtol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * np.abs(w).max(initial=1.0))


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_values_match_numpy_batched(dtype, calls):
    a, h, b = _inputs(dtype, lead=(2, 1))
    got = tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    _close(got, _all(np, a, h, b), dtype)
    assert calls == {"solve": 2, "inv": 1, "cholesky": 1, "slogdet": 1, "det": 1}


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rejected_matrices_give_numpys_path_results(dtype, calls):
    a, h, b = _inputs(dtype, lead=(3,))
    a[1, :, 7] = 0.0  # singular: a zero column, an exact zero pivot
    h[2, 5, 5] = -1.0  # not positive definite
    h[0, 0, 0] = np.nan  # NaN on the diagonal: potrf fails
    compiled = tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    eager = _all(tnp, a, h, b)  # NumPy's np.linalg, NaN where it raises (ir/linalg_prims.py)
    for g, w in zip(compiled, eager, strict=True):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    assert np.isnan(compiled[0][1]).all() and np.isnan(compiled[2][1]).all()
    assert np.isnan(compiled[3][0]).any() and np.isnan(compiled[3][2]).all()
    np.testing.assert_array_equal(compiled[4][1], 0.0)
    np.testing.assert_array_equal([compiled[5][1], compiled[6][1]], [0.0, -np.inf])
    good = [0, 2]  # the regular matrices of the stack: LAPACK's values, as NumPy's
    want = [np.linalg.solve(a[good], b[good]), np.linalg.inv(a[good])]
    _close([np.asarray(compiled[0])[good], np.asarray(compiled[2])[good]], want, dtype)
    _close([np.asarray(compiled[3])[1]], [np.linalg.cholesky(h[1])], dtype)
    assert calls["cholesky"] == 1 and calls["solve"] == 2


@needs_lapack
def test_empty_stack_and_upper_triangle(calls):
    a, h, b = _inputs(np.float64, lead=(0,))
    got = tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    _close(got, _all(np, a, h, b), np.float64)
    _, h, _ = _inputs(np.float64, lead=())
    upper = tj.jit(lambda h: tnp.linalg.cholesky(h, upper=True), device="cpu")(h)
    np.testing.assert_allclose(upper, np.linalg.cholesky(h, upper=True), rtol=1e-10, atol=1e-12)
    assert calls == {"solve": 2, "inv": 1, "cholesky": 2, "slogdet": 1, "det": 1}


def test_numpys_path_without_scipy_openblas32(monkeypatch, calls):
    monkeypatch.setattr(lapack, "routine", lambda dtype, name: None)
    a, h, b = _inputs(np.float64, lead=(2,))
    got = tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    _close(got, _all(np, a, h, b), np.float64)
    assert calls == {}


@pytest.fixture
def small_calls(monkeypatch):
    """Counts the calls of NumPy's gufuncs on stacks of small matrices, per primitive."""
    counts, real = {}, lapack_small._run

    def counted(prim, *args, **attrs):
        counts[prim] = counts.get(prim, 0) + 1
        return real(prim, *args, **attrs)

    monkeypatch.setattr(lapack_small, "_run", counted)
    return counts


def test_small_matrices_take_numpys_gufuncs(calls, small_calls):
    a, h, b = _inputs(np.float64, lead=(4,), n=5)
    got = tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    for g, w in zip(got, _all(np, a, h, b), strict=True):
        np.testing.assert_array_equal(g, w)  # NumPy's own routines, bit for bit
    assert calls == {}
    assert small_calls == {"solve": 2, "inv": 1, "cholesky": 1, "det": 1, "slogdet": 1}


def test_small_float32_stacks_in_float32_decompositions_as_numpy(small_calls):
    n = 5
    a, h, b = _inputs(np.float32, lead=(3,), n=n)
    a[1, :, 2] = 0.0  # singular: NaN for solve/inv, det 0
    h[2, 3, 3] = -1.0  # not positive definite: NaN for cholesky
    got = tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    eager = _all(tnp, a, h, b)  # np.linalg, in float64 rounded to float32, NaN where it raises
    for g, w in zip(got, eager, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        scale = np.abs(w[np.isfinite(w)]).max(initial=1.0)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * scale)
    assert np.isnan(got[0][1]).all() and np.isnan(got[3][2]).all() and got[4][1] == 0
    tall, wide = a[..., :, : n - 2], np.swapaxes(a, -1, -2)[..., :-2, :]
    decomposed = tj.jit(lambda *xs: _decompositions(tnp, *xs), device="cpu")(h, tall, wide)
    for i, (g, w) in enumerate(zip(decomposed, _decompositions(np, h, tall, wide), strict=True)):
        if i in (2, 9):  # eigvalsh and svd(compute_uv=False): in float32
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * np.abs(w).max())
        elif i < 10:  # eigh and svd in float64 as NumPy: its vectors' signs too
            np.testing.assert_array_equal(g, w)
    assert small_calls == {"solve": 2, "inv": 1, "cholesky": 1, "det": 1, "slogdet": 1,
                           "eigh": 1, "eigvalsh": 1, "svd": 2, "svdvals": 1}  # fmt: skip


def test_thread_count_follows_size_setting_and_load(monkeypatch):
    monkeypatch.delenv("TRACEJIT_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(lapack_threads, "_cores", lambda: 4)
    others = {"n": 0}
    monkeypatch.setattr(lapack_threads, "_others_running", lambda: others["n"])
    big = lapack_threads.MIN_N
    assert lapack_threads.count(big) == 4 and lapack_threads.count(big - 1) == 1
    others["n"] = 1
    assert lapack_threads.count(big) == 3  # the cores other tasks leave free
    others["n"] = 9
    assert lapack_threads.count(big) == 1
    others["n"] = None  # no /proc/loadavg
    assert lapack_threads.count(big) == 1
    others["n"] = 0
    monkeypatch.setenv("TRACEJIT_NUM_THREADS", "1")
    assert lapack_threads.count(big) == 1
    monkeypatch.setenv("TRACEJIT_NUM_THREADS", "2")
    assert lapack_threads.count(big) == 2


@needs_lapack
def test_several_threads_inside_one_outside(monkeypatch, calls):
    get = blas.library().scipy_openblas_get_num_threads
    monkeypatch.setattr(lapack_threads, "count", lambda n: 2)
    with lapack_threads.threads(N):
        assert get() == 2
    assert get() == 1
    a, h, b = _inputs(np.float32, lead=(2,))
    got = tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    _close(got, _all(np, a, h, b), np.float32)
    assert get() == 1 and calls["cholesky"] == 1


# ---------------------------------------------- eigh, svd, qr (backend_cpu/lapack_decomp.py)


def _decompositions(m, h, tall, wide):
    w, v = m.linalg.eigh(h)
    return (w, v, m.linalg.eigvalsh(h), *m.linalg.svd(tall),
            *m.linalg.svd(wide, full_matrices=False), m.linalg.svd(wide, compute_uv=False),
            *m.linalg.qr(tall), *m.linalg.qr(tall, mode="complete"),
            *m.linalg.qr(wide, mode="complete"))  # fmt: skip


def _decomposition_inputs(dtype, lead=(2, 1)):
    a, h, _ = _inputs(dtype, lead=lead)
    rng = np.random.default_rng(1)
    upper = np.triu(rng.normal(size=h.shape), 1)  # garbage in the triangle eigh ignores
    if np.dtype(dtype).kind == "c":  # and in the imaginary part of the diagonal
        upper = upper + 1j * np.eye(N) * rng.normal(size=h.shape)
    return (h + upper).astype(dtype), a[..., :, : N - 3], np.swapaxes(a, -1, -2)[..., :-3, :]


def _hermitian_from_lower(h):
    low = np.tril(h, -1)
    return low + np.conj(np.swapaxes(low, -1, -2)) + np.real(np.diagonal(h, 0, -2, -1))[
        ..., None] * np.eye(h.shape[-1])  # fmt: skip


def _same_up_to_phase(got, want, rtol, pairs=None):
    """Columns of `got` equal `want`'s times a unit phase (also applied, conjugated, to the
    rows of `pairs` = (got, want))."""
    phase = np.sum(np.conj(want) * got, axis=-2)  # <want_k, got_k>
    np.testing.assert_allclose(np.abs(phase), 1.0, atol=rtol)
    np.testing.assert_allclose(got, want * phase[..., None, :], atol=rtol)
    if pairs is not None:
        np.testing.assert_allclose(pairs[0], np.conj(phase)[..., :, None] * pairs[1], atol=rtol)


def _check_decompositions(got, h, tall, wide, dtype):
    want = _decompositions(np, h, tall, wide)
    rtol = 1e-3 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-9
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
    w, v = got[:2]
    _close([w, got[2], got[4], got[7], got[9]], [want[0], want[2], want[4], want[7], want[9]],
           dtype)  # fmt: skip
    hh = _hermitian_from_lower(h)
    np.testing.assert_allclose(hh @ v, v * w[..., None, :], atol=rtol * np.abs(w).max())
    _same_up_to_phase(v, want[1], rtol)
    k = tall.shape[-1]  # full U of a tall matrix: its first k columns are determined
    _same_up_to_phase(got[3][..., :k], want[3][..., :k], rtol, (got[5], want[5]))
    eye = np.eye(tall.shape[-2])
    np.testing.assert_allclose(np.conj(np.swapaxes(got[3], -1, -2)) @ got[3], eye + 0 * got[3],
                               atol=rtol)  # fmt: skip
    _same_up_to_phase(got[6], want[6], rtol, (got[8], want[8]))
    _close(got[10:], want[10:], dtype)  # qr: NumPy's Householder signs too


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_decompositions_match_numpy_batched(dtype, calls):
    h, tall, wide = _decomposition_inputs(dtype)
    got = tj.jit(lambda *xs: _decompositions(tnp, *xs), device="cpu")(h, tall, wide)
    _check_decompositions(got, h, tall, wide, dtype)
    # eigvalsh and svd(compute_uv=False) are steps of their own, computing no vectors
    assert calls == {"eigh": 1, "eigvalsh": 1, "svd": 2, "svdvals": 1, "qr": 3}


@needs_lapack
def test_rejected_matrices_give_nan_decompositions(calls):
    h, tall, wide = _decomposition_inputs(np.float64, lead=(3,))
    h[0, 9, 4] = np.nan  # read by eigh: NaN for all of matrix 0's eigh
    h[1, 4, 9] = np.nan  # in the upper triangle, which eigh does not read (as NumPy)
    tall[2, 3, 3] = wide[2, 3, 3] = np.nan
    got = tj.jit(lambda *xs: _decompositions(tnp, *xs), device="cpu")(h, tall, wide)
    assert all(np.isnan(x[0]).all() for x in got[:3])
    assert all(np.isnan(x[2]).all() for x in got[3:])
    assert not any(np.isnan(x[1:]).any() for x in got[:3])
    assert not any(np.isnan(x[:2]).any() for x in got[3:])
    h[0], tall[2], wide[2] = h[1], tall[1], wide[1]  # the good ones: NumPy's values
    _check_decompositions([np.asarray(x)[1:2] for x in got], h[1:2], tall[1:2], wide[1:2],
                          np.float64)  # fmt: skip
    assert calls == {"eigh": 1, "eigvalsh": 1, "svd": 2, "svdvals": 1, "qr": 3}


def _decomposition_terms(m, h, a):
    w, v = m.linalg.eigh(h)
    u, s, vh = m.linalg.svd(a, full_matrices=False)
    q, r = m.linalg.qr(a)
    # sign-invariant in each eigen- and singular vector (squares); qr's signs are NumPy's
    return w, v * v, u * u, s, vh * vh, q, r, m.linalg.eigvalsh(h), m.linalg.svdvals(a)


@needs_lapack
def test_gradients_through_lapack_equal_numpys_path(calls):
    h, tall, _ = _decomposition_inputs(np.float64, lead=())
    rng = np.random.default_rng(2)
    weights = [rng.normal(size=t.shape) for t in _decomposition_terms(np, h, tall)]

    def loss(h, a):
        return sum((t * c).sum() for t, c in zip(_decomposition_terms(tnp, h, a), weights))

    compiled = tj.jit(tj.grad(loss, argnums=(0, 1)), device="cpu")(h, tall)
    eager = tj.grad(loss, argnums=(0, 1))(h, tall)  # NumPy's np.linalg
    for g, w in zip(compiled, eager, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-7 * np.abs(w).max())
    # the loss is linear in the eigvalsh and svdvals outputs: the gradient needs no such step,
    # and their VJPs' eigh and svd are the steps already there (solve: qr's VJP)
    assert calls == {"eigh": 1, "svd": 1, "qr": 1, "solve": 1}


# The routines each step calls, read off its code (lapack.py, lapack_decomp.py).
NEEDS = {
    "cholesky": {"potrf"}, "solve": {"getrf", "getrs"}, "inv": {"getrf", "getrs"},
    "det": {"getrf"}, "slogdet": {"getrf"}, "eigh": {"syevd"}, "eigvalsh": {"syevd"},
    "svd": {"gesdd"}, "svdvals": {"gesdd"}, "qr": {"geqrf", "orgqr"},
}  # fmt: skip


@needs_lapack
@pytest.mark.parametrize("missing", ["potrf", "getrs", "syevd", "gesdd", "orgqr"])
def test_a_step_takes_lapack_exactly_when_its_own_routines_are_there(monkeypatch, missing):
    real = lapack.routine
    monkeypatch.setattr(
        lapack, "routine", lambda dt, name: None if name == missing else real(dt, name)
    )
    a = np.eye(N)
    taken = {prim for prim in NEEDS if lapack.into(prim, [a]) is not None}
    assert taken == {prim for prim, needs in NEEDS.items() if missing not in needs}


@needs_lapack
def test_each_step_calls_only_the_routines_it_is_checked_for(monkeypatch, calls):
    running, used, real = [None], {}, lapack.routine
    for prim, fn in list(lapack._INTO.items()):

        def entered(*args, _fn=fn, _prim=prim, **attrs):
            running[0] = _prim
            try:
                return _fn(*args, **attrs)
            finally:
                running[0] = None

        monkeypatch.setitem(lapack._INTO, prim, entered)

    def recorded(dtype, name):
        if running[0] is not None:
            used.setdefault(running[0], set()).add(name)
        return real(dtype, name)

    monkeypatch.setattr(lapack, "routine", recorded)
    a, h, b = _inputs(np.float64, lead=())
    h, tall, wide = _decomposition_inputs(np.float64, lead=())
    tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    tj.jit(lambda *xs: _decompositions(tnp, *xs), device="cpu")(h, tall, wide)
    assert used == NEEDS

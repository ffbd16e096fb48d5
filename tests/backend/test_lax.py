"""tracejit.lax forward semantics: NumPy and the unrolled Python loop are the oracles.

Every construct runs eagerly (the reference interpreter), under `jit` on the CPU (compiled),
and on the `numpy` device (the interpreter on the optimized graph).
"""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.ir.interpret import evaluate

RNG = np.random.default_rng(0)


def _run(fn, *args, device="cpu"):
    return tj.jit(fn, device=device)(*args)


@pytest.fixture(params=["eager", "cpu", "numpy"])
def mode(request):
    return request.param


def _call(mode, fn, *args):
    return fn(*args) if mode == "eager" else _run(fn, *args, device=mode)


# ---------------------------------------------------------------- scan


def test_scan_cumsum_matches_numpy_bit_exact(mode):
    xs = RNG.standard_normal(7).astype(np.float32)

    def f(xs):
        return lax.scan(lambda c, x: (c + x, c + x), np.float32(0.0), xs)

    c, ys = _call(mode, f, xs)
    np.testing.assert_array_equal(ys, np.cumsum(xs, dtype=np.float32))
    assert ys.dtype == np.float32 and c == ys[-1]


def _rnn_step(c, x):
    h, n = c
    h = np.tanh(h * 0.5 + x["a"] - x["b"])
    return (h, n + 1), {"h2": h * h, "s": tnp.sum(h)}


def _rnn_loop(init, xs, reverse=False):
    c, ys = init, []
    order = range(len(xs["a"]))
    for t in reversed(order) if reverse else order:
        c, y = _rnn_step(c, {"a": xs["a"][t], "b": xs["b"][t]})
        ys.append((t, y))
    ys.sort(key=lambda p: p[0])
    stacked = {k: np.stack([y[k] for _, y in ys]) for k in ("h2", "s")} if ys else None
    return c, stacked


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("length", [0, 5])
def test_scan_pytrees_reverse_and_lengths_match_the_python_loop(mode, reverse, length):
    xs = {"a": RNG.standard_normal((length, 3)), "b": RNG.standard_normal((length, 3))}
    init = (np.zeros(3), np.int64(0))

    def f(init, xs):
        return lax.scan(_rnn_step, init, xs, reverse=reverse)

    (h, n), ys = _call(mode, f, init, xs)
    (h_ref, n_ref), ys_ref = _rnn_loop(init, xs, reverse)
    np.testing.assert_allclose(h, h_ref, rtol=1e-12, atol=1e-15)
    assert int(n) == length == int(n_ref)
    assert ys["h2"].shape == (length, 3) and ys["s"].shape == (length,)
    if length:
        np.testing.assert_allclose(ys["h2"], ys_ref["h2"], rtol=1e-12)
        np.testing.assert_allclose(ys["s"], ys_ref["s"], rtol=1e-12)


@pytest.mark.parametrize("unroll", [1, 2, 3, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_unroll_gives_the_same_result(unroll, reverse):
    xs = RNG.standard_normal((7, 2))

    def f(xs):
        return lax.scan(
            lambda c, x: (c * 0.9 + x, c - x), np.zeros(2), xs, reverse=reverse, unroll=unroll
        )

    # Eager: the unrolled structure is the front end's; one compiled case checks the backend.
    c, ys = tj.jit(f)(xs) if (unroll, reverse) == (3, True) else f(xs)
    c_loop, ys_loop = np.zeros(2), np.zeros((7, 2))
    for t in reversed(range(7)) if reverse else range(7):
        c_loop, ys_loop[t] = c_loop * 0.9 + xs[t], c_loop - xs[t]
    np.testing.assert_allclose(c, c_loop, rtol=1e-14)
    np.testing.assert_allclose(ys, ys_loop, rtol=1e-14)


def test_scan_without_xs_uses_length_and_closes_over_outer_tracers(mode):
    def f(w, c0):
        return lax.scan(lambda c, _: (c * w, c), c0, None, length=4)

    w, c0 = np.array([2.0, -1.0]), np.array([1.0, 3.0])
    c, ys = _call(mode, f, w, c0)
    np.testing.assert_array_equal(ys, np.stack([c0 * w**k for k in range(4)]))
    np.testing.assert_array_equal(c, c0 * w**4)


def test_nested_scan_and_cond_inside_scan(mode):
    def inner(c, x):
        return lax.scan(lambda a, b: (a + b * c, a), c, x)[0], None

    def f(xs, flags):
        c, _ = lax.scan(inner, np.float64(1.0), xs)
        d, _ = lax.scan(
            lambda a, p: (lax.cond(p, lambda v: v * 2.0, lambda v: v - 1.0, a), None), c, flags
        )
        return d

    xs = RNG.standard_normal((3, 4))
    flags = np.array([True, False, True])
    c = 1.0
    for row in xs:
        a = c
        for b in row:
            a = a + b * c
        c = a
    for p in flags:
        c = c * 2.0 if p else c - 1.0
    np.testing.assert_allclose(_call(mode, f, xs, flags), c, rtol=1e-13)


def test_map_matches_a_python_list():
    xs = RNG.standard_normal((4, 3))
    out = tj.jit(lambda xs: lax.map(lambda r: tnp.sum(r * r), xs))(xs)
    np.testing.assert_allclose(out, [np.sum(r * r) for r in xs], rtol=1e-14)


def test_scan_prints_its_body_jaxpr_style():
    text = str(
        tj.make_ir(lambda xs: lax.scan(lambda c, x: (c + x, c * x), np.float64(0.0), xs))(
            np.ones(3)
        )
    )
    assert text == (
        "{ lambda a:f64[3] . let\n"
        "    b:f64[] = const[value=0.0]\n"
        "    c:f64[] d:f64[3] = scan[body={ lambda a:f64[] b:f64[] . let\n"
        "          c:f64[] = add a b\n"
        "          d:f64[] = mul a b\n"
        "        in (c, d) }, length=3, n_carry=1, n_consts=0, reverse=False] b a\n"
        "  in (c, d) }"
    )


# ---------------------------------------------------------------- loops


@pytest.mark.parametrize("bounds", [(0, 5), (2, 2), (3, 7)])
def test_fori_loop_static_and_traced_bounds(mode, bounds):
    lo, hi = bounds
    expected = 0.5
    for i in range(lo, hi):
        expected = expected * 1.5 + i
    static = _call(mode, lambda x: lax.fori_loop(lo, hi, lambda i, v: v * 1.5 + i, x), 0.5)
    traced = _call(
        mode, lambda a, b, x: lax.fori_loop(a, b, lambda i, v: v * 1.5 + i, x), lo, hi, 0.5
    )
    assert float(static) == expected == float(traced)


def test_while_loop_runs_until_the_predicate_fails(mode):
    def collatz_steps(n):
        def body(s):
            n, k = s
            return tnp.where(n % 2 == 0, n // 2, 3 * n + 1), k + 1

        return lax.while_loop(lambda s: s[0] != 1, body, (n, np.int64(0)))[1]

    assert int(_call(mode, collatz_steps, np.int64(27))) == 111


def test_while_loop_zero_trips_returns_the_initial_value(mode):
    out = _call(
        mode, lambda x: lax.while_loop(lambda v: tnp.sum(v) < 0.0, lambda v: v * 2, x), np.ones(3)
    )
    np.testing.assert_array_equal(out, np.ones(3))


# ---------------------------------------------------------------- branches


@pytest.mark.parametrize("pred", [True, False])
def test_cond_picks_one_branch(mode, pred):
    w = np.array([1.0, 2.0])

    def f(p, x):  # the branches close over different outer values
        return lax.cond(p, lambda v: v * x, lambda v: v + w + 1.0, x)

    x = np.array([3.0, -1.0])
    expected = x * x if pred else x + w + 1.0
    np.testing.assert_array_equal(_call(mode, f, np.bool_(pred), x), expected)


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 9])
def test_switch_clamps_the_index(mode, index):
    branches = [lambda v: v + 1.0, lambda v: v * 3.0, lambda v: -v]
    x = np.array([2.0, 5.0])
    expected = branches[min(max(index, 0), 2)](x)
    np.testing.assert_array_equal(
        _call(mode, lambda i, x: lax.switch(i, branches, x), index, x), expected
    )


def test_cond_with_integer_predicate_and_pytree_operands(mode):
    def f(n, tree):
        return lax.cond(n, lambda t: {"a": t["a"] * 2.0}, lambda t: {"a": t["a"] - 1.0}, tree)

    tree = {"a": np.arange(3.0)}
    np.testing.assert_array_equal(_call(mode, f, np.int64(3), tree)["a"], np.arange(3.0) * 2)
    np.testing.assert_array_equal(_call(mode, f, np.int64(0), tree)["a"], np.arange(3.0) - 1)


def test_select_n_matches_numpy_choose(mode):
    which = np.array([0, 2, 1, 1, 0])
    cases = [RNG.standard_normal(5) for _ in range(3)]
    out = _call(mode, lambda w, a, b, c: lax.select_n(w, a, b, c), which, *cases)
    np.testing.assert_array_equal(out, np.choose(which, cases))
    pred = np.array([True, False, True, False, False])
    out = _call(mode, lambda p, a, b: lax.select_n(p, a, b), pred, cases[0], cases[1])
    np.testing.assert_array_equal(out, np.where(pred, cases[1], cases[0]))


# ---------------------------------------------------------------- compiled vs reference


def test_compiled_scan_matches_the_interpreter_on_the_same_graph():
    def f(w, xs):
        return lax.scan(lambda h, x: (np.tanh(h @ w + x), h.sum()), np.zeros(4), xs)

    w, xs = RNG.standard_normal((4, 4)) * 0.5, RNG.standard_normal((6, 4))
    lowered = tj.jit(f).lower(w, xs)
    compiled = lowered.compile()(w, xs)
    reference = evaluate(lowered.graph, [w, xs])
    for a, b in zip(compiled, reference):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("batch_size", [3, 9])
def test_map_with_batch_size_matches_a_python_list(batch_size):
    xs = {"a": np.random.default_rng(batch_size).standard_normal((7, 3)), "b": np.arange(7.0)}

    def f(x):
        return {"s": tnp.sum(x["a"] * x["b"]), "v": np.tanh(x["a"])}

    out = tj.jit(lambda xs: lax.map(f, xs, batch_size=batch_size))(xs)
    want = [f({"a": xs["a"][i], "b": xs["b"][i]}) for i in range(7)]
    # a GPU adds the three products in another order (an H100 was 1 ulp of the sum of their
    # magnitudes off, after cancellation): the bound is the summation's, not a relative one
    scale = np.abs(xs["a"] * xs["b"][:, None]).sum(axis=1)
    np.testing.assert_allclose(out["s"], [w["s"] for w in want], rtol=0, atol=4e-16 * scale.max())
    np.testing.assert_allclose(out["v"], np.stack([w["v"] for w in want]), rtol=1e-14)

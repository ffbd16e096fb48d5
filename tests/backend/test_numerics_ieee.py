"""Regression tests for silent wrong results in generated code (issue 13): every compiled
result here is checked against NumPy, bit for bit where NumPy's result is exact."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
from tracejit.backend_cpu import compiler
from tracejit.backend_cuda import nvrtc


def _same(got, want, gpu: bool = False):
    """Bit-exact equality, NaN equal to NaN, -0.0 distinct from 0.0.

    From a GPU, NaNs are compared as NaNs: a NaN an invalid operation creates carries the
    hardware's payload (x86 0xffc00000, which NumPy gives; NVIDIA 0x7fffffff, seen on an H100).
    """
    on_gpu = gpu or hasattr(got, "__cuda_array_interface__")
    got = np.asarray(tj.device_get(got))
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    if on_gpu and got.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        got, want = np.where(np.isnan(got), 0, got), np.where(np.isnan(want), 0, want)
    assert got.tobytes() == want.tobytes(), (got, want)


# ---------------------------------------------------------------- no FP contraction


def test_no_contraction_of_multiply_add(device):
    # x*2 - y fused into fma(x, 2, -y) never overflows: NumPy gives inf at x = y = 1e308;
    # the std of equal products is 0 only if every product rounds the same way.
    def f(x, y, a, b):
        return x * 2.0 - y, np.std(a * b), a * b + x[0]

    x = np.array([1e308, 1.5, -3.0])
    a = np.full(4, 0.1)
    b = np.full(4, 0.7)
    got = tj.jit(f, device=device)(x, x, a, b)
    with np.errstate(over="ignore"):
        want = f(x, x, a, b)
    for g, w in zip(got, want):
        _same(g, w)


def test_contraction_is_an_opt_in():
    assert "-ffp-contract=off" in compiler.command("c++", "s.cpp", "s.so")
    assert "-fmad=false" in nvrtc.options()
    tj.config.fp_contract = True
    try:
        assert "-ffp-contract=fast" in compiler.command("c++", "s.cpp", "s.so")
        assert "-fmad=true" in nvrtc.options()
    finally:
        tj.config.fp_contract = False


# ---------------------------------------------------------------- NaN in, NaN out


def _nan_patterns(step: int) -> np.ndarray:
    """Every `step`-th float32 NaN bit pattern, both signs, quiet and signaling."""
    mags = np.arange(0x7F800001, 0x80000000, step, dtype=np.int64)
    mags = np.concatenate([mags, [0x7FC00000, 0x7FFFFFFF, 0x7F800001]])
    bits = np.concatenate([mags, mags | 0x80000000]).astype(np.uint32)
    return bits.view(np.float32)


@pytest.mark.parametrize("fn", [np.exp, np.tanh, np.log, np.sin, np.sqrt, np.expm1])
def test_every_nan_pattern_stays_nan(fn, device):
    # Regression: the inline float32 exp added integer bits to the NaN pattern and returned
    # a finite number for 99.6% of NaN inputs.
    x = _nan_patterns(61 if device == "cpu" else 4099)
    got = np.asarray(tj.device_get(tj.jit(fn, device=device)(x)))
    assert np.isnan(got).all(), x[~np.isnan(got)][:4].view(np.uint32)


def test_softmax_of_a_row_with_nan_is_nan(device):
    def softmax(x):
        e = np.exp(x)
        return e / np.sum(e, axis=-1, keepdims=True)

    x = np.array([[0.5, np.nan, 1.0], [0.5, 2.0, 1.0]], np.float32)
    x[0, 1] = np.array([0xFFC12345], np.uint32).view(np.float32)[0]
    got = np.asarray(tj.device_get(tj.jit(softmax, device=device)(x)))
    assert np.isnan(got[0]).all()
    np.testing.assert_allclose(got[1], softmax(x[1:])[0], rtol=1e-6)


# ---------------------------------------------------------------- floor division, remainder


def test_float_floor_division_and_remainder_follow_numpy(device):
    # Regression: float // was floor(x / y): 1.0 // 0.1 gave 10 (NumPy 9), -inf // -84 gave
    # inf (NumPy nan), and x - (x // y) * y no longer matched x % y.
    def f(x, y):
        q, r = divmod(x, y)
        return x // y, x % y, q, r, np.divmod(x, y)[0], np.floor_divide(x, y.astype(np.float32))

    vals = [
        1.0,
        -1.0,
        0.1,
        -0.1,
        0.0,
        -0.0,
        7.5,
        -7.5,
        np.inf,
        -np.inf,
        np.nan,
        84.0,
        1e300,
        5e-324,
    ]
    x, y = (a.ravel() for a in np.meshgrid(vals, vals))
    x = np.concatenate([x, [1.0, -np.inf, 0.7, 3.0]])
    y = np.concatenate([y, [0.1, -84.0, 0.1, -0.3]])
    got = tj.jit(f, device=device)(x, y)
    with np.errstate(all="ignore"):
        want = f(x, y)
    for g, w in zip(got, want):
        _same(g, w)
    for dt in (np.float32, np.float64):
        with np.errstate(all="ignore"):
            a, b = x.astype(dt), y.astype(dt)
            _same(tj.jit(lambda a, b: a // b, device=device)(a, b), a // b)


# ---------------------------------------------------------------- literals by bit pattern


def test_zero_and_negative_zero_literals_stay_distinct(device):
    # Regression: the kernel writers merged the literals 0.0 and -0.0 (equal as floats), so
    # x / -0.0 divided by +0.0 when x * 0.0 came first.
    def f(x):
        return x * 0.0, x / -0.0, x + -0.0, (x - x) * -0.0, 0.0 - x

    x = np.array([-1.0, 1.0, 0.0, -0.0, np.inf], np.float32)
    got = tj.jit(f, device=device)(x)
    with np.errstate(all="ignore"):
        want = f(x)
    for g, w in zip(got, want):
        _same(g, w)


# ---------------------------------------------------------------- stable sigmoid


def _sigmoid_ref(x):
    x = np.asarray(x, np.longdouble)
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_and_log_sigmoid_are_accurate_for_large_negative_x(dtype, device):
    # Regression: sigmoid was (tanh(x/2) + 1) / 2: 0 for x <= -18 in float32 (true 1.5e-8)
    # and <= -38 in float64, so log(sigmoid(x)) was -inf and its gradient NaN.
    x = np.array([-100, -80, -38, -18, -5, -1e-3, 0, 1e-3, 5, 18, 38, 80], dtype)
    f = tj.jit(lambda x: (tj.nn.sigmoid(x), tj.nn.log_sigmoid(x)), device=device)
    s, ls = (np.asarray(tj.device_get(v)) for v in f(x))
    assert s.dtype == ls.dtype == dtype
    ref = _sigmoid_ref(x)
    tiny = np.finfo(dtype).tiny  # below it float32 results are subnormal: absolute error
    np.testing.assert_allclose(s, ref.astype(np.float64), rtol=8 * np.finfo(dtype).eps, atol=tiny)
    ls_ref = -np.log1p(np.exp(-np.asarray(x, np.longdouble)))
    np.testing.assert_allclose(ls, ls_ref.astype(np.float64), rtol=4 * np.finfo(dtype).eps)
    assert (s[x < 0] > 0).all() and np.isfinite(ls).all()


def test_sigmoid_gradients_are_finite_and_match_finite_differences(device):
    def loss(x):
        return np.sum(tj.nn.log_sigmoid(x)) + np.sum(tj.nn.sigmoid(x)) + np.sum(tj.nn.softplus(x))

    x = np.array([-700.0, -60.0, -30.0, -5.0, -0.5, 0.0, 0.5, 5.0, 30.0, 60.0, 700.0])
    g = np.asarray(tj.device_get(tj.jit(tj.grad(loss), device=device)(x)))
    s = _sigmoid_ref(x).astype(np.float64)
    # d/dx: log_sigmoid' = 1 - s, sigmoid' = s (1 - s), softplus' = s
    np.testing.assert_allclose(g, (1 - s) + s * (1 - s) + s, rtol=1e-12)
    h = 1e-6  # central differences where the function is smooth and not tiny
    fd = np.array([(loss(np.array([v + h])) - loss(np.array([v - h]))) / (2 * h) for v in x])
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)


# ---------------------------------------------------------------- power


SPECIAL = [-np.inf, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0, np.inf, np.nan]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_power_special_cases_match_numpy_at_every_position(dtype, device):
    # Regression: x ** 0.5 was sqrt in vector lanes and pow in the scalar tail, so -inf gave
    # nan in one place and inf in another, and -0.0's sign depended on the position.
    # NumPy's power takes a fast path for a scalar exponent of 2, 0.5, 1, 0 and -1.
    def fast(x):
        return x**0.5, x**-1.0, x**1.0, x**0.0, x**2.0

    def slow(x, y):
        return x**3.0, x**-0.5, np.power(x, y)

    x, y = (a.ravel() for a in np.meshgrid(SPECIAL, SPECIAL))
    x, y = np.append(x, [-np.inf, -0.0, np.nan]).astype(dtype), np.append(y, [0.5] * 3)
    y = y.astype(dtype)  # 147 elements: vector lanes and a scalar tail
    for g, w in zip(tj.jit(fast, device=device)(x), _quiet(fast, x)):
        _same(g, w)
    # other exponents are pow's business: bit-exact wherever the result is representable
    # (elsewhere libm, libmvec and NumPy's own pow differ in the last bit)
    exact = _quiet(slow, x.astype(np.longdouble), y.astype(np.longdouble))
    for g, w, e in zip(tj.jit(slow, device=device)(x, y), _quiet(slow, x, y), exact):
        keep = (e.astype(dtype) == e) | np.isnan(e)
        assert keep.sum() > len(x) // 2
        _same(np.asarray(tj.device_get(g))[keep], w[keep], gpu=device == "cuda")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_power_with_exponent_zero_or_base_one_is_one_even_for_signaling_nan(dtype, device):
    # NumPy: x ** 0 == 1 and 1 ** y == 1 for every x, y; libm's pow gives NaN for a
    # signaling NaN (found by the fuzzer: nan ** False gave nan on both devices).
    bits = {np.float32: [0x7FA00000, 0xFF800001], np.float64: [0x7FF4000000000000]}[dtype]
    snan = np.array(bits, {np.float32: np.uint32, np.float64: np.uint64}[dtype]).view(dtype)
    x = np.concatenate([snan, np.array([np.nan, np.inf, -2.0, 0.0], dtype)])
    zero, one = np.zeros_like(x), np.ones_like(x)
    got = tj.jit(lambda x, z, o: (x**z, o**x, np.power(x, z > 1)), device=device)(x, zero, one)
    for g in got:
        np.testing.assert_array_equal(tj.device_get(g), np.ones_like(x))


def _quiet(f, *args):
    with np.errstate(all="ignore"):
        return f(*args)


# ---------------------------------------------------------------- one implementation per function

UNARY = ["exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "arcsin",
         "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh"]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_math_functions_do_not_depend_on_the_elements_position(dtype, device):
    # Regression: vector lanes called libmvec, the loop's tail libm's scalar function, and
    # they differ in the last bit: the same input gave different results at different
    # positions (and in different loops of one kernel).
    fns = [getattr(np, name) for name in UNARY] + [lambda x: np.power(x, x)]
    fns.append(lambda x: np.arctan2(x, 0.75 - x))

    def f(xs):  # one loop per function (GCC may leave a loop of many calls unvectorized)
        return [fn(x) for fn, x in zip(fns, xs)]

    # 16 k + 7 elements: rolled by 7, the scalar tail's elements move into vector lanes
    rng = np.random.default_rng(1)
    xs = [rng.uniform(0.05, 0.95, 16 * k + 7).astype(dtype) for k in range(1, len(fns) + 1)]
    compiled = tj.jit(f, device=device)
    got = compiled(xs)
    for a, b in zip(got, compiled([np.roll(x, 7) for x in xs])):
        _same(np.asarray(tj.device_get(b)), np.roll(np.asarray(tj.device_get(a)), 7))


def test_compiled_gradient_of_max_of_cos_is_a_one_hot(device):
    # Regression (issue 13, case 1): a fused kernel computed cos(x) for the max, and again
    # (through sincos, next to the gradient's sin) for the `cos(x) == max` one-hot: the two
    # differed by an ulp and the compiled gradient was wrong for 20 of 20 inputs.
    def loss(x):
        return np.sum(np.max(np.cos(x), axis=0))

    grad = tj.jit(tj.grad(loss), device=device)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = rng.standard_normal((4, 19))
        g = np.asarray(tj.device_get(grad(x)))
        winner = np.argmax(np.cos(x), axis=0)  # no ties in continuous draws
        want = np.zeros_like(x)
        want[winner, np.arange(x.shape[1])] = -np.sin(x[winner, np.arange(x.shape[1])])
        np.testing.assert_allclose(g, want, rtol=1e-14, atol=0)


# ---------------------------------------------------------------- division stays division


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_division_by_a_row_sum_is_a_division(dtype, device):
    # Regression: e / sum(e) was emitted as e * (1 / sum(e)): off by an ulp, and a softmax
    # over a size-1 axis gave 0.9999999999999999.
    def normalize(e):
        return e / np.sum(e, axis=-1, keepdims=True)

    rng = np.random.default_rng(2)
    e = rng.integers(1, 1000, (8, 67)).astype(dtype) / 8  # row sums are exact
    _same(tj.jit(normalize, device=device)(e), normalize(e))
    one = rng.uniform(0.1, 10.0, (50, 1)).astype(dtype)
    _same(tj.jit(normalize, device=device)(one), np.ones_like(one))
    _same(tj.jit(lambda x: tj.nn.softmax(x, axis=-1), device=device)(one), np.ones_like(one))


# ---------------------------------------------------------------- negative zero


def test_negative_zero_survives_adds_and_scatters(device):
    # Regression: simplify rewrote x + 0.0 to x (for x = -0.0 NumPy gives +0.0), and
    # x.at[i].set(v) scattered v onto +0.0 (so -0.0 was stored as +0.0).
    def f(x):
        return (
            x + 0.0,
            0.0 + x,
            x - -0.0,
            x + -0.0,
            x - 0.0,
            x.at[0].set(-0.0),
            x.at[1:].set(-0.0),
            x.at[np.array([2, 0])].set(np.array([-0.0, 5.0])),
        )

    x = np.array([-0.0, 0.0, 1.0, -2.0])
    got = tj.jit(f, device=device)(x)
    want = (x + 0.0, 0.0 + x, x - -0.0, x + -0.0, x - 0.0)
    want += (np.array([-0.0, 0.0, 1.0, -2.0]), np.array([-0.0, -0.0, -0.0, -0.0]))
    want += (np.array([5.0, 0.0, -0.0, -2.0]),)
    for g, w in zip(got, want):
        _same(g, w)


# ---------------------------------------------------------------- accurate float32 sums


def _ulps_off(got, exact) -> float:
    """|got - exact| in float32 ulps of `exact` (a float64 or longdouble reference)."""
    return float(abs(np.float64(got) - np.float64(exact)) / np.spacing(np.float32(exact)))


def test_float32_sums_and_means_are_correctly_rounded(device):
    # Regression: float32 sum/mean accumulated sequentially per lane: a 3e7-element sum was
    # off by 5.8e-4 relative (NumPy's pairwise sum: ~1e-7). Now at least as accurate as
    # NumPy's (float32 blocks of 256 terms, as NumPy's of 128, summed in double).
    n = 3 * 10**7 if device == "cpu" else 1000 * 1024  # the CUDA emulator is slow
    rng = np.random.default_rng(3)
    f = tj.jit(
        lambda x: (np.sum(x), np.mean(x), np.sum(x.reshape(-1, 1000), axis=0)), device=device
    )
    for x in (np.full(n, 0.1, np.float32), rng.random(n, dtype=np.float32)):
        s, m, cols = (np.asarray(tj.device_get(v)) for v in f(x))
        exact = np.sum(x, dtype=np.float64)
        assert s.dtype == m.dtype == np.float32
        bound = max(_ulps_off(np.sum(x), exact), 1.0)  # NumPy's error, or one ulp
        assert _ulps_off(s, exact) <= bound, (s, exact, np.sum(x))
        assert _ulps_off(m, exact / n) <= max(_ulps_off(np.mean(x), exact / n), 1.0)
        exact_cols = np.sum(x.reshape(-1, 1000), axis=0, dtype=np.float64)
        assert max(_ulps_off(c, e) for c, e in zip(cols, exact_cols)) <= 1.0


def test_float32_sum_over_a_huge_broadcast_is_accurate():
    # Regression: a sum over a 2^32-element broadcast was 5.5% off.
    x = np.random.default_rng(4).random(1024, dtype=np.float32)
    total = tj.jit(lambda x: np.sum(np.broadcast_to(x, (1 << 22, 1024))))(x)
    exact = np.sum(x, dtype=np.float64) * (1 << 22)
    assert _ulps_off(total, exact) <= 1.0, (total, exact)


# ---------------------------------------------------------------- inline float32 log


def test_inline_float32_log_is_correctly_rounded_and_exact_at_special_values():
    # libmvec's logf was up to 3.83 ulp off (NumPy's own float32 log: 3.01); the inline
    # tj_logf evaluates in double and rounds once (tools/ulp_report.py checks every float32).
    bits = np.arange(1, 0x7F800000, 4099, dtype=np.uint32)  # positive floats, subnormals too
    x = bits.view(np.float32)
    got = np.asarray(tj.jit(np.log)(x)).astype(np.float64)
    exact = np.log(x.astype(np.float64))
    _, e = np.frexp(exact)
    ulp = np.ldexp(1.0, np.maximum(e - 24, -149))
    assert np.max(np.abs(got - exact) / ulp) <= 0.5 + 2.0**-20
    special = np.array([np.nan, -np.nan, -1.0, -np.inf, -0.0, 0.0, 1.0, np.inf, -1e-45], np.float32)
    got = np.asarray(tj.jit(np.log)(special))
    with np.errstate(all="ignore"):
        want = np.log(special)
    np.testing.assert_array_equal(got, want)  # NaN where NumPy has NaN (any sign or payload)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()


def test_float64_sums_are_at_least_as_accurate_as_numpy(device):
    # CPU: each vector lane adds with TwoSum, blocks go into a long double total with
    # Neumaier's correction; CUDA: each thread keeps a TwoSum pair. Before: 2^20 x 0.1 was
    # 3 ulps off on a host whose lanes are 4 wide (the H100 machine; NumPy 1), 112 on CUDA;
    # 12,345,678 x (1/3) 2 ulps off here (NumPy 0: a plain long double total drifts).
    import math
    from fractions import Fraction

    rng = np.random.default_rng(5)
    total = tj.jit(lambda x: (np.sum(x), np.sum(x.reshape(8, -1), axis=1)), device=device)
    for x in (np.full(1 << 20, 0.1), rng.random(1 << 20)):
        s, rows = (tj.device_get(o) for o in total(x))
        for got, part in [(s, x), *zip(rows, x.reshape(8, -1))]:
            exact = math.fsum(part)
            bound = max(abs(np.sum(part) - exact), np.spacing(abs(exact)))
            assert abs(got - exact) <= bound, (got, exact, np.sum(part))
    for n, v in ((12_345_678, 1 / 3),):
        many = tj.jit(lambda v, n=n: np.sum(np.broadcast_to(v, (n,))), device=device)
        got = float(tj.device_get(many(np.float64(v))))
        exact = float(Fraction(v) * n)
        want = np.sum(np.broadcast_to(np.float64(v), (n,)))
        assert abs(got - exact) <= max(abs(want - exact), np.spacing(exact)), (n, v, got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_sums_and_products_that_overflow_wrap_as_numpy(dtype, device):
    # A reduction's partial results combine across threads too: on CUDA those adds and
    # products were signed (undefined on overflow); they wrap in the unsigned type now.
    info = np.iinfo(dtype)
    x = np.tile(np.array([info.max, 3, info.min + 1, info.max, -7, 5], dtype), 300)

    def f(x):
        rows = x.reshape(60, -1)
        return (
            np.sum(x, dtype=dtype),
            np.sum(rows, axis=1, dtype=dtype),
            np.sum(rows, axis=0, dtype=dtype),
            np.prod(rows[:, :7], axis=1, dtype=dtype),
        )

    got = tj.jit(f, device=device)(x)
    want = f(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(tj.device_get(g), w)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_signed_integer_overflow_wraps_as_numpy(dtype, device):
    # Signed overflow is undefined in C++/CUDA; NVRTC has no -fwrapv, so `(x + 1) > x` folded
    # to true at INT_MAX under the CUDA backend (found by the fuzzer).
    info = np.iinfo(dtype)
    x = np.array([info.max, info.min, -1, 0, 7], dtype)

    def f(x):
        q = x // -1  # INT_MIN // -1 wraps to INT_MIN (fuzzer: its sign was 1 under CUDA)
        return (
            (x + 1) > x,
            (-x) < 0,
            np.sign(-x),
            (x * 2) // 2 == x,
            np.abs(x),
            x - 1,
            q,
            np.sign(q),
        )

    got = tj.jit(f, device=device)(x)
    with np.errstate(over="ignore"):
        want = f(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(tj.device_get(g), w)

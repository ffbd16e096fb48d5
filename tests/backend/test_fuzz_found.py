"""Wrong results the differential fuzzer found (tests/_fuzz_*.py), each as NumPy gives it."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

T, F = np.array([True, False, True]), np.array([True, True, False])


def test_bool_floor_divide_remainder_power_are_int8_as_numpy(device):
    """bool // bool, bool % bool and bool ** bool are int8 in NumPy (were int64)."""
    got = tj.device_get(tj.jit(lambda a, b: (a // b, a % b, a**b), device=device)(T, F))
    with np.errstate(all="ignore"):
        want = (T // F, T % F, T**F)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype == np.int8
        np.testing.assert_array_equal(g, w)


def test_select_takes_one_dtype_from_choices_and_default(device):
    """select([c1, c2], [uint8, bool], 0) is uint8 (a where chain made it int64)."""
    x = np.array([3, 200, 7], np.uint8)

    def f(x, b):
        return tnp.select([x > 5, b], [x, b], 0)

    got = tj.device_get(tj.jit(f, device=device)(x, T))
    want = np.select([x > 5, T], [x, T], 0)
    assert got.dtype == want.dtype == np.uint8
    np.testing.assert_array_equal(got, want)


def test_quantile_of_a_list_of_q_promotes_float32_to_float64(device):
    """NumPy: a Python scalar q keeps float32 data float32, a list q (float64) promotes."""
    x = np.array([[1.5, -2.25, 7.0], [0.1, 0.2, 0.3]], np.float32)

    def f(x):
        return (
            tnp.percentile(x, [10.0, 50.0], axis=0),
            tnp.quantile(x, [0.3], axis=1),
            tnp.percentile(x, 30.0, axis=1),
            tnp.quantile(x, 0.3),
        )

    got = tj.device_get(tj.jit(f, device=device)(x))
    want = (
        np.percentile(x, [10.0, 50.0], axis=0),
        np.quantile(x, [0.3], axis=1),
        np.percentile(x, 30.0, axis=1),
        np.quantile(x, 0.3),
    )
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        # NumPy takes b - a in float32 and the rest in float64: float32 rounding of max |x|
        np.testing.assert_allclose(g, w, rtol=0, atol=4 * np.finfo(np.float32).eps * 7.0)


def test_float_in_minus_one_to_zero_converts_to_unsigned_zero(device):
    """(uint64)(-0.5) truncates to 0 (defined in C, NumPy's result); it gave 2**63."""
    for dtype in (np.float32, np.float64):
        x = np.array([-0.5, -0.99, -0.0, 0.75, 2.5e18], dtype)
        got = tj.device_get(tj.jit(lambda x: x.astype(np.uint64), device=device)(x))
        np.testing.assert_array_equal(got, x.astype(np.uint64))


def test_fft_of_float16_is_single_precision_as_numpy(device):
    """NumPy transforms float16 in single precision: fft/rfft/fft2 give complex64 (were
    complex128), irfft and hfft float16 (were float64/float32)."""
    x = np.arange(6, dtype=np.float16).reshape(2, 3) - 2
    names = ["fft", "rfft", "fft2", "irfft", "hfft"]
    got = tj.device_get(tj.jit(lambda x: [getattr(tnp.fft, n)(x) for n in names], device=device)(x))
    for name, g in zip(names, got):
        want = getattr(np.fft, name)(x)
        assert g.dtype == want.dtype, name
        # NumPy rounds irfft's 1/N to float16: a float16 ulp of the result
        np.testing.assert_allclose(g, want, rtol=0, atol=1e-2, err_msg=name)


def test_float16_and_float32_exp_log_tanh_in_one_program_compile(device):
    """float16 exp/log/tanh (in float32: expf) beside float32 ones declared tj_expf twice,
    the inline function and the libmvec alias: a C++ compile error."""
    h = np.array([0.5, 1.5, 2.0], np.float16)
    f = h.astype(np.float32)

    def both(h, f):
        return [fn(x) for fn in (tnp.exp, tnp.log, tnp.tanh) for x in (h, f)]

    got = tj.device_get(tj.jit(both, device=device)(h, f))
    for g, fn, x in zip(got, [np.exp, np.exp, np.log, np.log, np.tanh, np.tanh], [h, f] * 3):
        assert g.dtype == x.dtype
        np.testing.assert_allclose(g, fn(x), rtol=2 * np.finfo(x.dtype).eps)


def test_integer_compared_with_an_out_of_range_python_int_as_numpy(device):
    """NumPy 2 compares uint8 with -1 or 300 (all False / all True, NEP 50); tracejit
    raised IntegerOverflowError, saying NumPy raised too."""
    u = np.array([0, 1, 255], np.uint8)

    def f(u):
        return [u < -1, u >= -1, -1 == u, u != 300, 300 > u, tnp.less_equal(u, 2**70)]

    got = tj.device_get(tj.jit(f, device=device)(u))
    want = [u < -1, u >= -1, -1 == u, u != 300, 300 > u, np.less_equal(u, 2**70)]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype == np.bool_
        np.testing.assert_array_equal(g, w)


def test_float_ufuncs_of_small_ints_take_numpy_smallest_float(device):
    """NumPy's float ufuncs pick the first float loop every operand casts to safely:
    arctan2(int8, uint8) is float16 (was float32, from their int16); hypot, logaddexp,
    copysign, heaviside of int8 are float16, of int16 float32 (were float64)."""
    i8 = np.array([1, -3], np.int8)
    u8 = np.array([1, 200], np.uint8)
    i16 = np.array([1, -5], np.int16)
    cases = [("arctan2", i8, u8), ("arctan2", i8, i16), ("hypot", i8, i8), ("hypot", u8, i16)]
    cases += [("logaddexp", i8, u8), ("copysign", i16, i8), ("heaviside", i8, i8)]

    def f(*xs):
        return [
            getattr(tnp, name)(xs[2 * k], xs[2 * k + 1]) for k, (name, _, _) in enumerate(cases)
        ]

    got = tj.device_get(tj.jit(f, device=device)(*[x for _, a, b in cases for x in (a, b)]))
    for g, (name, a, b) in zip(got, cases):
        want = getattr(np, name)(a, b)
        assert g.dtype == want.dtype, (name, a.dtype, b.dtype)
        np.testing.assert_allclose(g, want, rtol=2 * np.finfo(want.dtype).eps)
    # a weak Python int adopts int8 (float16) but not bool (int64: float64)
    flags = np.array([True, False])
    got = tj.device_get(
        tj.jit(lambda i, b: (tnp.arctan2(i, 7), tnp.arctan2(7, b)), device=device)(i8, flags)
    )
    assert [g.dtype for g in got] == [np.arctan2(i8, 7).dtype, np.arctan2(7, flags).dtype]


def test_gradient_of_a_scan_with_an_empty_carry(device):
    """A scan whose carry has a size-0 axis, differentiated: the stacked residuals' rows are
    size-0 views (the CUDA emulator refused their pointer past the 0-byte allocation)."""

    def step(c, x):
        n = 1 / (1 + c * c)
        return n, n

    def f(c0, xs):
        return tnp.sum(tj.lax.scan(step, c0, xs)[0])

    c0, xs = np.zeros((0,)), np.array([-0.6, 0.1, 0.0, 0.0])
    got = tj.device_get(tj.jit(tj.grad(f), device=device)(c0, xs))
    assert got.shape == (0,) and got.dtype == np.float64


def test_uint64_power_is_exact_in_the_reference_and_eager_runs(device):
    """uint64 ** n went through float64 in the reference interpreter (and eager tnp):
    3**40 and (2**64 - 1)**7 came back rounded or 0; compiled code was right."""
    x = np.array([2**64 - 1, 3, 2**63 + 1], np.uint64)
    y = np.array([7, 40, 3], np.uint64)
    want = x**y
    for dev in (device, "numpy"):
        got = tj.device_get(tj.jit(lambda a, b: a**b, device=dev)(x, y))
        assert got.dtype == np.uint64
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(tnp.power(x, y), want)


def test_median_of_an_empty_axis_is_nan_and_differentiates(device):
    """NumPy's median of no values is NaN (the mean of none); it raised TracejitIndexError,
    and its gradient a raw IndexError from the reference interpreter's scatter-add."""
    z = np.zeros((2, 0, 4), np.float32)
    with np.errstate(all="ignore"):
        want = np.median(z, axis=1)
    got = tj.device_get(tj.jit(lambda x: tnp.median(x, axis=1), device=device)(z))
    assert got.dtype == want.dtype and got.shape == want.shape == (2, 4)
    assert np.isnan(got).all()
    grad = tj.jit(tj.grad(lambda x: tnp.median(x, axis=(0, 1)).sum()), device=device)(z)
    assert tj.device_get(grad).shape == z.shape


def test_take_along_an_empty_axis_raises_index_error_forward_and_backward(device):
    """As `take`: a non-empty index into an empty axis is TracejitIndexError (was NumPy's raw
    IndexError from the callback), the gradient's scatter-add too."""
    z, idx = np.zeros((0, 3)), np.zeros((2, 3), np.int64)
    along = lambda x: tnp.take_along_axis(x, idx, axis=0)
    for fn in (along, tj.grad(lambda x: along(x).sum())):
        with pytest.raises(tj.errors.TracejitIndexError, match="empty axis"):
            tj.jit(fn, device=device)(z)


def test_searchsorted_of_complex_follows_sort_order_of_nan_classes(device):
    """Complex values sort R + Rj, R + nanj, nan + Rj, nan + nanj (NumPy's CDOUBLE_LT);
    searchsorted compared with `<` and put only 'any number before NaN' (-4j went after
    a's NaNs)."""
    nan = np.nan
    a = np.array([-4, 1, 1.5, nan, nan], np.float32)  # promoted: the NaNs are nan + 0j
    parts = [(0, -4), (4, 1), (nan, 0), (nan, -1), (1, nan), (-9, nan), (nan, nan), (0, 1)]
    v = np.array([complex(r, i) for r, i in parts], np.complex64)
    for side in ("left", "right"):
        got = tj.jit(tnp.searchsorted, static_argnames="side", device=device)(a, v, side=side)
        np.testing.assert_array_equal(tj.device_get(got), np.searchsorted(a, v, side=side))


_QUANTILE_DATA = [np.array([[5, -3, 7], [0, 2, 2]], np.int8), np.array([[5, 3, 7], [1, 1, 0]], np.uint16),
                  np.array([[1.5, 2.0, 3.0], [0.5, -1.0, 4.0]], np.float32),
                  np.array([[True, False, True], [False, False, True]])]  # fmt: skip
_QS = [0.5, 1, np.float32(0.25), np.float64(0.75), np.int64(0), [0.1, 0.5], [0, 1]]


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_quantile_dtypes_and_values_are_numpys(method):
    # found by the fuzzer: the order-statistic methods gave float64 for integer and bool data
    # (NumPy keeps the data's dtype), and a numpy float32 q did not keep float32
    for x in _QUANTILE_DATA:
        for q in _QS:
            for name, qq in (("quantile", q), ("percentile", _times_100(q))):
                try:
                    want = getattr(np, name)(x, qq, axis=1, method=method)
                except TypeError:  # bool data that must be interpolated
                    with pytest.raises(TypeError, match="interpolates"):
                        getattr(tnp, name)(x, qq, axis=1, method=method)
                    continue
                for got in (getattr(tnp, name)(x, qq, axis=1, method=method),
                            tj.jit(lambda v: getattr(tnp, name)(v, qq, axis=1, method=method))(x)):  # fmt: skip  # noqa: B023
                    got = np.asarray(got)
                    assert got.dtype == want.dtype, (name, x.dtype, q, got.dtype, want.dtype)
                    np.testing.assert_array_equal(got, want)


def _times_100(q):
    return [100 * v for v in q] if isinstance(q, list) else q * 100


def test_adding_a_complex_zero_keeps_numpys_signed_zeros(device):
    # found by the fuzzer: `z + 0` of a complex z was simplified to z (right for a float x
    # only: x + 0.0 turns -0.0 into 0.0, in each part of a complex), so z = -0-0j stayed -0-0j;
    # a matmul contracting one element (0 + a * b, the GEMM's zero start) had the same fault
    z = np.array([complex(-0.0, -0.0), complex(-0.0, 1.0), complex(2.0, -0.0)], np.complex64)
    a, b = np.array([[np.nan], [-0.0]], np.float32), np.array([0j], np.complex64)
    fns = [lambda v: v + 0.0, lambda v: v - 0.0, lambda v: v + 0j, lambda v: 0.0 + v,
           lambda v: v + complex(-0.0, -0.0), lambda v: v - complex(0.0, -0.0)]  # fmt: skip
    for fn in fns:
        got = np.asarray(tj.device_get(tj.jit(fn, device=device)(z)))
        want = fn(z)
        assert np.array_equal(np.signbit(got.real), np.signbit(want.real))
        assert np.array_equal(np.signbit(got.imag), np.signbit(want.imag))
    got = np.asarray(tj.device_get(tj.jit(lambda p, q: p @ q, device=device)(a, b)))
    assert not np.signbit(got[1].real) and not np.signbit(got[1].imag)  # NumPy's 0+0j


_Z = np.array([complex(-0.0, -0.0), complex(0.0, -0.0), complex(np.nan, np.nan),
               complex(np.inf, 1.0), complex(-0.0, 1.0), complex(1.0, 2.0),
               complex(-np.inf, -0.0), complex(2.0, -3.0), complex(np.nan, 0.0)])  # fmt: skip


def _bits(z):
    nan = np.isnan(z.real) | np.isnan(z.imag)
    return np.where(nan, 0, z).view(np.float64 if z.dtype == np.complex128 else np.float32), nan


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_power_by_an_integer_is_numpys_bit_for_bit(device, dtype):
    # NumPy's npy_cpow: a ** 0 is 1 + 0j for every a (NaN and inf too; tracejit gave NaN),
    # 0 ** n is 0 + 0j for n > 0 and NaN + NaN j for n < 0 (tracejit: -0 parts, -inf + nan j),
    # binary powering starts from 1 + 0j; z * 1, z / 1 and z ** 1 were simplified to z, which
    # NumPy's complex product and quotient are not (1 + inf j) * 1 is nan + inf j
    z = _Z.astype(dtype)
    with np.errstate(all="ignore"):
        for n in (0, 1, 2, 3, 4, 5, 7, -1, -2, -3, 0.0, 1.0, 2.0, -1.0):
            want = np.power(z, n)
            got = np.asarray(tj.device_get(tj.jit(lambda v: np.power(v, n), device=device)(z)))  # noqa: B023
            assert got.dtype == want.dtype
            for g, w in zip(_bits(got), _bits(want), strict=True):
                np.testing.assert_array_equal(g, w, err_msg=f"z ** {n!r}")
        for fn in (lambda v: v * 1, lambda v: v / 1.0, lambda v: 1.0 * v):
            want, got = fn(z), np.asarray(tj.device_get(tj.jit(fn, device=device)(z)))
            for g, w in zip(_bits(got), _bits(want), strict=True):
                np.testing.assert_array_equal(g, w)
        # a zero base and a non-integral exponent: 0 for a positive real part, else NaN
        for e in (0.5, 2.5 + 1j, -2.5, -0.5j):
            got = np.asarray(tj.device_get(tj.jit(lambda v: v**e, device=device)(z[:2])))  # noqa: B023
            for g, w in zip(_bits(got), _bits(np.power(z[:2], e)), strict=True):
                np.testing.assert_array_equal(g, w, err_msg=f"0 ** {e!r}")


def test_complex_array_to_a_python_scalar_power_takes_numpys_fast_path(device):
    # ndarray ** 2 (a Python int) is np.square, ** -1 np.reciprocal, ** 0.5 np.sqrt in NumPy,
    # whose special values differ from np.power's: (-0-0j) ** 2 is 0-0j, (-0-0j) ** 0.5 0-0j
    z = _Z.astype(np.complex128)
    with np.errstate(all="ignore"):
        for e in (2, -1, 2.0, -1.0):
            got = np.asarray(tj.device_get(tj.jit(lambda v: v**e, device=device)(z)))  # noqa: B023
            for g, w in zip(_bits(got), _bits(z**e), strict=True):
                np.testing.assert_array_equal(g, w, err_msg=f"z ** {e!r}")
        got = np.asarray(tj.device_get(tj.jit(lambda v: v**0.5, device=device)(z)))
        want = z**0.5  # (sqrt, within an ulp of NumPy's: signs and NaNs exactly)
        np.testing.assert_allclose(got, want, rtol=1e-15)
        assert np.array_equal(np.signbit(got.real), np.signbit(want.real))
        assert np.array_equal(np.signbit(got.imag), np.signbit(want.imag))


def test_complex_exp_special_values_are_numpys(device):
    # npy_cexp (C99 Annex G): exp(inf + 0j) is inf + 0j (tracejit gave inf + nan j), nan + 0j
    # stays, exp(inf + nan j) is inf + nan j and exp(-inf + inf j) is 0 + 0j (both NaN before)
    inf, nan = np.inf, np.nan
    z = np.array([complex(a, b) for a in (inf, -inf, nan, 0.0, -0.0, 1.0, -800.0)
                  for b in (inf, -inf, nan, 0.0, -0.0, 1.0, -2.0)])  # fmt: skip
    with np.errstate(all="ignore"):
        want = np.exp(z)
        got = np.asarray(tj.device_get(tj.jit(np.exp, device=device)(z)))
    nan_w = np.isnan(want.real) | np.isnan(want.imag)
    np.testing.assert_array_equal(np.isnan(got.real), np.isnan(want.real))
    np.testing.assert_array_equal(np.isnan(got.imag), np.isnan(want.imag))
    exact = ~np.isfinite(z)  # special values exactly; else within libm's ulps
    for part in ("real", "imag"):
        g, w = getattr(got, part)[exact], getattr(want, part)[exact]
        ok = np.isnan(w) | ((g == w) & (np.signbit(g) == np.signbit(w)))
        assert ok.all(), (z[exact][~ok], g[~ok], w[~ok])
    np.testing.assert_allclose(got[~exact & ~nan_w], want[~exact & ~nan_w], rtol=1e-6)
    # exp(x) overflows but exp(x) sin y does not: finite, as NumPy's scaled cexp (was inf)
    big = np.array([710 + 0.5j, 1400 - 0.5j])
    got = np.asarray(tj.device_get(tj.jit(np.exp, device=device)(big)))
    np.testing.assert_allclose(got.imag, np.exp(big).imag, rtol=1e-13)


def _same_value(a, b) -> bool:
    """NaN-ness, values and zero signs of both parts equal, or close for finite values."""

    def key(v):
        parts = (v.real, v.imag)
        return tuple((bool(np.isnan(p)), 0.0 if np.isnan(p) else p,
                      False if np.isnan(p) else bool(np.signbit(p))) for p in parts)  # fmt: skip

    if key(a) == key(b):
        return True
    same_signs = np.signbit(a.real) == np.signbit(b.real) and np.signbit(a.imag) == np.signbit(
        b.imag
    )
    return bool(np.isfinite(a) and np.isfinite(b) and abs(a - b) <= 1e-5 * abs(a) and same_signs)


@pytest.mark.parametrize(
    "name",
    [
        "sin",
        "cos",
        "tan",
        "sinh",
        "cosh",
        "tanh",
        "exp",
        "arcsin",
        "arcsinh",
        "arctan",
        "arctanh",
        "arccos",
        "arccosh",
    ],
)
def test_complex_trig_and_hyperbolic_special_values_are_numpys(device, name):
    # C99 Annex G as glibc's csinh/ccosh/ctanh/csin give it (NumPy calls them): the product
    # formulas multiplied inf by 0 or NaN, giving NaN where NumPy has a limit or a signed zero
    # (tanh(inf + inf j) is 1 + 0j, cosh(800 + 0j) is inf + 0j, sin(nan + inf j) nan + inf j,
    # arcsinh(nan + inf j) inf + nan j; arctanh(-0 + 1j) has a -0 real part)
    inf, nan = np.inf, np.nan
    z = np.array([complex(a, b) for a in (inf, -inf, nan, 0.0, -0.0, 1.0, -2.0, 800.0, -800.0)
                  for b in (inf, -inf, nan, 0.0, -0.0, 1.0, -2.0, 0.5, 1e300)])  # fmt: skip
    fn = getattr(np, name)
    with np.errstate(all="ignore"):
        want = fn(z)
        got = np.asarray(tj.device_get(tj.jit(fn, device=device)(z)))
    bad = [(z[i], want[i], got[i]) for i in range(z.size) if not _same_value(want[i], got[i])]
    assert not bad, bad[:5]


def test_complex_power_by_a_non_integer_recovers_infinities(device):
    # NumPy's cpow multiplies b log a as C99 does (__muldc3): log(inf + nan j) * 0.5 is
    # inf + nan j, so (inf + nan j) ** 0.5 is inf + nan j where exp(b log a) gave nan + nan j
    inf, nan = np.inf, np.nan
    z = np.array([complex(inf, nan), complex(-inf, nan), complex(nan, inf), complex(nan, -inf),
                  complex(1.0, 2.0), complex(-2.0, 0.5)])  # fmt: skip
    for e in (0.5, 1.5, -0.5, 2 + 1j):
        with np.errstate(all="ignore"):
            want = np.power(z, e)
        got = np.asarray(tj.device_get(tj.jit(lambda v: np.power(v, e), device=device)(z)))  # noqa: B023
        for part in ("real", "imag"):
            g, w = getattr(got, part), getattr(want, part)
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
            np.testing.assert_array_equal(np.isinf(g), np.isinf(w))
        np.testing.assert_allclose(got[4:], want[4:], rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, ml_dtypes.bfloat16])
def test_maximum_and_minimum_of_signed_zeros_take_numpys_operand(device, dtype):
    """A tie of -0.0 and 0.0 gives NumPy's operand: the second for float32/float64 (x86
    maxpd, at every length) and ml_dtypes' bfloat16, the first for NumPy's float16 loop. The
    compiled code gave the first everywhere; assert_array_equal cannot see the sign."""
    a = np.array([-0.0, 0.0, -0.0, np.nan, 1.0, 2.0]).astype(dtype)
    b = np.array([0.0, -0.0, 0.0, 1.0, np.nan, -3.0]).astype(dtype)
    for fn, ref in ((tnp.maximum, np.maximum), (tnp.minimum, np.minimum)):
        for x, y in ((a, b), (b, a)):
            got = tj.device_get(tj.jit(fn, device=device)(x, y)).astype(np.float64)
            with np.errstate(invalid="ignore"):
                want = ref(x, y).astype(np.float64)
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_quantile_of_integers_interpolates_without_wrapping(device):
    # NumPy's lerp takes b - a in the data's dtype: for int8 [0, -128] that wraps (with an
    # overflow warning) and its 90th percentile is 12.8; here the values are converted first
    # (the fuzzer's oracle interpolates float64 values; a cpu campaign found the regression)
    x = np.array([[0, -128], [5, -128], [-128, 127]], np.int8)
    f = tj.jit(lambda v: (tnp.percentile(v, 90.0, axis=1), tnp.quantile(v, 0.5, axis=1,
               method="midpoint")), device=device)  # fmt: skip
    want = (np.percentile(x.astype(np.float64), 90.0, axis=1),
            np.quantile(x.astype(np.float64), 0.5, axis=1, method="midpoint"))  # fmt: skip
    for got, w in zip(f(x), want):
        np.testing.assert_allclose(tj.device_get(got), w, rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_reciprocal_is_numpys_bit_for_bit(device, dtype):
    # NumPy's complex reciprocal (and `z ** -1`) is Smith's quotient with no special cases:
    # 0 gives nan + nan j, inf gives 0 - 0j; tracejit divided 1 / z (inf + nan j, and -inf +
    # nan j compiled for -0.0: a cpu fuzz campaign)
    parts = (0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e-310, 3e300, 5e-324)
    rng = np.random.default_rng(5)
    z = np.concatenate([np.array([complex(a, b) for a in parts for b in parts], dtype),
                        (rng.normal(size=64) + 1j * rng.normal(size=64)).astype(dtype)])  # fmt: skip
    want = np.reciprocal(z).view(z.real.dtype)
    f = tj.jit(lambda v: (tnp.reciprocal(v), v**-1), device=device)
    for got in (*f(z), tnp.reciprocal(z)):
        got = np.asarray(tj.device_get(got)).view(z.real.dtype)
        same = (
            got.view(np.uint8).reshape(got.size, -1) == want.view(np.uint8).reshape(want.size, -1)
        ).all(1)
        np.testing.assert_array_equal(same | (np.isnan(got) & np.isnan(want)), True)
    g = tj.grad(lambda v: tnp.real(tnp.sum(tnp.reciprocal(v) * (1 + 2j))), holomorphic=False)
    w = np.array([1.5 + 0.5j, -0.25 + 2j])
    # JAX's convention for a real function of z: df/dx - i df/dy, here h'(z) for Re(h(z))
    np.testing.assert_allclose(g(w), -(1 + 2j) / w**2, rtol=1e-12)

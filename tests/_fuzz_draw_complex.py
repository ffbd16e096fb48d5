"""Drawers of complex64/complex128 values and the FFTs (bounds: _fuzz_complex.py).

Complex values enter as new inputs (parts of ordinary and of extreme magnitude, no NaN or
infinity: _fuzz_values), as `x + 1j * y` of real values, or out of an FFT; they flow through
+ - * /, exp, log, sqrt, sin, cos, reciprocal, square, abs, conj, real, imag, sum, the layout
and gather steps, ** / np.power by small integers and 0.5, and fft/ifft/rfft/irfft/fft2
(every norm, along any axis).
"""

from __future__ import annotations

from _fuzz_ops import Pool, Step, axes_of, normalized, partner
from hypothesis import strategies as st

NORMS = (None, "ortho", "forward", "backward")
FUNCS = ("exp", "log", "sqrt", "sin", "cos", "reciprocal", "square")
POW_EXPONENTS = ("0", "1", "2", "3", "(-1)", "(-2)", "5", "2.0", "(-1.0)", "0.5", "0.0")


def _complex_value(draw, pool: Pool) -> int:
    """A complex value of the pool, or a new one (an input or x + 1j * y of reals)."""
    c = pool.pick(draw, kinds="c")
    if c is not None and draw(st.booleans()):
        return c
    shape = draw(st.sampled_from([(3,), (2, 4), (5,), (1, 6), (2, 3, 2), ()]))
    return pool.add_input(shape, draw(st.sampled_from(["complex64", "complex128"])))


def complex_op(draw, pool: Pool) -> Step | None:
    a = pool.pick(draw, kinds="f")
    if a is not None and draw(st.integers(0, 3)) == 0:
        b = partner(draw, pool, a, "f")
        return Step("({0} + 1j * {1})", (a, b), "c_make")
    z = _complex_value(draw, pool)
    name = draw(st.sampled_from([*"+-*/", "abs", "conj", "real", "imag", "neg", "sum", "pow",
                                 *FUNCS]))  # fmt: skip
    if name == "pow":  # `**` takes NumPy's fast path for 2, -1 and 0.5; np.power does not
        e = draw(st.sampled_from(POW_EXPONENTS))
        text = draw(st.sampled_from(["({{0}} ** {})", "np.power({{0}}, {})"])).format(e)
        return Step(text, (z,), "c_pow", (float(e.strip("()")),))
    if name in FUNCS:
        return Step(f"np.{name}({{0}})", (z,), "c_func", (name,))
    if name in ("abs", "conj", "real", "imag"):
        rule = "c_abs" if name == "abs" else "c_exact"
        return Step(f"np.{'absolute' if name == 'abs' else name}({{0}})", (z,), rule)
    if name == "neg":
        return Step("(-{0})", (z,), "c_exact")
    if name == "sum":
        ndim = len(pool.shape(z))
        axis = axes_of(draw, ndim)
        text = f"np.sum({{0}}, axis={axis!r}, keepdims=True)"
        return Step(text, (z,), "c_sum", (normalized(axis, ndim),))
    if draw(st.booleans()):
        w = partner(draw, pool, z, "cf")
    else:
        w = draw(st.sampled_from(["2.0", "0.5", "(-1.0)", "1j", "(0.5 - 2j)"]))
    rule = {"*": "c_mul", "/": "c_div"}.get(name, "c_add")
    return Step(f"({{0}} {name} {{1}})", (z, w), rule)


def fft(draw, pool: Pool) -> Step | None:
    kind = draw(st.sampled_from(["fft", "ifft", "rfft", "irfft", "fft2"]))
    if kind == "rfft":
        a = pool.pick(draw, kinds="f", min_ndim=1)
        if a is None:
            dtype = draw(st.sampled_from(["float32", "float64"]))
            a = pool.add_input((draw(st.integers(1, 9)),), dtype, special=False)
    else:
        a = _complex_value(draw, pool) if draw(st.booleans()) else pool.pick(draw, "fc", 1)
    if a is None or len(pool.shape(a)) < (2 if kind == "fft2" else 1):
        return None
    ndim = len(pool.shape(a))
    norm = draw(st.sampled_from(NORMS))
    if kind == "fft2":
        axes = (-2, -1) if draw(st.booleans()) else (0, ndim - 1)
        text = f"np.fft.fft2({{0}}, axes={axes!r}, norm={norm!r})"
        return Step(text, (a,), "fft", (normalized(axes, ndim), kind, norm))
    axis = draw(st.integers(-ndim, ndim - 1))
    text = f"np.fft.{kind}({{0}}, axis={axis}, norm={norm!r})"
    return Step(text, (a,), "fft", (normalized(axis, ndim), kind, norm))

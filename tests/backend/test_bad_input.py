"""Bad input to a jitted function gets a named error, never a silently wrong result (issue 13)."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import ArgumentError, IntegerOverflowError


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
@pytest.mark.parametrize(
    "make, kind",
    [
        (lambda: np.matrix([[1.0, 2.0], [3.0, 4.0]]), "numpy.matrix"),
        (lambda: np.ma.masked_array([1.0, 2.0], mask=[False, True]), "numpy.ma.MaskedArray"),
        (lambda: np.zeros(2).view(np.memmap), "numpy.memmap"),
    ],
)
def test_ndarray_subclasses_are_refused_by_name(make, kind):
    # Regression: np.matrix and masked arrays were converted to plain arrays (np.matrix's *
    # became elementwise, the mask was dropped).
    arg = make()
    with pytest.raises(ArgumentError, match=kind):
        tj.jit(lambda x: x * x)(arg)
    m = arg
    with pytest.raises(ArgumentError, match=kind):
        tj.jit(lambda x: x * m)(np.ones(np.shape(arg)))  # captured as a constant


def test_python_ints_that_do_not_fit_the_dtype_raise():
    # Regression: an int32 array plus a Python int argument 2**40 wrapped silently.
    x = np.ones(3, np.int32)
    add = tj.jit(lambda x, y: x + y)
    np.testing.assert_array_equal(add(x, 7), x + 7)
    with pytest.raises(IntegerOverflowError, match=r"argument y .*int32"):
        add(x, 2**40)
    with pytest.raises(IntegerOverflowError, match="int32"):
        tj.jit(lambda x: x + 2**31)(x)  # a Python int in the function body
    with pytest.raises(IntegerOverflowError, match="int64"):
        add(np.ones(2, np.int64), 2**70)
    with pytest.raises(OverflowError):  # NumPy's own error, for comparison
        x + 2**40


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"static_argnums": -1}, "negative"),
        ({"static_argnums": (0, -2)}, "negative"),
        ({"static_argnums": 5}, "takes 2 positional"),
        ({"static_argnums": "n"}, "must be ints"),
        ({"static_argnames": "m"}, "'m' is not a parameter"),
    ],
)
def test_bad_static_argument_specs_raise(kwargs, match):
    def f(x, n):
        return x * n

    with pytest.raises(ArgumentError, match=match):
        tj.jit(f, **kwargs)


def test_static_argument_specs_that_fit_still_work():
    def f(x, *rest, **options):
        return x * len(rest) * options.get("k", 1)

    out = tj.jit(f, static_argnums=2, static_argnames="k")(np.ones(2), 0, "b", k=3)
    np.testing.assert_array_equal(out, np.full(2, 6.0))


def test_a_nan_static_argument_raises_instead_of_retracing():
    f = tj.jit(lambda x, n: x * n, static_argnums=1)
    with pytest.raises(ArgumentError, match="static argument n is NaN"):
        f(np.ones(2), float("nan"))
    with pytest.raises(ArgumentError, match="NaN"):
        tj.jit(lambda x, s: x * s[0], static_argnames="s")(np.ones(2), s=(1.0, np.nan))


@pytest.mark.parametrize("out", ["text", object(), (1.0, "x"), {"a": None, "b": print}])
def test_returning_a_non_array_raises_by_name(out):
    with pytest.raises(ArgumentError, match=r"jit\(<lambda>\) returned a .* as output"):
        tj.jit(lambda x: out)(np.ones(2))


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.full(3, 2**70, dtype="int32"),
        lambda m: m.full(3, 2**40, dtype=np.int32),
        lambda m: m.asarray([1, 2**40], dtype=np.int32),
        lambda m: m.asarray(2**64, dtype=np.int64),
    ],
    ids=["full-2**70", "full-2**40", "asarray-list", "asarray-2**64"],
)
def test_creating_an_array_from_an_int_beyond_its_dtype_is_an_integer_overflow_error(make):
    # Regression: NumPy's raw OverflowError ("Python int too large to convert to C long").
    with pytest.raises(OverflowError):  # NumPy refuses the same value: the input is bad
        make(np)
    with pytest.raises(IntegerOverflowError, match="int32|int64|C long"):
        make(tnp)
    with pytest.raises(IntegerOverflowError):
        tj.jit(lambda x: x + make(tnp))(np.ones(3, np.int32))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_take_with_an_empty_list_is_an_empty_take(axis):
    # Regression: `[]` is float64 to NumPy, and take raised "indices must be integers".
    x = np.arange(6.0).reshape(2, 3)
    want = np.take(x, [], axis=axis)
    for got in (tnp.take(x, [], axis=axis), tj.jit(lambda a: tnp.take(a, [], axis=axis))(x)):
        assert got.shape == want.shape and got.dtype == want.dtype
    with pytest.raises(TypeError, match="indices must be integers"):  # non-empty floats stay bad
        tnp.take(x, [0.5])

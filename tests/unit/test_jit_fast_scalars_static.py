"""jit's fast path for calls with static arguments and scalar leaves (tracer/fast_keys.py):
keyed by the static values and each scalar's type, the call skips the general dispatch and
must behave exactly as that dispatch does: the same results and dtypes (NumPy's, weak
Python scalars included), one trace per signature, the same errors. On the reference
interpreter (device="numpy"): the lookup, not a backend, is tested."""

from __future__ import annotations

import enum

import numpy as np
import pytest
from _tracked import tracked
from hypothesis import given
from hypothesis import strategies as st

import tracejit as tj
from tracejit.errors import ArgumentError, IntegerOverflowError

F32 = np.float32


def check_same(got, want):
    assert isinstance(got, np.ndarray) and got.dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


X32 = np.arange(4, dtype=F32) - 1.5
I32 = np.arange(4, dtype=np.int32)


@pytest.mark.parametrize(
    "x, scalars",
    [
        (X32, [0.01, 0.5, -3.0]),  # a Python float: weak, the result stays float32
        (X32, [2, -7, 0]),  # a Python int: weak int64
        (I32, [2, -7, 2**31 - 1]),  # int32 + a Python int: int32 (in range)
        (X32, [True, False]),  # a Python bool
        (X32, [1 + 2j, 0.5j]),  # a Python complex: weak, complex64 beside float32
        (X32, [F32(0.25), F32(2)]),  # NumPy scalars: strong
        (X32, [np.float64(0.25)]),  # a float64 NumPy scalar promotes to float64
        (I32, [np.int8(3), np.int8(-1)]),
    ],
)
def test_scalar_arguments_take_the_fast_path_with_numpys_results(x, scalars):
    f = tracked(lambda x, s: x * s + s)
    for s in scalars + scalars:  # the first call traces; every later one is keyed
        check_same(f(x, s), x * s + s)
    assert len(f.traces_) == 1 and len(f.general) == 1


def test_each_scalar_type_is_its_own_signature():
    f = tracked(lambda x, s: x + s)
    values = [True, 1, 1.0, 1 + 0j, F32(1), np.float64(1), np.int64(1)]
    for _ in range(2):
        for s in values:
            check_same(f(X32, s), X32 + s)
    assert len(f.traces_) == len(f.general) == len(values)


def test_an_int_subclass_is_not_keyed_but_traced_as_an_int():
    class Level(enum.IntEnum):
        HIGH = 3

    f = tracked(lambda x, s: x * s)
    check_same(f(X32, 2), X32 * 2)
    for _ in range(2):  # the same trace (a weak int), through the general path
        check_same(f(X32, Level.HIGH), X32 * 3)
    assert len(f.traces_) == 1 and len(f.general) == 3


def test_python_ints_out_of_range_raise_as_on_the_general_path():
    f = tracked(lambda x, s: x + s)
    check_same(f(I32, 5), I32 + 5)
    check_same(f(I32, 6), I32 + 6)
    with pytest.raises(IntegerOverflowError, match=r"argument s \(1099511627776\).*int32"):
        f(I32, 2**40)  # fits int64, not the int32 the graph converts it to
    with pytest.raises(IntegerOverflowError, match=r"argument s \(2147483648\).*int32"):
        f(I32, 2**31)  # the bounds are inclusive
    with pytest.raises(IntegerOverflowError, match=r"argument s .*int32"):
        f(I32, -(2**31) - 1)
    with pytest.raises(IntegerOverflowError, match=r"argument s .*int64"):
        f(I32, 2**70)
    with pytest.raises(IntegerOverflowError, match=r"argument s .*int64"):
        f(X32, 2**63)
    with pytest.raises(IntegerOverflowError, match=r"argument s .*int64"):
        f(X32, -(2**63) - 1)  # float32 + int: the weak int64 range
    check_same(f(X32, -(2**63)), X32 + F32(-(2**63)))
    check_same(f(I32, -(2**31)), I32 + np.int32(-(2**31)))
    assert len(f.traces_) == 2


def test_pytree_and_keyword_scalars():
    f = tracked(lambda p, *, lr: {k: v - lr * v for k, v in p.items()})
    p = {"w": X32, "s": F32(1.5), "n": 2}
    for lr in (0.1, 0.2, 0.1):
        out = f(p, lr=lr)
        check_same(out["w"], X32 - lr * X32)
        check_same(out["s"], F32(1.5) - lr * F32(1.5))
        check_same(out["n"], np.asarray(2 - lr * 2))
    assert len(f.traces_) == 1 and len(f.general) == 1


@pytest.mark.parametrize(
    "options, call",
    [
        ({"static_argnums": 2}, lambda f, x, lr, t: f(x, lr, t)),
        ({"static_argnames": "training"}, lambda f, x, lr, t: f(x, lr, t)),
        ({"static_argnames": "training"}, lambda f, x, lr, t: f(x, lr, training=t)),
        ({"static_argnames": "training"}, lambda f, x, lr, t: f(x, lr=lr, training=t)),
        ({"static_argnums": (1, 2)}, lambda f, x, lr, t: f(x, lr, t)),
    ],
)
def test_static_arguments_are_keyed_by_value(options, call):
    f = tracked(lambda x, lr, training=False: x * lr if training else x - lr, **options)
    for _ in range(2):
        for t in (True, False):
            check_same(call(f, X32, F32(2), t), X32 * F32(2) if t else X32 - F32(2))
    assert len(f.traces_) == len(f.general) == 2


def test_static_values_equal_on_the_general_path_share_an_entry():
    f = tracked(lambda x, n: x * n, static_argnums=1)
    for n in (2, 2.0, True, 2):  # 2 == 2.0 (one entry); True == 1
        check_same(f(X32, n), X32 * n)
    assert len(f.traces_) == len(f.general) == 2


def test_bad_static_values_raise_as_on_the_general_path():
    f = tracked(lambda x, n: x * len(n), static_argnums=1)
    check_same(f(X32, (1, 2)), X32 * 2)
    check_same(f(X32, (1, 2)), X32 * 2)
    with pytest.raises(ArgumentError, match="must be hashable.*a tuple instead of a list"):
        f(X32, [1, 2])
    with pytest.raises(ArgumentError, match="static argument n is NaN"):
        f(X32, (1, float("nan")))
    nan = (float("nan"),)
    with pytest.raises(ArgumentError, match="static argument n is NaN"):
        f(X32, nan)
    with pytest.raises(ArgumentError, match="static argument n is NaN"):
        f(X32, nan)  # the same object again (a dict lookup finds it by identity)
    assert len(f.traces_) == 1 and len(f.general) == 5


def test_a_static_argument_named_positionally_and_by_keyword():
    # static_argnums names a position: the same argument given by keyword is traced
    f = tracked(lambda x, k=1.0: x * k, static_argnums=1)
    for _ in range(2):
        check_same(f(X32, 3.0), X32 * 3)
        check_same(f(X32, k=3.0), X32 * 3)
        check_same(f(X32, k=4.0), X32 * 4)
    assert len(f.traces_) == len(f.general) == 2


ARRAYS = [X32, I32, np.arange(3, dtype=np.float64), np.arange(4, dtype=np.int8)]
SCALARS = [0.5, -2.0, 3, -1, 127, 128, 2**31, 2**63 - 1, 2**63, True, 1j, F32(1.5), np.int8(2)]
TracejitError = tj.errors.TracejitError


def _step(x, s, flag=False):
    return x * s + 1 if flag else x - s


def _outcome(call):
    """The result of `call()`, or its tracejit error (type and message)."""
    try:
        out = call()
    except TracejitError as e:
        return type(e), str(e).split("\n")[0]  # (the note names the line of the call)
    return np.asarray(out).dtype, np.asarray(out).tolist()


@given(
    st.lists(
        st.tuples(
            st.sampled_from(range(len(ARRAYS))),
            st.sampled_from(range(len(SCALARS))),
            st.booleans(),  # the static value
            st.booleans(),  # the static argument given by keyword
        ),
        min_size=1,
        max_size=8,
    )
)
def test_call_sequences_match_the_general_path(calls):
    # each call of one jitted function (keyed on repeats) against a fresh function's first
    # call (the general path): the same result and dtype, or the same error
    f = tracked(_step, static_argnames="flag")
    for i, j, flag, by_name in calls:
        x, s = ARRAYS[i], SCALARS[j]

        def call(g, x=x, s=s, flag=flag, by_name=by_name):
            return g(x, s, flag=flag) if by_name else g(x, s, flag)

        fresh = tj.jit(_step, static_argnames="flag", device="numpy")
        assert _outcome(lambda: call(f)) == _outcome(lambda g=fresh: call(g))
    # one trace per signature: (x's dtype and shape, s's type, flag, whether flag is given
    # by name: a static argument's position or name is part of the signature), but for an
    # int out of int64's range (refused before tracing)
    seen = {(i, type(SCALARS[j]), *c) for i, j, *c in calls if SCALARS[j] != 2**63}
    assert len(f.traces_) == len(seen)

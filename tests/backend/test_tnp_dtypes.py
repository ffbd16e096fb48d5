"""dtypes of tracejit.numpy as NumPy's types: scalar types that also convert traced values,
`dtype`, `finfo`, `iinfo` and the promotion queries, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

SUPPORTED = ["bool_", "int32", "int64", "float32", "float64"]
ALIASES = {"single": "float32", "double": "float64", "int_": "int64", "float_": "float64"}


@pytest.mark.parametrize("name", SUPPORTED + list(ALIASES))
def test_scalar_types_are_numpy_types(name):
    t = getattr(tnp, name)
    base = getattr(np, ALIASES.get(name, name))
    assert issubclass(t, base) and issubclass(t, np.generic)
    assert np.dtype(t) == np.dtype(base)
    assert tnp.zeros(2, dtype=t).dtype == np.dtype(base)
    assert tnp.astype(np.arange(3), t).dtype == np.dtype(base)
    assert np.ones(2).astype(t).dtype == np.dtype(base)
    value = t(3)
    assert type(value) is base and value == base(3)  # NumPy's own scalar, not the subclass


def test_scalar_types_convert_traced_values():
    @tj.jit
    def f(x):
        return tnp.int64(x), tnp.float32(x), tnp.bool_(x), tnp.int32([x, x + 1.7])

    i, f32, b, pair = f(np.float64(2.5))
    assert i.dtype == np.int64 and i == 2
    assert f32.dtype == np.float32 and f32 == np.float32(2.5)
    assert b.dtype == np.bool_ and b
    np.testing.assert_array_equal(pair, np.array([2, 4], np.int32))


def test_type_hierarchy_and_other_types_are_numpys():
    for name in ["generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
                 "floating", "complexfloating", "character", "flexible", "object_", "int8",
                 "int16", "uint8", "uint16", "uint32", "uint64", "uint", "float16", "complex64",
                 "complex128", "csingle", "cdouble", "complex_", "dtype", "finfo",
                 "iinfo"]:  # fmt: skip
        assert getattr(tnp, name) is getattr(np, name if name != "complex_" else "complex128")
    assert tnp.issubdtype(tnp.float32, tnp.floating)
    assert not tnp.issubdtype(tnp.int32, tnp.floating)
    assert tnp.finfo(tnp.float32).eps == np.finfo(np.float32).eps
    assert tnp.iinfo(tnp.int32).max == np.iinfo(np.int32).max


@pytest.mark.parametrize(
    "args",
    [
        (np.float32, np.int32),
        (np.int32, np.int64),
        (np.bool_, np.int32),
        ("float32", np.float64),
        (np.int8, np.uint8),
        (np.float16, np.int16),
    ],
)
def test_promote_types_and_result_type_match_numpy(args):
    assert tnp.promote_types(*args) == np.promote_types(*args)
    assert tnp.result_type(*args) == np.result_type(*args)


def test_result_type_treats_python_scalars_as_weak():
    x32 = np.ones(2, np.float32)
    assert tnp.result_type(x32, 2.0) == np.result_type(x32, 2.0) == np.float32
    assert tnp.result_type(np.ones(2, np.int32), 3) == np.int32
    assert tnp.result_type(np.ones(2, np.int32), 3.0) == np.float64

    @tj.jit
    def f(x):
        assert tnp.result_type(x, 1.0) == np.float32
        assert tnp.result_type(x, np.float64) == np.float64
        return x

    f(x32)


def test_can_cast_matches_numpy():
    for a in [np.int32, np.int64, np.float32, np.float64, np.bool_]:
        for b in [np.int32, np.int64, np.float32, np.float64, np.bool_]:
            for casting in ["safe", "same_kind", "unsafe"]:
                assert tnp.can_cast(a, b, casting) == np.can_cast(a, b, casting), (a, b)
    assert tnp.can_cast(np.ones(2, np.int32), tnp.float64)

    @tj.jit
    def g(x):
        assert tnp.can_cast(x, tnp.float64) and not tnp.can_cast(x, tnp.int32)
        return x

    g(np.ones(2, np.float32))


def test_isdtype_accepts_tnp_types():
    assert tnp.isdtype(tnp.float32, "real floating")
    assert tnp.isdtype(tnp.int64, ("integral", "bool"))
    assert not tnp.isdtype(tnp.float64, "integral")


def test_unsupported_compute_dtype_is_a_clear_error():
    with pytest.raises(tj.errors.UnsupportedError, match="float16 is not supported"):
        tnp.zeros(2, tnp.float16)

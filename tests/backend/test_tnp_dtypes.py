"""dtypes of tracejit.numpy as NumPy's types: scalar types that also convert traced values,
`dtype`, `finfo`, `iinfo` and the promotion queries, against NumPy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

NAMES = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64", "complex64", "complex128"]  # fmt: skip
ALIASES = {"single": "float32", "double": "float64", "half": "float16", "int_": "int64",
           "float_": "float64", "csingle": "complex64", "cdouble": "complex128",
           "complex_": "complex128", "uint": "uint"}  # fmt: skip


@pytest.mark.parametrize("name", NAMES + list(ALIASES))
def test_scalar_types_are_numpys_own(name):
    t = getattr(tnp, name)
    base = getattr(np, ALIASES.get(name, name))
    assert t is base
    assert tnp.zeros(2, dtype=t).dtype == np.dtype(base)
    assert tnp.astype(np.arange(3), t).dtype == np.dtype(base)
    assert type(t(3)) is base and t(3) == base(3)


def test_bfloat16_is_ml_dtypes_type():
    assert tnp.bfloat16 is ml_dtypes.bfloat16
    assert tnp.zeros(2, tnp.bfloat16).dtype == np.dtype(ml_dtypes.bfloat16)
    assert tnp.finfo(tnp.bfloat16).eps == ml_dtypes.finfo(ml_dtypes.bfloat16).eps
    assert tnp.issubdtype(tnp.bfloat16, tnp.floating) and tnp.issubdtype(tnp.bfloat16, tnp.number)
    assert not tnp.issubdtype(tnp.bfloat16, tnp.integer)
    assert not tnp.issubdtype(tnp.bfloat16, tnp.float16)
    assert tnp.issubdtype(tnp.bfloat16, tnp.bfloat16)
    assert not tnp.issubdtype(tnp.float32, tnp.bfloat16)
    assert tnp.isdtype(tnp.bfloat16, "real floating") and tnp.isdtype(tnp.bfloat16, "numeric")
    assert not tnp.isdtype(tnp.bfloat16, ("integral", "complex floating"))


@pytest.mark.parametrize(
    "a, b, want",  # JAX's lattice for bfloat16; NumPy's promotion rejects most of these
    [
        ("bfloat16", "float16", "float32"),
        ("bfloat16", "int8", "bfloat16"),
        ("bfloat16", "uint8", "bfloat16"),
        ("bfloat16", "int16", "float32"),
        ("bfloat16", "int32", "float64"),
        ("bfloat16", "float32", "float32"),
        ("bfloat16", "complex64", "complex64"),
        ("bfloat16", "bool", "bfloat16"),
    ],
)
def test_bfloat16_promotion(a, b, want):
    assert tnp.promote_types(a, b) == np.dtype(want)
    assert tnp.result_type(a, b) == np.dtype(want)


def test_bfloat16_with_python_scalars_stays_bfloat16():
    x = np.ones(2, ml_dtypes.bfloat16)
    assert tnp.result_type(x, 2.0) == tnp.result_type(x, 3) == np.dtype(ml_dtypes.bfloat16)
    assert tnp.result_type(x, 1j) == np.complex64


def test_scalar_type_on_traced_value_says_how_to_convert():
    @tj.jit
    def f(x):
        return tnp.int64(x)

    with pytest.raises(tj.errors.ConcretizationError, match=r"x.astype\(np.int64\)"):
        f(np.float64(2.5))

    @tj.jit
    def g(x):
        return x.astype(tnp.int8), tnp.asarray(x, tnp.uint16), tnp.astype(x, tnp.bool_)

    i8, u16, b = g(np.float64(2.5))
    assert (i8.dtype, u16.dtype, b.dtype) == (np.int8, np.uint16, np.bool_)
    assert i8 == 2 and u16 == 2 and b


def test_type_hierarchy_and_other_types_are_numpys():
    for name in ["generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
                 "floating", "complexfloating", "character", "flexible", "object_", "dtype",
                 "iinfo"]:  # fmt: skip
        assert getattr(tnp, name) is getattr(np, name)
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
    kinds = [np.int8, np.uint16, np.int32, np.int64, np.float16, np.float32, np.float64, np.bool_,
             np.complex64]  # fmt: skip
    for a in kinds:
        for b in kinds:
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


def test_unsupported_dtype_is_a_clear_error():
    with pytest.raises(tj.errors.UnsupportedError, match="datetime64.* is not supported"):
        tnp.zeros(2, "datetime64[s]")

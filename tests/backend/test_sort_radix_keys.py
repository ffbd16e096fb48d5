"""CuPy sorts a one-dimensional float32/float64 array with thrust's radix sort over its bits
(cupy/cuda/cupy_thrust.cu: `thrust::less` for floating types "happens to sort NaNs to the
back", positive ones only): a NaN with its sign bit set (x86's default NaN, what 0/0 gives on a
CPU) came first and -0.0 before 0.0. An H100 run of the fuzzer found argsort's permutation
wrong. The CUDA emulator's sort orders one-axis floats by the same bits (`radix_order`), so the
keys tracejit hands CuPy are checked without a GPU, and on a card against CuPy itself."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.ir import sorting

# the CUDA emulator's stand-in order (loaded by its path: on a card `cupy` is CuPy)
_spec = importlib.util.spec_from_file_location(
    "_emulated_radix", Path(__file__).parents[1] / "cuda_emulator" / "cupy" / "_radix.py"
)
_radix = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_radix)
radix_order = _radix.radix_order


def _on_host(fn, fallback):
    # the radix order for one-axis floats (integers sort by value, as CuPy's radix sort does)
    return lambda x, axis=-1, kind=None: (
        fn(x) if x.ndim == 1 and x.dtype.kind == "f" else fallback(x, axis=axis, kind="stable")
    )


# CuPy's one-axis float sorts on host arrays, for the primitives' implementations
RadixNumPy = types.SimpleNamespace(
    isnan=np.isnan, where=np.where,
    argsort=_on_host(radix_order, np.argsort), sort=_on_host(lambda x: x[radix_order(x)], np.sort),
)  # fmt: skip


def _awkward(dtype):
    neg_nan = np.array(np.nan, dtype)
    neg_nan = -neg_nan if not np.signbit(neg_nan) else neg_nan  # -NaN, whatever np.nan is
    x = np.array([1.0, -np.inf, 4.5, 0.0, -0.0, np.nan, -6.0, 0.0, np.inf, -0.0, 2.0], dtype)
    x[[3, 10]] = neg_nan  # NaNs of both signs, zeros of both signs, in no particular order
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_radix_order_differs_from_numpys(dtype):
    # the stand-in orders as CuPy did: a -NaN first, -0.0 before an earlier 0.0
    x = _awkward(dtype)
    assert np.isnan(x[radix_order(x)[0]])
    assert not np.array_equal(radix_order(x), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_keys_handed_to_a_radix_sort_give_numpys_order(dtype):
    x = _awkward(dtype)
    got = sorting._argsort_impl(x, axis=0, xp=RadixNumPy)
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))
    values = sorting._sort_impl(x, axis=0, xp=RadixNumPy)
    want = np.sort(x)
    np.testing.assert_array_equal(values, want)  # NaN last, equal values in place
    # the bits: as many -0.0 (NumPy's sort may put them after 0.0), NaN positive
    assert np.signbit(values[values == 0]).sum() == np.signbit(want[want == 0]).sum()
    assert not np.signbit(values[np.isnan(values)]).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(11,), (1, 11)])
def test_sorting_nan_of_either_sign_on_the_device(device, shape, dtype):
    # on a card (and the emulator) a one-axis float array goes through the radix sort; the
    # (1, 11) sort along its last axis through CuPy's comparison sort (argsort flattens it)
    x = _awkward(dtype).reshape(shape)
    order, values = tj.jit(lambda v: (tnp.argsort(v, axis=None), tnp.sort(v, axis=-1)),
                           device=device)(x)  # fmt: skip
    np.testing.assert_array_equal(tj.device_get(order), np.argsort(x, axis=None, kind="stable"))
    np.testing.assert_array_equal(tj.device_get(values), np.sort(x, axis=-1))

"""jit's fast path with CuPy arguments (tracer/fast_keys.py): a call whose leaves are CuPy
arrays (jit's own CUDA results too) is keyed by their type, shape and dtype, so a repeated
call skips the general dispatch (abstractifying every leaf, the signature lookup), as one
with NumPy arrays does. Before, every such call took the general path. On a GPU and the
CUDA emulator."""

from __future__ import annotations

import numpy as np
import pytest
from _cuda_programs import needs_gpu
from _tracked import tracked

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import DeviceError

pytestmark = needs_gpu


def test_cupy_arguments_take_the_fast_path():
    import cupy

    x = np.linspace(-1.0, 1.0, 7, dtype=np.float32)
    y = np.arange(7, dtype=np.float64)
    f = tracked(lambda a, b: (tnp.sin(a) * 2.0, a + b), device="cuda")
    want = (np.sin(x) * np.float32(2.0), x + y)
    dx, dy = cupy.asarray(x), cupy.asarray(y)
    for _ in range(3):
        got = [tj.device_get(g) for g in f(dx, dy)]
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-6)
    assert len(f.traces_) == 1 and len(f.general) == 1  # the first call alone

    out = f(dx, dy)[1]  # jit's own result (a CuPy array) as an argument: keyed too
    for _ in range(2):
        np.testing.assert_allclose(tj.device_get(f(dx, out)[1]), x + (x + y), rtol=1e-6)
    assert len(f.traces_) == 1 and len(f.general) == 2

    # another shape or dtype is another key: traced once more, then fast
    for _ in range(2):
        got = tj.device_get(f(dx[:3], dy[:3])[0])
        np.testing.assert_allclose(got, want[0][:3], rtol=1e-6)
    assert len(f.traces_) == 2 and len(f.general) == 3
    for _ in range(2):
        assert tj.device_get(f(dx.astype(cupy.float64), dy)[0]).dtype == np.float64
    assert len(f.traces_) == 3 and len(f.general) == 4

    # a NumPy array of the same shape and dtype is keyed apart, and served right
    np.testing.assert_allclose(tj.device_get(f(x, y)[1]), want[1])
    np.testing.assert_allclose(tj.device_get(f(dx, dy)[1]), want[1])


def test_a_cupy_argument_to_a_host_function_raises_every_time():
    import cupy

    f = tracked(lambda a: a * 2.0, device="cpu")
    for _ in range(2):  # never stored as a fast call: the general path raises each time
        with pytest.raises(DeviceError, match="GPU array"):
            f(cupy.asarray(np.ones(3)))
    assert len(f.general) == 2


def test_a_gpu_array_given_to_eager_tracejit_numpy_is_a_clear_error():
    # eager tracejit.numpy runs on the host: a CuPy array (or jit's CUDA result) there raised
    # CuPy's "Implicit conversion to a NumPy array is not allowed", which names no way out
    import cupy

    x = cupy.asarray(np.arange(4.0))
    result = tj.jit(lambda v: v * 2.0, device="cuda")(x)
    for fn in (lambda: tnp.sin(x), lambda: tnp.sum(result), lambda: tnp.linalg.norm(x),
               lambda: tj.jit(lambda v: v + x, device="cuda")(np.ones(4))):  # fmt: skip
        with pytest.raises(DeviceError, match=r"GPU array .* shape \(4,\).*device_get"):
            fn()

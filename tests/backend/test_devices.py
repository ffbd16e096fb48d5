"""device_put / device_get and the errors for a missing CuPy or GPU."""

import numpy as np
import pytest

import tracejit as tj


def test_device_put_get_roundtrip_on_cpu():
    tree = {"w": np.ones((2, 2), np.float32), "b": [np.zeros(3)]}
    put = tj.device_put(tree, "cpu")
    got = tj.device_get(put)
    np.testing.assert_array_equal(got["w"], tree["w"])
    assert isinstance(got["b"][0], np.ndarray)


def test_unknown_device_is_named():
    with pytest.raises(tj.errors.DeviceError, match="unknown device 'tpu'"):
        tj.device_put(np.ones(2), "tpu")


def test_cuda_without_gpu_says_what_is_missing(without_cupy):
    with pytest.raises(
        tj.errors.DeviceError, match="(CuPy is not importable|no usable CUDA GPU|no CUDA GPU)"
    ):
        tj.device_put(np.ones(2), "cuda")
    f = tj.jit(lambda x: x + 1, device="cuda")
    with pytest.raises(tj.errors.DeviceError, match="device='cuda'"):
        f(np.ones(2))
    # the CPU keeps working after a failed cuda call
    np.testing.assert_array_equal(tj.jit(lambda x: x + 1)(np.ones(2)), [2, 2])

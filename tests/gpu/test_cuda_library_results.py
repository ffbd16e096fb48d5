"""A library step's buffers become the arrays CuPy returned, with no copy, where that is safe
(backend_cuda/library.py `adoptable`, `_fresh`); a donated output, or a result sharing an
operand's memory, is still copied. Values: NumPy. On a GPU and the CUDA emulator."""

from __future__ import annotations

import numpy as np
import pytest
from _cuda_programs import needs_gpu

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cuda import row_sort

pytestmark = needs_gpu


def _address(x) -> int:
    return x.__cuda_array_interface__["data"][0]


@pytest.fixture
def returned(monkeypatch):
    """The addresses of the arrays the row sort (backend_cuda/row_sort.py) and
    `cupy.fft.rfft` returned, by name."""
    import cupy

    seen: dict[str, list[int]] = {"row_sort": [], "rfft": []}

    def recording(owner, name):
        original = getattr(owner, name)

        def call(*args, **kwargs):
            out = original(*args, **kwargs)
            seen[name].append(_address(out))
            return out

        monkeypatch.setattr(owner, name, call)

    recording(row_sort, "row_sort")
    recording(cupy.fft, "rfft")  # one axis: the one-dimensional call
    return seen


def test_outputs_and_temporaries_are_the_arrays_cupy_returned(returned):
    x = np.random.default_rng(0).normal(size=(4, 32)).astype(np.float32)

    def f(x):
        spectrum = tnp.fft.rfft(x)  # an output, read again by the kernel after it
        smooth = tnp.fft.irfft(tnp.fft.rfft(x * 2.0) * 0.5, n=32)  # a temporary rfft
        return tnp.sort(x, axis=-1), spectrum, spectrum * 2.0, smooth

    ordered, spectrum, doubled, smooth = tj.jit(f, device="cuda")(x)
    assert returned["row_sort"] == [_address(ordered)]  # the sort's own array, no copy
    assert _address(spectrum) in returned["rfft"]
    np.testing.assert_array_equal(tj.device_get(ordered), np.sort(x, axis=-1))
    np.testing.assert_allclose(tj.device_get(spectrum), np.fft.rfft(x), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(tj.device_get(doubled), 2 * np.fft.rfft(x), rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(tj.device_get(smooth), x, rtol=1e-4, atol=1e-5)


def test_a_result_in_an_operands_memory_is_copied(monkeypatch):
    # a library may hand back its operand (already sorted data): the output must not be the
    # caller's input array, which the caller still owns and may change
    import cupy

    monkeypatch.setattr(row_sort, "row_sort", lambda a, xp, indices: a)
    x = cupy.asarray(np.arange(6.0))
    out = tj.jit(tnp.sort, device="cuda")(x)
    assert _address(out) != _address(x)
    x[...] = cupy.asarray(np.zeros(6))
    np.testing.assert_array_equal(tj.device_get(out), np.arange(6.0))


def test_a_donated_output_is_written_into_the_donated_memory(returned):
    import cupy

    # p's last reader (the sum) runs before the sort writes: the sort's output may take p's
    # memory (ir/donation.py), and then it is copied there, not adopted
    step = tj.jit(lambda p, q: tnp.sort(q + p.sum()), donate_argnums=0, device="cuda")
    p = cupy.asarray(np.ones(5))
    where = _address(p)
    out = step(p, np.array([3.0, 1.0, 2.0, 5.0, 4.0]))
    assert _address(out) == where
    assert returned["row_sort"] and returned["row_sort"][0] != where
    np.testing.assert_array_equal(tj.device_get(out), [6.0, 7.0, 8.0, 9.0, 10.0])


def test_a_reshaped_operand_reaches_cufft_as_its_own_array(monkeypatch):
    # CuPy's FFTs copy an operand whose `base` is set (a view); the step passes the
    # reshaped buffer as an array on the same memory with no `base`
    import cupy

    seen = []
    original = cupy.fft.rfft

    def rfft(a, *args, **kwargs):
        seen.append((a.base is None, _address(a)))
        return original(a, *args, **kwargs)

    monkeypatch.setattr(cupy.fft, "rfft", rfft)
    x = np.random.default_rng(1).normal(size=32).astype(np.float32)
    xd = cupy.asarray(x)
    out = tj.jit(lambda x: tnp.fft.rfft(x.reshape(4, 8)), device="cuda")(xd)
    assert seen == [(True, _address(xd))]
    want = np.fft.rfft(x.reshape(4, 8))
    np.testing.assert_allclose(tj.device_get(out), want, rtol=1e-5, atol=1e-5)

"""A big fft step of a compiled CPU program runs scipy.fft on the free cores
(backend_cpu/fft_step.py); a small one, or a machine with no free core, on one thread."""

import numpy as np
import scipy.fft  # noqa: F401  (a test dependency, through scikit-learn): the threaded path

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cpu import fft_step, lapack_threads


def _spy(monkeypatch, free: int) -> list:
    asked = []

    def free_threads():
        asked.append(free)
        return free

    monkeypatch.setattr(lapack_threads, "free_threads", free_threads)
    return asked


def test_a_big_transform_takes_the_free_threads_and_matches_numpy(monkeypatch):
    asked = _spy(monkeypatch, 2)
    rng = np.random.default_rng(0)
    z = (rng.standard_normal((512, 512)) + 1j * rng.standard_normal((512, 512))).astype("c8")
    x = rng.standard_normal((512, 512)).astype("f4")
    got = tj.jit(lambda a, b: (tnp.fft.fft2(a), tnp.fft.irfft2(tnp.fft.rfft2(b), s=b.shape)))
    f, back = got(z, x)
    scale = np.abs(np.fft.fft2(z)).max()
    np.testing.assert_allclose(f, np.fft.fft2(z), atol=1e-5 * scale)
    np.testing.assert_allclose(back, x, atol=1e-5)
    assert f.dtype == np.complex64 and back.dtype == np.float32
    # fft2 and rfft2 asked for threads; irfft2's operand (512 x 257) is under MIN_SIZE
    assert len(asked) == 2 and 512 * 257 < fft_step.MIN_SIZE <= 512 * 512


def test_a_small_transform_stays_on_the_plain_step(monkeypatch):
    asked = _spy(monkeypatch, 2)
    z = np.arange(64, dtype="c16").reshape(8, 8)
    np.testing.assert_allclose(tj.jit(tnp.fft.fft2)(z), np.fft.fft2(z), atol=1e-12)
    assert asked == [] and fft_step.into("fft", [z]) is None

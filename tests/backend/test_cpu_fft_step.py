"""A big fft step of a compiled CPU program runs on the program's threads unless the machine
is crowded (backend_cpu/fft_step.py), in each host library (ir/fft_host.py), writing into the
program's buffers; a small one runs the plain one-thread step."""

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cpu import fft_step, lapack_threads
from tracejit.ir import fft_host

HOSTS = [pytest.param(np.fft, id="numpy")] + [
    pytest.param(name, id=name) for name in ("scipy.fft", "ducc0.fft")
]


def _spy(monkeypatch, threads: int) -> list:
    asked = []

    def unless_crowded():
        asked.append(threads)
        return threads

    monkeypatch.setattr(lapack_threads, "unless_crowded", unless_crowded)
    return asked


@pytest.mark.parametrize("host", HOSTS)
def test_a_big_transform_takes_the_threads_and_matches_numpy(monkeypatch, host):
    lib = host if host is np.fft else pytest.importorskip(host)
    monkeypatch.setattr(fft_host, "library", lambda: lib)
    asked = _spy(monkeypatch, 2)
    rng = np.random.default_rng(0)
    z = (rng.standard_normal((512, 512)) + 1j * rng.standard_normal((512, 512))).astype("c8")
    x = rng.standard_normal((512, 512)).astype("f4")
    got = tj.jit(lambda a, b: (tnp.fft.fft2(a), tnp.fft.irfft2(tnp.fft.rfft2(b), s=b.shape)))
    f, back = got(z[::-1], x)  # a reversed input: the program copies it to a buffer first
    scale = np.abs(np.fft.fft2(z[::-1])).max()
    np.testing.assert_allclose(f, np.fft.fft2(z[::-1]), atol=1e-5 * scale)
    np.testing.assert_allclose(back, x, atol=1e-5)
    assert f.dtype == np.complex64 and back.dtype == np.float32
    # fft2 and rfft2 asked for threads (but np.fft has none); irfft2's operand (512 x 257)
    # is under MIN_SIZE
    assert len(asked) == (0 if lib is np.fft else 2)
    assert 512 * 257 < fft_step.MIN_SIZE <= 512 * 512


def test_a_small_transform_stays_on_the_plain_step(monkeypatch):
    asked = _spy(monkeypatch, 2)
    z = np.arange(64, dtype="c16").reshape(8, 8)
    np.testing.assert_allclose(tj.jit(tnp.fft.fft2)(z), np.fft.fft2(z), atol=1e-12)
    assert asked == [] and fft_step.into("fft", [z]) is None


def test_threads_unless_crowded(monkeypatch):
    monkeypatch.delenv("TRACEJIT_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(lapack_threads, "_cores", lambda: 4)
    others = {"n": 0}
    monkeypatch.setattr(lapack_threads, "_others_running", lambda: others["n"])
    assert lapack_threads.unless_crowded() == 4
    others["n"] = 3  # a busy core beside: still every thread (free_threads gives one)
    assert lapack_threads.unless_crowded() == 4 and lapack_threads.free_threads() == 1
    others["n"] = 4  # as many others as cores: crowded
    assert lapack_threads.unless_crowded() == 1
    others["n"] = None  # no /proc/loadavg
    assert lapack_threads.unless_crowded() == 1
    others["n"] = 0
    monkeypatch.setenv("TRACEJIT_NUM_THREADS", "1")
    assert lapack_threads.unless_crowded() == 1
    monkeypatch.setenv("TRACEJIT_NUM_THREADS", "8")  # never more than the cores
    assert lapack_threads.unless_crowded() == 4


def test_a_huge_transform_takes_the_threads_even_when_crowded(monkeypatch):
    if fft_host.library() is np.fft:
        pytest.skip("np.fft has no threads")
    monkeypatch.setattr(lapack_threads, "unless_crowded", lambda: 1)  # crowded
    monkeypatch.setattr(lapack_threads, "program_threads", lambda: 2)
    seen, original = [], fft_host.transform

    def transform(*args, workers=None, **kw):
        seen.append(workers)
        return original(*args, workers=workers, **kw)

    monkeypatch.setattr(fft_host, "transform", transform)
    for n in (fft_step.ALWAYS_THREADED, fft_step.MIN_SIZE):
        got = tj.jit(tnp.fft.rfft)(np.ones(n, np.float32))
        np.testing.assert_allclose(got[:2], [n, 0], rtol=1e-6, atol=1e-3)
    assert seen == [2, 1]

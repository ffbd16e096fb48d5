"""The host FFT libraries (ir/fft_host.py: ducc0, scipy.fft, np.fft) against np.fft: every
kind, float32/complex64 kept single, into a given output array, on strided, reversed and
size-1 axes, and with an empty leading axis."""

from __future__ import annotations

import numpy as np
import pytest

from tracejit.ir import fft_host, fft_prims


def _libraries():
    libs = [pytest.param(np.fft, id="numpy")]
    for name in ("scipy.fft", "ducc0.fft"):
        try:
            mod = __import__(name, fromlist=["_"])
        except ImportError:
            libs.append(pytest.param(None, id=name, marks=pytest.mark.skip(f"no {name}")))
        else:
            libs.append(pytest.param(mod, id=name))
    return libs


LIBS = _libraries()
RNG = np.random.default_rng(7)


def _numpy(x, kind, lengths):
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if kind == "irfft":
        return np.fft.irfftn(x, s=lengths, axes=axes)
    return {"fft": np.fft.fftn, "ifft": np.fft.ifftn, "rfft": np.fft.rfftn}[kind](x, axes=axes)


def _operand(kind, shape, single):
    x = RNG.standard_normal(shape)
    if kind != "rfft":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(np.complex64 if x.dtype.kind == "c" else np.float32) if single else x


# (kind, operand shape, lengths): odd and even lengths, size-1 axes, an empty leading axis
CASES = [
    ("fft", (3, 8, 6), (8, 6)),
    ("ifft", (2, 5, 7), (7,)),
    ("rfft", (4, 9), (4, 9)),
    ("rfft", (3, 1, 1), (1, 1)),
    ("irfft", (3, 6, 4), (6, 6)),
    ("irfft", (2, 5, 4), (5, 7)),
    ("irfft", (2, 1), (1,)),
    ("fft", (1, 1), (1,)),
    ("fft", (0, 4), (4,)),
]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("single", [False, True], ids=["double", "single"])
@pytest.mark.parametrize("case", CASES, ids=[f"{k}-{s}" for k, s, _ in CASES])
def test_values_match_numpy(lib, single, case):
    kind, shape, lengths = case
    x = _operand(kind, shape, single)
    want = _numpy(x, kind, lengths)
    dtype = fft_prims._fft_rule([(x.shape, x.dtype, False)], kind, lengths)[1]
    tol = 2e-5 if single else 1e-12
    out = np.full(want.shape, np.nan, dtype)
    assert fft_host.transform(x, kind, lengths, lib=lib, out=out) is out
    fresh = fft_host.transform(x, kind, lengths, lib=lib).astype(dtype, copy=False)
    for got in (out, fresh):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)
    # the primitive's implementation (the default library) keeps single precision single
    assert fft_prims.fft_impl(x, kind, lengths).dtype == dtype
    if lib is not np.fft:  # ducc0 and scipy.fft compute in single precision themselves
        assert fft_host.transform(x, kind, lengths, lib=lib).dtype == dtype


@pytest.mark.parametrize("lib", LIBS)
def test_strided_and_reversed_operands(lib):
    base = RNG.standard_normal((6, 10)) + 1j * RNG.standard_normal((6, 10))
    for x in (base[::2, ::-3], base[::-1, 1::2], base.T):  # non-contiguous, negative strides
        lengths = x.shape
        want = np.fft.fftn(x)
        got = fft_host.transform(x, "fft", lengths, lib=lib, workers=2)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        r = x.real  # a strided real view
        out = np.empty(r.shape[:-1] + (r.shape[-1] // 2 + 1,), np.complex128)
        fft_host.transform(r, "rfft", lengths, lib=lib, out=out, workers=2)
        np.testing.assert_allclose(out, np.fft.rfftn(r), rtol=1e-12, atol=1e-12)


def test_the_library_is_the_first_installed():
    try:
        import ducc0.fft

        want = ducc0.fft
    except ImportError:
        try:
            import scipy.fft

            want = scipy.fft
        except ImportError:
            want = np.fft
    assert fft_host.library() is want


# rows of the result a multiple of 4 KiB long: ducc0 writes them through a padded stand-in
CRITICAL = [
    ("fft", (3, 256), (256,), np.complex128),  # 4 KiB rows
    ("fft", (4, 1024), (4, 1024), np.complex64),  # 8 KiB rows, both axes
    ("rfft", (2, 3, 2048), (3, 2048), np.float64),  # result rows 1025 x 16 B: not critical
    ("irfft", (2, 513), (1024,), np.complex64),  # float32 rows of 4 KiB
    ("ifft", (2, 2, 512), (2, 512), np.complex128),
]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", CRITICAL, ids=[f"{k}-{s}" for k, s, _, _ in CRITICAL])
def test_rows_a_critical_stride_apart(lib, case):
    kind, shape, lengths, dtype = case
    x = RNG.standard_normal(shape)
    x = (x + 1j * RNG.standard_normal(shape) if kind != "rfft" else x).astype(dtype)
    want = _numpy(x, kind, lengths)
    out = np.empty(want.shape, fft_prims._fft_rule([(shape, x.dtype, False)], kind, lengths)[1])
    assert fft_host.transform(x, kind, lengths, lib=lib, out=out, workers=2) is out
    tol = 2e-5 if out.dtype in (np.complex64, np.float32) else 1e-12
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol * 10)
    fresh = np.asarray(fft_host.transform(x, kind, lengths, lib=lib))
    np.testing.assert_allclose(fresh, want, rtol=tol, atol=tol * 10)


def test_which_results_are_padded():
    axes = (0, 1)
    assert fft_host._padded(np.empty((4, 1024), np.complex64), axes).shape == (4, 1024)
    assert fft_host._padded(np.empty((4, 1024), np.complex64), axes).strides[0] == 8256
    assert fft_host._padded(np.empty((4, 1024), np.complex64), (0,)) is None  # rows kept
    assert fft_host._padded(np.empty((4, 4096), np.complex64), axes) is None  # 32 KiB rows
    assert fft_host._padded(np.empty((4, 1000), np.complex64), axes) is None
    assert fft_host._padded(np.empty((1, 1024), np.complex64), axes) is None  # one row
    assert fft_host._padded(np.empty((1024, 4), np.complex64)[:, :2], axes) is None


def _vm_flags(address: int) -> list[str]:
    """The VmFlags of the mapping holding `address` (/proc/self/smaps)."""
    inside = False
    with open("/proc/self/smaps", encoding="ascii") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(v, 16) for v in head.split("-"))
                inside = lo <= address < hi
            elif inside and head == "VmFlags:":
                return line.split()[1:]
    raise AssertionError(f"no mapping holds {address:#x}")


@pytest.mark.skipif(fft_host._madvise() is None, reason="no madvise (Linux only)")
def test_big_results_are_advised_onto_small_pages(monkeypatch):
    monkeypatch.setattr(fft_host, "SMALL_PAGES_FROM", 1 << 22)  # 4 MiB arrays: cheap
    big = np.arange(fft_host.SMALL_PAGES_FROM // 8, dtype=np.complex64)
    small = np.arange(100, dtype=np.complex64)
    before = big.copy()
    middle = big.__array_interface__["data"][0] + big.nbytes // 2
    assert fft_host.small_pages(big) is big and fft_host.small_pages(small) is small
    assert "nh" in _vm_flags(middle)  # VM_NOHUGEPAGE on the array's whole pages
    np.testing.assert_array_equal(big, before)  # advice only
    x = np.ones((1024, 512), np.complex64)  # through `transform`, into a fresh output
    out = np.empty_like(x)
    fft_host.transform(x, "fft", (1024, 512), out=out)
    assert "nh" in _vm_flags(out.__array_interface__["data"][0] + out.nbytes // 2)
    assert out[0, 0] == x.size and not np.any(out.ravel()[1:])

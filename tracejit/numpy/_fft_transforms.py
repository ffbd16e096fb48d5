"""The transforms of `tracejit.numpy.fft`: fft, ifft, rfft, irfft, hfft, ihfft and their 2-D
and n-D forms, with NumPy's `n`/`s`, `axis`/`axes` and `norm` ("backward", "ortho",
"forward"). Each crops or zero-pads the transformed axes to the requested lengths, binds
the one `fft` primitive over them where they are (ir/fft_prims.py: the host library,
ir/fft_host.py, in compiled CPU programs; no transposes to move them), which also scales;
gradients follow JAX's complex convention.

>>> import numpy as np, tracejit.numpy as tnp
>>> tnp.fft.fft(np.array([1.0, 0.0, -1.0, 0.0]))
array([0.+0.j, 2.+0.j, 0.+0.j, 2.+0.j])
"""

from __future__ import annotations

import numpy as np

from tracejit import numpy as tnp
from tracejit.errors import TracejitTypeError, TracejitValueError
from tracejit.ir import dtypes
from tracejit.ir.fft_prims import NORMS, attrs, complex_dtype, real_dtype
from tracejit.numpy._core import normalize_axis
from tracejit.tracer.core import bind


def _operand(a, kind: str):
    a = tnp.asarray(a)
    # NumPy: float16 and bfloat16 transform in single precision (complex64), as JAX
    low = dtypes.is_low_precision(a.dtype)
    if kind == "rfft":
        if dtypes.is_complex(a.dtype):
            raise TracejitTypeError("rfft: expected a real operand, got a complex one")
        real = np.float32 if low else a.dtype if a.dtype.kind == "f" else np.float64
        return tnp.astype(a, real_dtype(real))
    base = np.float32 if low else a.dtype if a.dtype.kind in "fc" else np.float64
    return tnp.astype(a, complex_dtype(base))


def _axes_and_lengths(a, s, axes, kind: str):
    nd = tnp.ndim(a)
    if axes is None:
        axes = tuple(range(nd - len(s), nd)) if s is not None else tuple(range(nd))
    axes = tuple(normalize_axis(ax, nd, "fft") for ax in axes)
    if s is None:
        s = [tnp.shape(a)[ax] for ax in axes]
        if kind == "irfft":
            s[-1] = 2 * (s[-1] - 1)
    s = tuple(int(n) for n in s)
    if len(s) != len(axes) or any(n < 1 for n in s):
        raise TracejitValueError(f"fft: invalid lengths {s} for axes {axes}")
    return axes, s


def _fit(x, axis: int, n: int):
    """`x` cropped or zero-padded to length `n` along `axis`."""
    have = tnp.shape(x)[axis]
    if have > n:
        return tnp.take(x, np.arange(n), axis=axis)
    if have < n:
        widths = [(0, 0)] * tnp.ndim(x)
        widths[axis] = (0, n - have)
        return tnp.pad(x, widths)
    return x


def _norm(norm) -> str:
    """NumPy's `norm` argument, checked ("backward" for None)."""
    if norm is None or norm in NORMS:
        return norm or "backward"
    raise TracejitValueError(f'norm must be "backward", "ortho" or "forward", got {norm!r}')


def _transform(a, kind: str, s, axes, norm):
    if (tnp.ndim(a) == 0 if axes is None else len(axes) == 0) and not s:
        if kind in ("rfft", "irfft"):
            raise TracejitValueError(f"fft: {kind} needs an axis to transform, got none")
        return tnp.asarray(a)  # NumPy's fftn / ifftn over no axes: the operand as it is
    x = _operand(a, kind)
    axes, s = _axes_and_lengths(x, s, axes, kind)
    norm = _norm(norm)  # checked before tracing anything
    for group_kind, group in _passes(kind, axes):
        x = _pass(x, group_kind, tuple(s[i] for i in group), tuple(axes[i] for i in group), norm)
    in_dtype = tnp.asarray(a).dtype
    if kind == "irfft" and dtypes.is_low_precision(in_dtype):
        return tnp.astype(x, in_dtype)  # NumPy's irfft of float16 is float16
    return x


def _passes(kind: str, axes: tuple[int, ...]) -> list[tuple[str, list[int]]]:
    """NumPy's n-D transform is 1-D transforms in turn (fftn, rfftn: the last axis first;
    irfftn: the first first, the real one last); with repeated axes (NumPy transforms such an
    axis again) these split into runs over distinct axes, each one `fft` primitive:
    (kind, indices into `axes`, ascending, so that a real transform's axis stays last)."""
    last = len(axes) - 1
    if kind == "irfft":
        steps = [("ifft", i) for i in range(last)] + [("irfft", last)]
    else:
        steps = [(kind, last)] + [("fft" if kind == "rfft" else kind, i) for i in range(last)[::-1]]
    groups: list[tuple[str, list[int]]] = []
    for step_kind, i in steps:
        if not groups or axes[i] in {axes[j] for j in groups[-1][1]}:
            groups.append((step_kind, []))
        if step_kind in ("rfft", "irfft"):
            groups[-1] = (step_kind, groups[-1][1])
        groups[-1][1].append(i)
    return [(k, sorted(group)) for k, group in groups]


def _pass(x, kind: str, s: tuple[int, ...], axes: tuple[int, ...], norm):
    """The `kind` transform over distinct `axes` (the real one of rfft/irfft last)."""
    for i, (ax, n) in enumerate(zip(axes, s)):
        x = _fit(x, ax, n // 2 + 1 if kind == "irfft" and i == len(axes) - 1 else n)
    nd = tnp.ndim(x)
    return bind("fft", x, kind=kind, **attrs(s, tuple(ax - nd for ax in axes), norm))


def _one(n, axis):
    return None if n is None else (n,), (axis,)


def fft(a, n=None, axis: int = -1, norm=None):
    """`np.fft.fft`: the 1-D discrete Fourier transform along `axis`."""
    return _transform(a, "fft", *_one(n, axis), norm)


def ifft(a, n=None, axis: int = -1, norm=None):
    """`np.fft.ifft`: the inverse of `fft`."""
    return _transform(a, "ifft", *_one(n, axis), norm)


def rfft(a, n=None, axis: int = -1, norm=None):
    """`np.fft.rfft`: the non-negative frequencies of a real signal's transform.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.fft.rfft(np.array([1.0, 2.0, 3.0, 4.0]))
    array([10.+0.j, -2.+2.j, -2.+0.j])
    """
    return _transform(a, "rfft", *_one(n, axis), norm)


def irfft(a, n=None, axis: int = -1, norm=None):
    """`np.fft.irfft`: the real signal (length n, default 2 (m - 1)) of `rfft` output."""
    return _transform(a, "irfft", *_one(n, axis), norm)


_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _swapped(norm):
    return _SWAP[_norm(norm)]


def hfft(a, n=None, axis: int = -1, norm=None):
    """`np.fft.hfft`: the real transform of a Hermitian-symmetric signal's half."""
    out = irfft(tnp.conj(_operand(a, "fft")), n, axis, _swapped(norm))
    in_dtype = tnp.asarray(a).dtype
    return tnp.astype(out, in_dtype) if dtypes.is_low_precision(in_dtype) else out


def ihfft(a, n=None, axis: int = -1, norm=None):
    """`np.fft.ihfft`: the inverse of `hfft`."""
    return tnp.conj(rfft(a, n, axis, _swapped(norm)))


def fftn(a, s=None, axes=None, norm=None):
    """`np.fft.fftn`: the transform over `axes` (default: all, or the last len(s))."""
    return _transform(a, "fft", s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """`np.fft.ifftn`: the inverse of `fftn`."""
    return _transform(a, "ifft", s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """`np.fft.rfftn`: the n-D transform of a real signal, halved along the last axis."""
    return _transform(a, "rfft", s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """`np.fft.irfftn`: the inverse of `rfftn`."""
    return _transform(a, "irfft", s, axes, norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """`np.fft.fft2`: `fftn` over the last two axes."""
    return fftn(a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """`np.fft.ifft2`: `ifftn` over the last two axes."""
    return ifftn(a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """`np.fft.rfft2`: `rfftn` over the last two axes."""
    return rfftn(a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """`np.fft.irfft2`: `irfftn` over the last two axes."""
    return irfftn(a, s, axes, norm)


TRANSFORMS = (fft, ifft, rfft, irfft, hfft, ihfft, fftn, ifftn, rfftn, irfftn, fft2, ifft2,
              rfft2, irfft2)  # fmt: skip

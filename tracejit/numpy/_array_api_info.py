"""What the Array API standard (2024.12) asks a namespace to say about itself:
`tnp.__array_api_version__`, `tnp.__array_namespace_info__()` and the device check that
`tnp.asarray(device=)` and a traced value's `.to_device` share.

Library-agnostic code (array-api-compat, SciPy, scikit-learn) reads these instead of
assuming NumPy's answers. tracejit's arrays are NumPy arrays on the host when eager and
tracers inside `jit`: they have one place, "cpu". "cuda" is where a jitted function runs
when given `device="cuda"` (the whole function is placed there, not single values), so it
is listed among the devices but no array of `tnp` can be moved to it alone.

>>> import tracejit.numpy as tnp
>>> info = tnp.__array_namespace_info__()
>>> tnp.__array_api_version__, info.default_device(), info.default_dtypes()["integral"]
('2024.12', 'cpu', dtype('int64'))
>>> sorted(info.dtypes(kind="real floating"))
['float32', 'float64']
"""

from __future__ import annotations

import numpy as np

from tracejit.config import DEVICES
from tracejit.errors import DeviceError, TracejitTypeError, TracejitValueError
from tracejit.ir import dtypes as _dt

API_VERSION = "2024.12"
# Earlier revisions are subsets of 2024.12 for what tracejit offers (NumPy accepts them too).
SUPPORTED_API_VERSIONS = ("2021.12", "2022.12", "2023.12", API_VERSION)

# The device of every array tnp makes and of every traced value. A trace is shared by the
# devices a jitted function is called for (its cache key has no device), so a traced value
# cannot tell which one runs it; it reports the host, where eager tnp and constants live.
ARRAY_DEVICE = "cpu"

# NumPy 2's NPY_MAXDIMS: eager arrays are NumPy's, and a traced shape comes from one.
MAX_DIMENSIONS = 64

# The standard's dtypes by kind (bfloat16 and float16 are tracejit's extras, not the
# standard's: NumPy's own namespace info leaves float16 out too).
_SIGNED = ("int8", "int16", "int32", "int64")
_UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
_REAL = ("float32", "float64")
_COMPLEX = ("complex64", "complex128")
_KINDS = {
    "bool": ("bool",),
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _SIGNED + _UNSIGNED,
    "real floating": _REAL,
    "complex floating": _COMPLEX,
    "numeric": _SIGNED + _UNSIGNED + _REAL + _COMPLEX,
}
_ALL = ("bool",) + _KINDS["numeric"]


def check_api_version(api_version) -> None:
    """ValueError unless `api_version` is None or a revision of the standard tnp follows."""
    if api_version is not None and api_version not in SUPPORTED_API_VERSIONS:
        raise TracejitValueError(
            f"Array API version {api_version!r} is not supported by tracejit.numpy; use None "
            f"or one of {SUPPORTED_API_VERSIONS} (a string)"
        )


def check_array_device(device, op: str) -> None:
    """DeviceError unless `device` is None or the device tnp's arrays live on (`op` names the
    call); an unknown name and a known one that cannot hold a lone array say different
    things."""
    if device is None or device == ARRAY_DEVICE:
        return
    if device not in DEVICES:
        raise DeviceError(f"{op}: unknown device {device!r}; use one of {DEVICES}")
    raise DeviceError(
        f"{op}: tracejit.numpy arrays and traced values live on {ARRAY_DEVICE!r}, not "
        f"{device!r}: a jitted function runs whole on one device. Write "
        f"tj.jit(f, device={device!r}) to run it there, or tj.device_put(x, {device!r}) "
        "for an argument of such a function"
    )


def _check_info_device(device, op: str) -> None:
    if device is None or device == ARRAY_DEVICE:  # without asking CuPy
        return
    if device not in ArrayNamespaceInfo().devices():
        raise TracejitValueError(
            f"{op}: device {device!r} is not available; use None or one of "
            f"{ArrayNamespaceInfo().devices()}"
        )


def _kind_names(kind) -> tuple[str, ...]:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names: list[str] = []
    for k in kinds:
        if not isinstance(k, str):
            raise TracejitTypeError(f"dtypes: a kind is a string or a tuple of them, got {k!r}")
        if k not in _KINDS:
            raise TracejitValueError(f"dtypes: unknown kind {k!r}; use one of {tuple(_KINDS)}")
        names += [n for n in _KINDS[k] if n not in names]
    return tuple(n for n in _ALL if n in names)  # in the standard's order


class ArrayNamespaceInfo:
    """The object `tnp.__array_namespace_info__()` returns: the standard's inspection API."""

    __module__ = "tracejit.numpy"

    def capabilities(self) -> dict:
        """What tnp does not do under `jit`: shapes must be known while tracing, so neither
        boolean-mask indexing nor data-dependent output shapes (`nonzero`) are offered.

        >>> import tracejit.numpy as tnp
        >>> tnp.__array_namespace_info__().capabilities()["data-dependent shapes"]
        False
        """
        return {
            "boolean indexing": False,
            "data-dependent shapes": False,
            "max dimensions": MAX_DIMENSIONS,
        }

    def default_device(self) -> str:
        """The device tnp's arrays are made on: "cpu" (see the module docstring)."""
        return ARRAY_DEVICE

    def devices(self) -> list[str]:
        """The devices usable now: "cpu", and "cuda" where CuPy finds a GPU."""
        from tracejit.devices import cuda_available

        return [ARRAY_DEVICE] + (["cuda"] if cuda_available() else [])

    def default_dtypes(self, device=None) -> dict[str, np.dtype]:
        """The dtypes tnp gives Python floats, complex numbers and ints (NumPy 2's), and
        indices (`argmax`, `nonzero`: int64).

        >>> import tracejit.numpy as tnp
        >>> tnp.__array_namespace_info__().default_dtypes()["real floating"]
        dtype('float64')
        """
        _check_info_device(device, "default_dtypes")
        integral = _dt.python_scalar_dtype(0)
        return {
            "real floating": _dt.python_scalar_dtype(0.0),
            "complex floating": _dt.python_scalar_dtype(0j),
            "integral": integral,
            "indexing": integral,
        }

    def dtypes(self, device=None, kind=None) -> dict[str, np.dtype]:
        """The standard's dtypes tnp supports, by name, of `kind` (a kind name or a tuple of
        them, as `isdtype` takes); None: all of them.

        >>> import tracejit.numpy as tnp
        >>> list(tnp.__array_namespace_info__().dtypes(kind=("bool", "complex floating")))
        ['bool', 'complex64', 'complex128']
        """
        _check_info_device(device, "dtypes")
        names = _ALL if kind is None else _kind_names(kind)
        return {n: _dt.canonical(n) for n in names}


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The standard's namespace inspection object (devices, dtypes, capabilities).

    >>> import tracejit.numpy as tnp
    >>> tnp.__array_namespace_info__().capabilities()["boolean indexing"]
    False
    """
    return ArrayNamespaceInfo()

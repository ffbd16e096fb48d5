"""What a `jit` call can carry besides arrays: `ShapeDtypeStruct` stand-ins, `disable_jit`,
and the bookkeeping of `donate_argnums` (a donated array must not be passed again).
"""

from __future__ import annotations

import contextvars
import weakref
from dataclasses import dataclass

import numpy as np

from tracejit.errors import DonatedArgumentError


@dataclass(frozen=True)
class ShapeDtypeStruct:
    """A shape and dtype standing for an array: what `tj.eval_shape` takes and returns.

    >>> ShapeDtypeStruct((2, 3), np.dtype("float32"))
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """

    shape: tuple[int, ...]
    dtype: np.dtype

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype})"


# ---------------------------------------------------------------- disable_jit and donation

_jit_disabled: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "tj_disable_jit", default=False
)


def jit_disabled() -> bool:
    return _jit_disabled.get()


class disable_jit:
    """Within `with tj.disable_jit():`, jitted functions run their Python body op by op.

    Values are concrete NumPy arrays, so `print` and a debugger see them.

    >>> import numpy as np, tracejit as tj
    >>> f = tj.jit(lambda x: x * 2.0)
    >>> with tj.disable_jit():
    ...     type(f(np.ones(2))).__name__
    'ndarray'
    """

    def __enter__(self):
        self._token = _jit_disabled.set(True)
        return self

    def __exit__(self, *exc):
        _jit_disabled.reset(self._token)
        return False


# id(array) -> weak reference of the donated array (a dead reference means the id was reused)
_donated: dict[int, weakref.ref] = {}


def mark_donated(leaf) -> None:
    key = id(leaf)

    def forget(ref):
        if _donated.get(key) is ref:
            del _donated[key]

    try:
        _donated[key] = weakref.ref(leaf, forget)
    except TypeError:  # Python scalars: nothing to donate
        return


def check_not_donated(leaves, names) -> None:
    for i, x in enumerate(leaves):
        ref = _donated.get(id(x))
        if ref is not None and ref() is x:
            name = names[i] if i < len(names) else f"argument leaf {i}"
            raise DonatedArgumentError(
                f"argument {name!r} was donated to an earlier call (donate_argnums) and may "
                "back that call's outputs: it must not be used again. Pass the output you got "
                "back instead, or drop the argument from donate_argnums."
            )


def check_donate(donate: tuple, static: set[int]) -> tuple[int, ...]:
    for i in donate:
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise ValueError(f"donate_argnums must be non-negative ints, got {donate!r}")
        if i in static:
            raise ValueError(f"argument {i} is static: it cannot also be in donate_argnums")
    return tuple(sorted(set(donate)))


__all__ = [
    "ShapeDtypeStruct",
    "check_donate",
    "check_not_donated",
    "disable_jit",
    "jit_disabled",
    "mark_donated",
]

"""What a donated host array becomes: using it afterwards raises, where NumPy lets us see it.

`jit(f, donate_argnums=...)` takes the donated arrays from the caller: an output may be
written into a donated array's memory (ir/donation.py), as JAX deletes donated buffers. A
plain `np.ndarray` cannot be deleted or re-typed, so after the call:

* a `ConstArray` (what `jit` and `tnp` return, so every array of a training loop after the
  first step) becomes a `DonatedArray`: arithmetic, NumPy functions, indexing, `float()`,
  `.copy()`, `.tolist()`, pickling and passing it to tracejit raise `DonatedArgumentError`;
  its shape, dtype and flags still read, and its repr says it was donated;
* a plain `np.ndarray` (one the caller made) is made read-only, so NumPy refuses writes
  (`ValueError: assignment destination is read-only`), and tracejit refuses it as an
  argument; NumPy reads still work and see the output's values where the output took its
  memory (its old values otherwise).

Reads below the Python level are not seen: `np.asarray(x)`, `memoryview(x)` or C code given
the buffer read whatever the memory holds. Donated CuPy arrays are refused by tracejit; CuPy
itself reads them as usual (the output's values where the output took their memory).

>>> import numpy as np, tracejit as tj
>>> step = tj.jit(lambda p: p * 0.5, donate_argnums=0)
>>> p = step(np.ones(2))  # a ConstArray
>>> p2 = step(p)
>>> p + 1.0
Traceback (most recent call last):
...
tracejit.errors.DonatedArgumentError: np.add on an array donated to a jitted call (donate_argnums): ...
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import DonatedArgumentError


def _refuse(what: str):
    raise DonatedArgumentError(
        f"{what} on an array donated to a jitted call (donate_argnums): its memory may hold "
        "that call's output now. Use the output the call returned, or drop the argument from "
        "donate_argnums (or pass a copy) to keep using it."
    )


class DonatedArray(np.ndarray):
    """A `ConstArray` given up through `donate_argnums`: every use of its values raises."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _refuse(f"np.{ufunc.__name__}")

    def __array_function__(self, func, types, args, kwargs):
        _refuse(f"np.{func.__name__}")

    def __getitem__(self, index):
        _refuse("indexing")

    def __setitem__(self, index, value):
        _refuse("assignment")

    def __iter__(self):
        _refuse("iteration")

    def __reduce__(self):
        _refuse("pickling")

    def __repr__(self) -> str:
        return f"<donated array: {self.dtype}{list(self.shape)}, given up to a jitted call>"

    __str__ = __repr__

    def _tracejit_refuse(self, name: str) -> None:
        """Called by tracejit's argument checks (tracer/checks.py)."""
        _refuse(f"passing it as {name}")


def _method_refusing(name: str):
    def method(self, *args, **kwargs):
        _refuse(f".{name}()" if not name.startswith("__") else name.strip("_") + "()")

    method.__name__ = name
    return method


for _name in ("__float__", "__int__", "__complex__", "__index__", "__bool__", "item", "tolist",
              "tobytes", "copy", "astype", "fill", "__copy__", "__deepcopy__"):  # fmt: skip
    setattr(DonatedArray, _name, _method_refusing(_name))


def give_up(leaf) -> None:
    """After a call that took `leaf` as a donated argument: a ConstArray (the class jit
    returns) becomes a `DonatedArray` and a plain NumPy array read-only (module doc);
    anything else (a CuPy array, a scalar) is left as it is."""
    from tracejit.const_array import ConstArray

    if type(leaf) is ConstArray:
        leaf.setflags(write=False)
        leaf.__class__ = DonatedArray
    elif type(leaf) is np.ndarray:
        leaf.setflags(write=False)


__all__ = ["DonatedArray", "give_up"]

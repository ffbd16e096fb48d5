"""What a `jit` call can carry besides arrays: `ShapeDtypeStruct` stand-ins, `disable_jit`,
and `donate_argnums`: outputs written into donated buffers, and a donated array must not be
passed again.
"""

from __future__ import annotations

import contextvars
import weakref
from dataclasses import dataclass

import numpy as np

from tracejit.donated_array import give_up
from tracejit.errors import DonatedArgumentError, TracejitValueError
from tracejit.pytree import tree_flatten


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
    """After the call: `leaf` must not be used again (tracejit refuses it; donated_array.py
    says what NumPy does with it)."""
    give_up(leaf)
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


def donated_leaves(args: tuple, static: set[int], donate: tuple[int, ...]) -> tuple[int, ...]:
    """Indices, among a call's traced leaves, of the leaves of the donated arguments."""
    out, start = [], 0
    for i, a in enumerate(args):
        if i in static:
            continue
        n = len(tree_flatten(a)[0])
        if i in donate:
            out += range(start, start + n)
        start += n
    return tuple(out)


# executable -> {donated leaves: {output index: input index}} (ir/donation.py's plans)
_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def run_donating(executable, arrays: list, leaves: list, donated: tuple[int, ...]) -> list:
    """Run `executable`, each output that can be written into a donated argument's buffer.

    A donated NumPy array whose buffer an output took is made read-only (it now holds the
    output; it is also marked donated, so passing it to tracejit again is refused)."""
    schedule = getattr(executable, "schedule", None)
    if schedule is None:  # the NumPy reference device: nothing to reuse
        return executable(arrays)
    per_exe = _plans.setdefault(executable, {})
    if donated not in per_exe:
        from tracejit.ir.donation import alias_plan  # ir is below the tracer; loaded on use

        per_exe[donated] = alias_plan(schedule, donated)
    outs: list = [None] * len(schedule.outputs)
    on_gpu = hasattr(executable, "cupy")  # the CUDA executable takes only CuPy outputs
    for k, i in per_exe[donated].items():
        x = arrays[i]
        if on_gpu != hasattr(x, "__cuda_array_interface__"):
            continue  # a host array given to a CUDA function is copied in: nothing to reuse
        if _whole_buffer(x) and not _passed_twice(arrays, i):
            outs[k] = arrays[i]
    if all(o is None for o in outs):
        return executable(arrays)
    results = list(executable(arrays, outs))
    for k, i in per_exe[donated].items():
        if outs[k] is not None:  # a new object (the donated one is marked), made writable
            results[k] = _new_owner(results[k])  # before the freeze below
            if isinstance(leaves[i], np.ndarray):
                leaves[i].setflags(write=False)
    return results


def _new_owner(x):
    """A new array object over the memory of `x`, an output written into a donated buffer.

    NumPy: a view (NumPy's owner test follows `base`). The CUDA executable already returns
    a new CuPy array made on the donated memory, with `base` None (backend_cuda/launcher.py;
    a view, as `x.reshape(x.shape)` is in CuPy, would not be donated again)."""
    return x.reshape(x.shape) if isinstance(x, np.ndarray) else x


def _passed_twice(arrays: list, i: int) -> bool:
    """Whether another argument may share memory with argument `i` (then it is not reused:
    that argument may still be read after the output is written)."""
    x = arrays[i]
    if isinstance(x, np.ndarray):
        others = (a for j, a in enumerate(arrays) if j != i and isinstance(a, np.ndarray))
        return any(np.may_share_memory(x, a) for a in others)
    ptr = x.__cuda_array_interface__["data"][0]
    return any(
        j != i
        and hasattr(a, "__cuda_array_interface__")
        and (a.__cuda_array_interface__["data"][0] == ptr or getattr(a, "base", None) is x)
        for j, a in enumerate(arrays)
    )


def _whole_buffer(x) -> bool:
    """Whether `x` is the whole, writable, contiguous memory of the array owning it."""
    if isinstance(x, np.ndarray):
        owner = x
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        return (
            owner.flags.owndata
            and x.flags.c_contiguous
            and x.flags.writeable
            and x.nbytes == owner.nbytes
            and x.__array_interface__["data"][0] == owner.__array_interface__["data"][0]
        )
    if hasattr(x, "__cuda_array_interface__"):  # a CuPy array at the start of its allocation
        mem = getattr(getattr(x, "data", None), "mem", None)
        return (
            bool(x.flags.c_contiguous)
            and getattr(x, "base", None) is None
            and mem is not None
            and x.data.ptr == mem.ptr
        )
    return False


def check_donate(donate: tuple, static: set[int]) -> tuple[int, ...]:
    for i in donate:
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise TracejitValueError(f"donate_argnums must be non-negative ints, got {donate!r}")
        if i in static:
            raise TracejitValueError(f"argument {i} is static: it cannot also be in donate_argnums")
    return tuple(sorted(set(donate)))


__all__ = [
    "ShapeDtypeStruct",
    "check_donate",
    "check_not_donated",
    "disable_jit",
    "donated_leaves",
    "jit_disabled",
    "mark_donated",
    "run_donating",
]

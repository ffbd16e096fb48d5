"""`vectorize` and `apply_along_axis` through `tj.vmap`: one batched program, not a loop.

Loop dimensions are broadcast, flattened into one batch axis and mapped with `vmap`; core
dimensions (a gufunc `signature` such as "(n),(n)->()") stay with the function.
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np

from tracejit.errors import TracejitTypeError
from tracejit.numpy._core import asarray, normalize_axis, shape_of
from tracejit.numpy._shape import broadcast_to, moveaxis, reshape

_DIMS = re.compile(r"\(([^()]*)\)")


def _parse_signature(signature: str):
    ins, _, outs = signature.replace(" ", "").partition("->")
    core_in = [tuple(d for d in g.split(",") if d) for g in _DIMS.findall(ins)]
    core_out = [tuple(d for d in g.split(",") if d) for g in _DIMS.findall(outs)]
    return core_in, core_out


def _vmapped(fn, n_args: int):
    from tracejit.batching.api import vmap

    return vmap(fn, in_axes=(0,) * n_args)


class vectorize:
    """`np.vectorize` (and `jnp.vectorize`): `pyfunc` applied over the broadcast loop
    dimensions of its arguments, through `vmap`. `signature` names core dimensions;
    `excluded` lists positional arguments passed through unmapped.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> dot = tnp.vectorize(lambda a, b: tnp.sum(a * b), signature="(n),(n)->()")
    >>> dot(np.ones((2, 3)), np.arange(3.0))
    array([3., 3.])
    """

    def __init__(self, pyfunc, otypes=None, doc=None, excluded=None, cache=False,
                 signature=None):  # fmt: skip
        self.pyfunc = pyfunc
        self.excluded = set(excluded or ())
        self.signature = signature
        functools.update_wrapper(self, pyfunc)

    def __call__(self, *args):
        mapped = [i for i in range(len(args)) if i not in self.excluded]
        xs = [asarray(args[i]) for i in mapped]
        core_in = _parse_signature(self.signature)[0] if self.signature else [()] * len(xs)
        if len(core_in) != len(xs):
            raise TracejitTypeError(f"vectorize: signature {self.signature!r} names {len(core_in)} "
                            f"inputs, got {len(xs)}")  # fmt: skip
        loops = [tuple(shape_of(x))[: len(shape_of(x)) - len(c)] for x, c in zip(xs, core_in)]
        loop = tuple(np.broadcast_shapes(*loops)) if loops else ()
        n = math.prod(loop)
        flat = []
        for x, c in zip(xs, core_in):
            core = tuple(shape_of(x))[len(shape_of(x)) - len(c) :]
            flat.append(reshape(broadcast_to(x, loop + core), (n, *core)))

        def call(*mapped_args):
            full = list(args)
            for i, a in zip(mapped, mapped_args):
                full[i] = a
            return self.pyfunc(*full)

        out = _vmapped(call, len(flat))(*flat)
        if isinstance(out, tuple):
            return tuple(reshape(o, loop + tuple(shape_of(o))[1:]) for o in out)
        return reshape(out, loop + tuple(shape_of(out))[1:])


def apply_along_axis(func1d, axis: int, arr, *args, **kwargs):
    """`np.apply_along_axis`: `func1d` on every 1-D slice along `axis` (one `vmap`); the
    function's output dimensions take the place of `axis`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.apply_along_axis(lambda v: v[::-1] * 2, 1, np.arange(6.0).reshape(2, 3))
    array([[ 4.,  2.,  0.],
           [10.,  8.,  6.]])
    """
    x = asarray(arr)
    nd = len(shape_of(x))
    axis = normalize_axis(axis, nd, "apply_along_axis")
    moved = moveaxis(x, axis, -1)
    rest = tuple(shape_of(moved))[:-1]
    flat = reshape(moved, (math.prod(rest), shape_of(moved)[-1]))
    out = _vmapped(lambda v: asarray(func1d(v, *args, **kwargs)), 1)(flat)
    core = tuple(shape_of(out))[1:]
    out = reshape(out, rest + core)
    return moveaxis(out, tuple(range(len(rest) - (nd - 1 - axis), len(rest))),
                    tuple(range(len(rest) - (nd - 1 - axis) + len(core), len(rest) + len(core))))  # fmt: skip


__all__ = ["apply_along_axis", "vectorize"]

"""Collectives over a named axis of processes, with the names and conventions of `jax.lax`.

Inside `tj.distributed.spmd(f, axis_name="i")`: `psum`, `pmean`, `pmax`, `pmin`,
`all_gather`, `psum_scatter`, `ppermute` and `axis_index`. Each is a primitive (traced,
printed in the IR with its `axis_name`, run by the interpreter through
`tracejit.distributed`'s communicator and by the compiled CPU program as MPI calls from C++,
backend_cpu/collectives.py); `pmean` is `psum` divided by the count.
Pytrees are reduced in one bucket per dtype: leaves are flattened and concatenated, reduced
by one collective, and split again (one all-reduce for a whole gradient, not one per leaf).

Differentiation follows `jax.pmap`'s convention: each process's output has its own
cotangent, and the VJP of `psum` is `psum` of the cotangents (so `grad` of a `pmean`-ed loss
is each process's local gradient: average gradients explicitly with `pmean`, as in JAX's
data-parallel examples). `all_gather` and `psum_scatter` are each other's VJP, `ppermute`'s
is `ppermute` with the pairs reversed, `pmax`/`pmin` send the summed cotangent to the
processes holding the extreme value (shared equally on ties).

>>> import numpy as np, tracejit as tj
>>> f = tj.distributed.spmd(lambda x: tj.lax.psum(x, "i"), axis_name="i")
>>> tj.jit(f)(np.arange(3.0))  # one process here: the sum over one process
array([0., 1., 2.])
"""

from __future__ import annotations

import os

import numpy as np

from tracejit import distributed
from tracejit import numpy as tnp
from tracejit.errors import DistributedError, UnsupportedError
from tracejit.ir.autodiff import VJP_RULES, defvjp
from tracejit.ir.primitives import OPAQUE, get, register
from tracejit.pytree import tree_flatten, tree_map, tree_unflatten
from tracejit.tracer.core import Tracer, bind

# ---------------------------------------------------------------- primitives


def _numeric(name: str, aval) -> None:
    if np.dtype(aval[1]).kind not in "fiu":
        raise UnsupportedError(f"{name} needs float or integer operands, got {aval[1]}")


def _same_rule(name: str):
    def rule(avals, *, axis_name, count, **_):
        _numeric(name, avals[0])
        return avals[0]

    return rule


def _run(name: str, x: np.ndarray, size: int, op):
    comm = distributed.comm()
    if comm.size != size:
        raise DistributedError(
            f"{name}: traced for {size} processes, running on {comm.size}; trace it again"
        )
    if distributed.checks_enabled():
        comm.agree(name, (name, x.shape, x.dtype.str))
    return op(comm, x)


def _collective(name: str, rule, op) -> None:
    """Register the collective `name`: `op(comm, x, **other attrs)` runs it."""

    def impl(x, *, axis_name, count, **attrs):
        return _run(name, x, count, lambda c, a: op(c, a, **attrs))

    register(name, OPAQUE, rule, impl, effectful=True)


for _name, _op in (("psum", "sum"), ("pmax", "max"), ("pmin", "min")):
    _collective(_name, _same_rule(_name), lambda c, a, op=_op: c.allreduce(a, op))


def _gather_rule(avals, *, axis_name, count):
    shape, dtype, weak = avals[0]
    return ((count, *shape), dtype, weak)


def _scatter_rule(avals, *, axis_name, count):
    shape, dtype, weak = avals[0]
    _numeric("psum_scatter", avals[0])
    if not shape or shape[0] != count:
        raise DistributedError(
            f"psum_scatter: the leading axis must have one entry per process ({count}), "
            f"got shape {tuple(shape)}"
        )
    return (tuple(shape[1:]), dtype, weak)


def _ppermute_rule(avals, *, axis_name, count, perm):
    return avals[0]


_collective("all_gather", _gather_rule, lambda c, a: c.allgather(a))
_collective("psum_scatter", _scatter_rule, lambda c, a: c.reduce_scatter(a))
_collective("ppermute", _ppermute_rule, lambda c, a, perm: c.ppermute(a, perm))
register(
    "axis_index",
    OPAQUE,
    lambda avals, *, axis_name, count: ((), np.dtype(np.int32), False),
    lambda *, axis_name, count: np.int32(distributed.process_index()),
)

# ---------------------------------------------------------------- user functions


def _size(axis_name: str) -> int:
    if axis_name not in distributed.bound_axes():
        raise DistributedError(
            f"unbound axis name {axis_name!r}: call collectives inside "
            f"tj.distributed.spmd(f, axis_name={axis_name!r})"
        )
    return distributed.process_count()


# Gradients are reduced in buckets filled in the order the leaves were computed: the last
# layer's gradients (computed first by the backward pass) form the first bucket, whose
# all-reduce the compiled program starts while the backward pass goes on
# (tracejit/distributed/overlap.py orders the kernels for it). PyTorch DDP's sizes: a small
# first bucket (TRACEJIT_FIRST_BUCKET_BYTES, 1 MiB) that starts early, then buckets of up to
# 25 MiB (TRACEJIT_BUCKET_BYTES): every bucket is a point where all processes meet, which
# costs a scheduling delay on a loaded machine, so fewer, larger buckets (1 MiB buckets made
# the 784-512-512-10 step 1.7x slower on 2 processes: benchmarks/RESULTS.md).
FIRST_BUCKET_BYTES = int(os.environ.get("TRACEJIT_FIRST_BUCKET_BYTES", str(1 << 20)))
BUCKET_BYTES = int(os.environ.get("TRACEJIT_BUCKET_BYTES", str(25 << 20)))


def _production_order(leaves: list) -> list[int]:
    """Leaf indices in the order their values were computed in the trace (leaf order for
    concrete values or leaves of different traces)."""
    traces = {x._trace for x in leaves if isinstance(x, Tracer)}
    if len(traces) != 1 or not all(isinstance(x, Tracer) for x in leaves):
        return list(range(len(leaves)))
    (trace,) = traces
    position = {v: i for i, n in enumerate(trace.graph.nodes) for v in n.outputs}
    return sorted(range(len(leaves)), key=lambda i: position.get(leaves[i]._value, -1))


def _buckets(picked: list[int], leaves: list) -> list[list[int]]:
    """`picked` split into runs of at most FIRST_BUCKET_BYTES, then BUCKET_BYTES (or one
    leaf)."""
    out: list[list[int]] = [[]]
    size = 0
    for i in picked:
        limit = FIRST_BUCKET_BYTES if len(out) == 1 else BUCKET_BYTES
        if out[-1] and size + leaves[i].nbytes > limit:
            out.append([])
            size = 0
        out[-1].append(i)
        size += leaves[i].nbytes
    return out


def _bucketed(name: str, tree, axis_name: str):
    """`name` applied to every leaf of `tree`: one collective per bucket of leaves of one
    dtype (`_buckets`), not one per leaf."""
    size = _size(axis_name)
    leaves, treedef = tree_flatten(tree)
    leaves = [x if isinstance(x, Tracer) else tnp.asarray(x) for x in leaves]
    out = list(leaves)
    order = _production_order(leaves)
    for dtype in dict.fromkeys(leaves[i].dtype for i in order):
        picked = [i for i in order if leaves[i].dtype == dtype]
        for bucket in _buckets(picked, leaves):
            reduced = _reduce_bucket(name, [leaves[i] for i in bucket], axis_name, size)
            for i, r in zip(bucket, reduced):
                out[i] = r
    return tree_unflatten(treedef, out)


def _reduce_bucket(name: str, leaves: list, axis_name: str, size: int) -> list:
    """`name` of each of `leaves` (one dtype) by one collective on their concatenation."""
    if len(leaves) == 1:
        return [bind(name, leaves[0], axis_name=axis_name, count=size)]
    flat = tnp.concatenate([tnp.ravel(x) for x in leaves])
    reduced = bind(name, flat, axis_name=axis_name, count=size)
    out, start = [], 0
    for x in leaves:
        out.append(tnp.reshape(reduced[start : start + x.size], x.shape))
        start += x.size
    return out


def psum(x, axis_name: str):
    """The sum of `x` (an array or pytree) over the processes of `axis_name`."""
    return _bucketed("psum", x, axis_name)


def pmax(x, axis_name: str):
    return _bucketed("pmax", x, axis_name)


def pmin(x, axis_name: str):
    return _bucketed("pmin", x, axis_name)


def pmean(x, axis_name: str):
    """The mean of `x` over the processes: `psum(x) / count` (one bucket per dtype)."""
    count = _size(axis_name)
    return tree_map(lambda s: s / count, psum(x, axis_name))


def all_gather(x, axis_name: str, *, axis: int = 0, tiled: bool = False):
    """Every process's `x`, stacked along a new `axis` (or concatenated when `tiled`)."""
    x = tnp.asarray(x)
    out = bind("all_gather", x, axis_name=axis_name, count=_size(axis_name))
    if axis < 0:
        axis += x.ndim + 1
    if not 0 <= axis <= x.ndim:
        raise DistributedError(f"all_gather: axis {axis} is out of range for {x.ndim}-d x")
    if tiled:
        out = tnp.concatenate([out[i] for i in range(out.shape[0])], axis=axis)
        return out
    return tnp.moveaxis(out, 0, axis) if axis else out


def psum_scatter(x, axis_name: str):
    """Sum `x` over the processes and keep this process's row: `x` has one row per process."""
    return bind("psum_scatter", tnp.asarray(x), axis_name=axis_name, count=_size(axis_name))


def ppermute(x, axis_name: str, perm):
    """Send `x` from process `src` to `dst` for each `(src, dst)` in `perm`; zeros elsewhere."""
    size = _size(axis_name)
    perm = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    bad = [p for p in srcs + dsts if not 0 <= p < size]
    if bad or len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise DistributedError(f"ppermute: perm {perm} is not a partial permutation of {size}")
    return bind("ppermute", tnp.asarray(x), axis_name=axis_name, count=size, perm=perm)


def axis_index(axis_name: str):
    """This process's index along `axis_name` (an int32 scalar).

    Under `jit(spmd(f))` it is a node of the traced program (one program for every
    process); called where `spmd` received concrete arrays, it is the concrete index."""
    size = _size(axis_name)
    trace = distributed.axis_trace(axis_name)
    if trace is None:
        return bind("axis_index", axis_name=axis_name, count=size)
    (out,) = trace.record(get("axis_index"), [], {"axis_name": axis_name, "count": size}, None)
    return Tracer(trace, out, None)


# ---------------------------------------------------------------- VJP rules


@defvjp("psum")
def _psum_vjp(e, ct, x, *, out, axis_name, count):
    return [e.psum(ct, axis_name=axis_name, count=count)]


@defvjp("pmax", "pmin")
def _extreme_vjp(e, ct, x, *, out, axis_name, count):
    hit = e.convert(e.eq(x, out), dtype=ct.dtype)
    share = e.div(hit, e.psum(hit, axis_name=axis_name, count=count))
    return [e.mul(e.psum(ct, axis_name=axis_name, count=count), share)]


@defvjp("all_gather")
def _all_gather_vjp(e, ct, x, *, out, axis_name, count):
    return [e.psum_scatter(ct, axis_name=axis_name, count=count)]


@defvjp("psum_scatter")
def _psum_scatter_vjp(e, ct, x, *, out, axis_name, count):
    return [e.all_gather(ct, axis_name=axis_name, count=count)]


@defvjp("ppermute")
def _ppermute_vjp(e, ct, x, *, out, axis_name, count, perm):
    back = tuple((d, s) for s, d in perm)
    return [e.ppermute(ct, axis_name=axis_name, count=count, perm=back)]


defvjp("axis_index")(VJP_RULES["iota"])  # no inputs: nothing to differentiate

from tracejit.batching import parallel as _batching  # noqa: F401  (their vmap rules)

__all__ = [
    "all_gather",
    "axis_index",
    "pmax",
    "pmean",
    "pmin",
    "ppermute",
    "psum",
    "psum_scatter",
]

"""`tj.grad`, `tj.value_and_grad`, `tj.vjp` (forward mode and Jacobians: `jacobians.py`).

Each transformation traces the function into a `Graph` (per argument signature, cached like
`jit`), builds the joint forward/backward graph with `ir.autodiff`, and evaluates it by
re-binding every node: eagerly that runs NumPy, and inside an enclosing trace (`jit(grad(f))`,
`grad(grad(f))`) it records the joint graph into that trace, so transformations compose.
Tracers of an enclosing trace that the function closes over are lifted as captured inputs
and are constants for the inner transformation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from tracejit import debug, timing
from tracejit.cache import deferred
from tracejit.cache.joint import cached_joint
from tracejit.config import config
from tracejit.errors import TracejitTypeError, TracejitValueError
from tracejit.ir import dtypes
from tracejit.ir.autodiff import joint_graph
from tracejit.ir.graph import Graph, verify
from tracejit.ir.partition import partition
from tracejit.ir.passes import optimize
from tracejit.ir.rematerialize import rematerialize
from tracejit.pytree import PyTreeDef, is_pair, tree_flatten, tree_unflatten
from tracejit.tracer.arguments import ArgSpec
from tracejit.tracer.core import Tracer, bind
from tracejit.tracer.tracing import TraceCache, Traced, inline

# ---------------------------------------------------------------- tracing and checks


class _Traceable:
    """Traces `fun` per argument signature (`tracer.tracing.TraceCache`) and caches joint
    graphs."""

    def __init__(self, fun: Callable, what: str):
        if not callable(fun):
            raise TracejitTypeError(f"{what} expects a function, got {type(fun).__name__}")
        self.fun = fun
        self.what = what
        self._caches: dict[tuple[int, ...], TraceCache] = {}
        self._joints: dict[tuple, tuple[Traced, Graph]] = {}

    def trace(self, args, kwargs, argnums=()) -> tuple[Traced, list, list[str]]:
        """Trace `fun` on `args`; arguments outside `argnums` holding no array (Python
        numbers, strings, None, ...) stay concrete, as in JAX, so `range(n)` works on them.
        The leaves and names returned are those of the traced (non-static) arguments."""
        static = tuple(i for i, a in enumerate(args) if i not in argnums and _is_static(a))
        cache = self._caches.get(static)
        if cache is None:
            label = f"{self.what}({getattr(self.fun, '__name__', 'function')})"
            spec = ArgSpec(self.fun, static_argnums=static, label=label)
            cache = self._caches[static] = TraceCache(self.fun, spec, label)
        call = cache.spec.split(args, kwargs)
        traced, leaves = cache.trace_call(call)
        return traced, list(leaves), cache.spec.leaf_names(call)

    def joint(self, traced: Traced, wrt: tuple[int, ...], seeded: tuple[int, ...], remat=False):
        """The optimized joint graph; with `remat`, checkpointed regions are recomputed in
        its backward (for `grad`, whose joint graph runs, or compiles, as one program)."""
        key = (id(traced), wrt, seeded, remat)
        hit = self._joints.get(key)
        if hit is not None and hit[0] is traced:
            return hit[1]
        if traced.captured:  # its graph reads outer tracers: valid for this call only
            joint = _differentiate(traced.graph, wrt, seeded, remat)
        else:  # a fresh process with a warm cache loads it (tracejit.cache.joint)
            what = self.joint_what(wrt, seeded, remat)
            build = functools.partial(_differentiate, traced.graph, wrt, seeded, remat)
            joint = cached_joint(traced.graph, what, build)
        if not traced.captured:  # graphs reading outer tracers are valid for one call only
            self._joints[key] = (traced, joint)
        return joint

    @staticmethod
    def joint_what(wrt: tuple[int, ...], seeded: tuple[int, ...], remat: bool) -> dict:
        """What a joint graph's disk-cache key says is differentiated."""
        return {"wrt": list(wrt), "seeded": list(seeded), "remat": remat}


def _is_static(arg) -> bool:
    """Whether a non-differentiated argument can stay concrete: hashable and array-free."""
    leaves = tree_flatten(arg)[0]
    if any(isinstance(x, (np.ndarray, np.generic, Tracer)) or hasattr(x, "shape") for x in leaves):
        return False
    try:
        hash(arg)
    except TypeError:
        return False
    return True


def _differentiate(traced: Graph, wrt, seeded, remat: bool) -> Graph:
    """The optimized joint graph of `traced` (see `_Traceable.joint`)."""
    # The seeds' three stages: passes before differentiation, on the joint graph, and
    # (in `vjp`, and in `jit` for whatever inlines this) after the partition.
    dump = debug.current_dump()
    with timing.phase("autodiff"):
        graph = optimize(traced, config.verify_graphs, stage="pre_grad", dump=dump)
        joint = joint_graph(graph, wrt, seeded)
    if config.verify_graphs:
        verify(joint)
    dump.write("joint", joint)
    joint = optimize(joint, config.verify_graphs, stage="joint", dump=dump)
    if remat:
        joint = rematerialize(joint, len(graph.inputs), len(graph.outputs))
    return joint


def _normalize_argnums(argnums, n_args: int, what: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    out = []
    for a in nums:
        if not isinstance(a, int) or not -n_args <= a < n_args:
            raise TracejitValueError(
                f"{what}: argnums={argnums!r} does not fit a call with {n_args} positional "
                "argument(s); pass the differentiated arguments positionally"
            )
        out.append(a % n_args)
    return tuple(out)


def _leaf_ranges(args, argnums) -> tuple[list[list[int]], list[PyTreeDef]]:
    """The flat leaf indices and tree structure of each differentiated argument, among the
    leaves of the traced arguments (static ones, see `_Traceable.trace`, have none)."""
    starts, offset = [], 0
    for i, a in enumerate(args):
        starts.append(offset)
        if i in argnums or not _is_static(a):
            offset += len(tree_flatten(a)[0])
    ranges, trees = [], []
    for i in argnums:
        leaves, tree = tree_flatten(args[i])
        ranges.append(list(range(starts[i], starts[i] + len(leaves))))
        trees.append(tree)
    return ranges, trees


def _check_float_inputs(
    graph: Graph, wrt: Sequence[int], names: list[str], what: str, holomorphic: bool = False
):
    for i in wrt:
        v = graph.inputs[i]
        if holomorphic and not dtypes.is_complex(v.dtype):
            raise TracejitTypeError(
                f"{what}(holomorphic=True): {names[i]!r} is {v.dtype}; a holomorphic "
                "function's inputs are complex (cast it: x.astype(np.complex128))"
            )
        if not dtypes.is_inexact(v.dtype):
            raise TracejitTypeError(
                f"{what}: cannot differentiate with respect to {names[i]!r} of dtype {v.dtype}: "
                "gradients need float or complex inputs. Cast it (x.astype(np.float32)) or leave it out "
                "of argnums (close over it, or pass it as another argument)."
            )


def _scalar_output_index(
    traced: Traced, has_aux: bool, what: str, holomorphic: bool = False
) -> int:
    tree = traced.out_tree
    if has_aux:
        if not is_pair(tree):
            raise TracejitTypeError(
                f"{what}(has_aux=True) needs the function to return (value, aux)"
            )
        tree = tree.children()[0]
    if tree.node_data() is not None:
        raise TracejitTypeError(f"{what} needs the function to return one array, got a {tree!r}")
    out = traced.graph.outputs[0]
    if holomorphic:
        if out.shape != () or not dtypes.is_complex(out.dtype):
            raise TracejitTypeError(
                f"{what}(holomorphic=True) needs a scalar complex output, got {out.type_str}"
            )
        return 0
    if out.shape != () or not dtypes.is_float(out.dtype):
        hint = (
            " For a holomorphic function of complex inputs pass holomorphic=True (its "
            "gradient is df/dz)."
            if dtypes.is_complex(out.dtype) and out.shape == ()
            else ""
        )
        raise TracejitTypeError(
            f"{what} needs a scalar float output, got {out.type_str}. Reduce it first "
            "(e.g. tnp.sum), or use tj.vjp / tj.jacrev for non-scalar outputs." + hint
        )
    return 0


# ---------------------------------------------------------------- grad


def value_and_grad(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
):
    """A function returning `(fun(*args), gradient of fun w.r.t. args[argnums])`.

    `holomorphic=True`, as in JAX: `fun` maps complex inputs to a complex scalar and is
    holomorphic; the gradient is df/dz (the cotangent of a 1 + 0j seed, no conjugation).

    >>> import numpy as np, tracejit as tj
    >>> v, g = tj.value_and_grad(lambda x: (x * x).sum())(np.array([1.0, 2.0]))
    >>> float(v), g
    (5.0, array([2., 4.]))
    """
    what = "value_and_grad"
    traceable = _Traceable(fun, what)

    def value_and_grad_fn(*args, **kwargs):
        nums = _normalize_argnums(argnums, len(args), what)
        traced, leaves, names = traceable.trace(args, kwargs, nums)
        out_index = _scalar_output_index(traced, has_aux, what, holomorphic)
        ranges, trees = _leaf_ranges(args, nums)
        wrt = tuple(i for r in ranges for i in r)
        _check_float_inputs(traced.graph, wrt, names, what, holomorphic)
        seed = np.ones((), traced.graph.outputs[out_index].dtype)
        args = leaves + traced.captured + [seed]
        # in jit's first trace: one node standing for the joint graph (tracejit.cache.deferred)
        outs = deferred.record(traceable, traced, wrt, (out_index,), args)
        if outs is None:
            outs = inline(traceable.joint(traced, wrt, (out_index,), remat=True), args)
        n_out = len(traced.graph.outputs)
        value = tree_unflatten(traced.out_tree, outs[:n_out])
        grads, it = [], iter(outs[n_out:])
        for r, tree in zip(ranges, trees):
            grads.append(tree_unflatten(tree, [next(it) for _ in r]))
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        return value, g

    value_and_grad_fn.__name__ = f"value_and_grad({getattr(fun, '__name__', 'function')})"
    return value_and_grad_fn


def grad(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
):
    """The gradient of a scalar function w.r.t. `args[argnums]` (pytrees of float arrays).

    With `has_aux=True`, `fun` returns `(value, aux)` and the result is `(gradient, aux)`;
    `holomorphic=True`: complex inputs, a complex scalar output, the gradient df/dz (JAX's).

    >>> import numpy as np, tracejit as tj
    >>> tj.grad(lambda x: np.sin(x).sum())(np.zeros(2))
    array([1., 1.])
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic)

    def grad_fn(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    grad_fn.__name__ = f"grad({getattr(fun, '__name__', 'function')})"
    return grad_fn


# ---------------------------------------------------------------- vjp


class VJPFunction:
    """The pullback `vjp` returns: `vjp_fn(cotangent) -> tuple of input cotangents`.

    `saved_bytes`: bytes of the residuals kept between the forward and the backward.
    `save_all_bytes`: bytes the backward would keep if it saved every forward value it reads.
    `forward` / `backward`: the two graphs of the partition; `residual_values`: what is saved.
    """

    def __init__(self, part, residuals, traced: Traced, seeded, trees, out_tree):
        self.forward = part.forward
        self.backward = part.backward
        self.saved_bytes = part.saved_bytes
        self.save_all_bytes = part.save_all_bytes
        self.residual_values = part.residuals  # the saved forward Values, in forward order
        self._residuals = residuals
        self._traced = traced
        self._seeded = seeded
        self._trees = trees
        self._out_tree = out_tree

    @property
    def traced(self) -> Traced:
        """The function's trace: its graph reads the primal leaves, then `traced.captured`."""
        return self._traced

    def __call__(self, cotangent) -> tuple:
        leaves, tree = tree_flatten(cotangent)
        if tree != self._out_tree:
            raise TracejitTypeError(
                f"vjp_fn: the cotangent's structure {tree} differs from the output's "
                f"{self._out_tree}; pass one array per output leaf"
            )
        cts = []
        for i in self._seeded:
            out = self._traced.graph.outputs[i]
            ct = leaves[i]
            if _shape(ct) != out.shape:
                raise TracejitValueError(
                    f"vjp_fn: cotangent {i} has shape {_shape(ct)}, the output has {out.shape}"
                )
            if not isinstance(ct, Tracer):
                ct = np.asarray(ct, dtype=out.dtype)
            elif ct.dtype != out.dtype:
                ct = bind("convert", ct, dtype=out.dtype)
            cts.append(ct)
        grads = iter(inline(self.backward, list(self._residuals) + cts))
        return tuple(
            tree_unflatten(t, [next(grads) for _ in range(t.num_leaves)]) for t in self._trees
        )


def vjp(fun: Callable, *primals, has_aux: bool = False, memory_budget: float | None = None):
    """Run `fun(*primals)` now; return `(out, vjp_fn)` (and `aux` with `has_aux`).

    The joint graph is split by a min-cut (`ir.partition`): the forward runs now and keeps
    the residuals, `vjp_fn` runs the backward later. `memory_budget` (default
    `tj.config.memory_budget`) in [0, 1] trades memory for recomputation.

    >>> import numpy as np, tracejit as tj
    >>> out, f_vjp = tj.vjp(np.sin, np.zeros(2))
    >>> f_vjp(np.ones(2))
    (array([1., 1.]),)
    """
    budget = config.memory_budget if memory_budget is None else float(memory_budget)
    if not 0.0 <= budget <= 1.0:
        raise TracejitValueError(f"memory_budget must be in [0, 1], got {memory_budget!r}")
    traceable = _Traceable(fun, "vjp")
    traced, leaves, names = traceable.trace(primals, {}, range(len(primals)))
    graph = traced.graph
    out_tree = traced.out_tree
    n_main = len(graph.outputs)
    if has_aux:
        if not is_pair(out_tree):
            raise TracejitTypeError("vjp(has_aux=True) needs the function to return (out, aux)")
        out_tree = out_tree.children()[0]
        n_main = out_tree.num_leaves
    _, trees = _leaf_ranges(primals, range(len(primals)))
    wrt = tuple(range(len(leaves)))
    _check_float_inputs(graph, wrt, names, "vjp")
    seeded = tuple(i for i in range(n_main) if dtypes.is_inexact(graph.outputs[i].dtype))
    joint = traceable.joint(traced, wrt, seeded)
    with timing.phase("partition"):
        part = partition(joint, len(graph.inputs), len(graph.outputs), budget)
    if config.verify_graphs:
        verify(part.forward)
        verify(part.backward)
    dump = debug.current_dump()
    dump.write("partition_forward", part.forward)
    dump.write("partition_backward", part.backward)
    part.forward = optimize(part.forward, config.verify_graphs, dump=dump)
    part.backward = optimize(part.backward, config.verify_graphs, dump=dump)
    fwd = inline(part.forward, leaves + traced.captured)
    n_out = len(graph.outputs)
    all_out = tree_unflatten(traced.out_tree, fwd[:n_out])
    fn = VJPFunction(part, fwd[n_out:], traced, seeded, trees, out_tree)
    if has_aux:
        return all_out[0], fn, all_out[1]
    return all_out, fn


# ---------------------------------------------------------------- helpers


def _shape(x) -> tuple[int, ...]:
    return x.shape if isinstance(x, Tracer) else tuple(np.shape(x))


__all__ = ["VJPFunction", "grad", "value_and_grad", "vjp"]

"""`tj.eval_shape` (output shapes without compiling or running) and `tj.block_until_ready`."""

from __future__ import annotations

from collections.abc import Callable

from tracejit.pytree import tree_flatten, tree_unflatten
from tracejit.tracer.jit_options import ShapeDtypeStruct
from tracejit.tracer.tracing import trace


def eval_shape(fun: Callable, *args, **kwargs):
    """The shapes and dtypes `fun(*args, **kwargs)` would return, as `ShapeDtypeStruct`s.

    Arguments may be arrays or `ShapeDtypeStruct`s; `fun` is traced, never compiled or run.

    >>> import numpy as np, tracejit as tj
    >>> tj.eval_shape(lambda x: x.sum(axis=0), tj.ShapeDtypeStruct((3, 4), np.float32))
    ShapeDtypeStruct(shape=(4,), dtype=float32)
    """
    traced = trace(fun, args, kwargs)
    outs = [ShapeDtypeStruct(v.shape, v.dtype) for v in traced.graph.outputs]
    return tree_unflatten(traced.out_tree, outs)


def block_until_ready(tree):
    """Wait until every array in `tree` is computed; returns `tree`.

    CPU results are complete when a call returns (a no-op); CUDA arrays wait for their
    stream, which is what a timing loop needs before reading the clock.

    >>> import numpy as np, tracejit as tj
    >>> tj.block_until_ready({"a": np.ones(2)})["a"]
    array([1., 1.])
    """
    for leaf in tree_flatten(tree)[0]:
        if hasattr(leaf, "__cuda_array_interface__"):
            import cupy  # a CUDA array implies CuPy is importable

            cupy.cuda.get_current_stream().synchronize()
            break
    return tree


__all__ = ["block_until_ready", "eval_shape"]

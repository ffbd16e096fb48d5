"""Differentiated (joint forward + backward) graphs on disk, keyed by the traced graph.

A fresh process whose cache holds the compiled `jit(grad(f))` still has to produce jit's
traced graph to find it (the key is taken from that graph): trace `f`, optimize it,
differentiate, optimize the joint graph, and re-trace that into jit's trace. The middle
part is a pure function of `f`'s traced graph, so `cached_joint` stores its result too, in
the same cache (an entry of kind "joint-graph", pickled by `tracejit.cache.payload`): a warm
process loads the joint graph instead of running the passes and autodiff. Not counted in
`cache_info`'s hits and misses (those count compiled functions).

The key holds the traced graph's exact text (`graph_key.graph_fingerprint`), what is
differentiated, tracejit's sources, NumPy's version and the settings that change compiled
output; a graph without a stable text, or one that cannot be pickled, is differentiated as
before and not stored; so is one with checkpoint marks (`tj.checkpoint`'s policies live beside
the graph, in tracejit.ir.remat, not in its text), and one calling a custom_vjp/custom_jvp
function (its text holds the primal graph, not the rules). Nothing is stored while debug dumps are on
(they want every phase).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tracejit import cache
from tracejit.cache import graph_key, payload
from tracejit.errors import CacheError, TracejitTypeError
from tracejit.ir.graph import Graph

SUFFIX = ".pkl"


def joint_parts(graph: Graph, what: dict) -> dict | None:
    """The key parts of `graph`'s joint graph for `what` (wrt, seeded, remat), or None."""
    from tracejit.ir import remat

    if remat.has_marks(graph):
        return None
    # None also for a graph calling a custom_vjp/custom_jvp function: its key text holds the
    # primal graph only, and the user's rules shape the gradient
    parts = graph_key.key_parts(graph, "joint-graph", custom_calls=False)
    if parts is not None:
        parts["what"] = what
    return parts


def _load(path: str) -> Graph:
    graph = payload.loads(Path(path).read_bytes())
    if not isinstance(graph, Graph):
        raise TracejitTypeError(f"{path} holds a {type(graph).__name__}, not a Graph")
    return graph


def cached_joint(graph: Graph, what: dict, build: Callable[[], Graph]) -> Graph:
    """The joint graph `build()` makes from `graph`: stored on disk, or built and stored."""
    parts = joint_parts(graph, what)
    if parts is None:
        return build()
    found = cache.lookup(parts, SUFFIX, load=_load, count=False)
    if found is not None:
        return found
    joint = build()
    data = payload.dumps(joint)
    if data is not None:
        try:
            cache.get_or_build(
                parts, "", lambda _src, lib: Path(lib).write_bytes(data), SUFFIX, count=False
            )
        except (CacheError, OSError):
            pass  # not stored: the next process differentiates again
    return joint


__all__ = ["cached_joint", "joint_parts"]

"""A traced graph as text that identifies it exactly, for keys taken before the compile phases.

`graph_fingerprint(graph)` names values by position and writes every node's primitive,
attributes (arrays by dtype, shape and the sha256 of their bytes; floats by their bit
pattern, so 0.0 and -0.0 differ), input and output types and weak flags. Two graphs with the
same fingerprint compile to the same code. An attribute whose text might not identify it
(an object with an address-based repr, a callable) makes the graph unkeyable: None, and
the caller compiles without the early lookup rather than risk a wrong hit.

>>> import numpy as np, tracejit as tj
>>> g = tj.make_ir(lambda x: x * 2.0)(np.ones(3, np.float32))
>>> graph_fingerprint(g) == graph_fingerprint(tj.make_ir(lambda y: y * 2.0)(np.ones(3, np.float32)))
True
>>> graph_fingerprint(g) == graph_fingerprint(tj.make_ir(lambda x: x * -2.0)(np.ones(3, np.float32)))
False
"""

from __future__ import annotations

import hashlib
import struct

import numpy as np

from tracejit.config import config
from tracejit.ir.graph import ConstValue, Graph, Value

# tj.config settings that change what a traced graph compiles to (the rest change logging,
# checks or where files go). memory_budget acts during tracing (autodiff's rematerialization)
# and so shows in the graph already, fp_contract in the compiler flags; both are listed for
# safety.
OUTPUT_CONFIG = ("memory_budget", "fp_contract")


class _Unkeyable(Exception):
    pass


def _attr(value, custom: bool = True) -> str:
    kind = type(value)
    if kind is int:  # the common cases first: ints, and tuples of them (shapes, axes)
        return f"i{value}"
    if kind is tuple and all(type(v) is int for v in value):
        return "(" + ",".join([f"i{v}" for v in value]) + ")"
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, int):
        return f"i{value}"
    if isinstance(value, float):
        return "f" + struct.pack("<d", value).hex()
    if isinstance(value, np.dtype):
        return "dt" + value.str
    if isinstance(value, np.generic):
        return f"np{value.dtype.str}:{value.tobytes().hex()}"
    if isinstance(value, ConstValue):
        value = value.array
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value).tobytes()
        return f"arr{value.dtype.str}{value.shape}:{hashlib.sha256(data).hexdigest()}"
    if isinstance(value, (tuple, list)):
        open_, close = "()" if isinstance(value, tuple) else "[]"
        return open_ + ",".join(_attr(v, custom) for v in value) + close
    if isinstance(value, slice):
        return f"slice({_attr(value.start)},{_attr(value.stop)},{_attr(value.step)})"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(_attr(v, custom) for v in value)) + "}"
    if isinstance(value, dict):
        items = sorted((_attr(k, custom), _attr(v, custom)) for k, v in value.items())
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    return _sub_graph(value, custom)


def _sub_graph(value, custom: bool) -> str:
    """Closed sub-graphs: control-flow regions, and custom_vjp calls (whose compiled code is
    their primal graph; their fwd/bwd only shape the gradient graph, already traced)."""
    from tracejit.cache.deferred import DeferredJoint
    from tracejit.ir.custom_call import CustomCall
    from tracejit.ir.regions import Region

    if isinstance(value, DeferredJoint):  # its key names the traced graph it is made from
        return f"joint{{{value.key}}}"
    if isinstance(value, Region):
        return "region{" + _fingerprint(value.graph, custom) + "}"
    if isinstance(value, CustomCall) and custom:
        return f"custom{{{value.name!r}:{_fingerprint(value.primal, custom)}}}"
    raise _Unkeyable(type(value).__name__)


def _type(v: Value) -> str:
    return f"{v.dtype.str}{list(v.shape)}{'w' if v.weak else ''}"


def graph_fingerprint(graph: Graph, custom_calls: bool = True) -> str | None:
    """The exact text of `graph` (see the module docstring), or None if it has no stable one.
    With `custom_calls=False`, also None when it calls a custom_vjp/custom_jvp function at
    any depth (the text holds the primal graph, not the rules that shape its gradient)."""
    try:
        return _fingerprint(graph, custom_calls)
    except _Unkeyable:
        return None


def _fingerprint(graph: Graph, custom: bool) -> str:
    # One pass, a few dict lookups per node: a value's number and the text of each distinct
    # type are made once (the key of a 400-step RNN's graph is taken twice per first call).
    names: dict[Value, str] = {}
    types: dict[tuple, str] = {}

    def bind(v: Value) -> str:
        name = names[v] = f"%{len(names)}"
        aval = (v.shape, v.dtype, v.weak)
        text = types.get(aval)
        if text is None:
            text = types[aval] = _type(v)
        return f"{name}:{text}"

    lines = ["in " + " ".join([bind(v) for v in graph.inputs])]
    get = names.get
    for node in graph.nodes:
        name = node.prim.name
        if name == "debug_print":  # jit prints around the executable: not stored
            raise _Unkeyable("debug_print")
        attrs = node.attrs
        text = ",".join([f"{k}={_attr(attrs[k], custom)}" for k in sorted(attrs)]) if attrs else ""
        args = " ".join([get(v, "?") for v in node.inputs])
        out = node.outputs
        outs = bind(out[0]) if len(out) == 1 else " ".join([bind(v) for v in out])
        lines.append(f"{outs} = {name}[{text}] {args}")
    lines.append("out " + " ".join([get(v, "?") for v in graph.outputs]))
    return "\n".join(lines)


def key_parts(graph: Graph, kind: str, custom_calls: bool = True) -> dict | None:
    """The key fields every cache entry taken from `graph` holds: its `kind`, the sha256 of
    the graph's exact text, tracejit's sources, NumPy's version and the settings that change
    compiled output. None for a graph without a stable text (`graph_fingerprint`), and while
    debug dumps are on (they want every phase to run)."""
    from tracejit import debug
    from tracejit.cache.keys import package_hash

    if debug.current_dump().enabled:
        return None
    fingerprint = graph_fingerprint(graph, custom_calls)
    if fingerprint is None:
        return None
    return {
        "kind": kind,
        "graph_sha256": hashlib.sha256(fingerprint.encode()).hexdigest(),
        "tracejit": package_hash(),
        "numpy": np.__version__,
        "config": {k: getattr(config, k) for k in OUTPUT_CONFIG},
    }


__all__ = ["OUTPUT_CONFIG", "graph_fingerprint", "key_parts"]

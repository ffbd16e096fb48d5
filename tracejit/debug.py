"""Debugging aids: per-function dumps of every compile stage, and NaN/Inf checks.

Dumps (`tj.config.debug_dir`, env `TRACEJIT_DEBUG_DIR`): each compiled function gets a
folder `<debug_dir>/<name>-<n>/` holding one numbered text file per stage, in the order the
stages ran: `00_traced.txt`, `01_after_cse.txt`, ... Any compile stage adds its own with

    from tracejit import debug
    debug.current_dump().write("schedule", schedule)      # str() is taken only when enabled

`current_dump()` is the dump of the compile in progress (`jit` opens one around tracing,
passes and backend compilation), or a disabled handle whose `write` does nothing.

NaN checks (`tj.config.debug_nans`, env `TRACEJIT_DEBUG_NANS`): after each call of a jitted
function, float outputs are checked for NaN/Inf. On a hit the optimized graph is re-run node
by node in the reference interpreter and `NonFiniteError` (a `TracejitError` and a
`FloatingPointError`, like JAX's) names the operation where the non-finite value that reaches
the output first appeared from finite inputs, its source line, and whether it belongs to the
forward or the backward pass. If the reference re-run gives finite outputs, the error says so.
"""

from __future__ import annotations

import contextvars
import itertools
import os
import re
from collections.abc import Sequence

import numpy as np

from tracejit.config import config
from tracejit.errors import TracejitError
from tracejit.ir.graph import Graph, Node, Value, format_graph
from tracejit.ir.interpret import evaluate

# ---------------------------------------------------------------- dumps

_folder_counter = itertools.count()
_current: contextvars.ContextVar[DumpHandle | None] = contextvars.ContextVar(
    "tracejit_dump", default=None
)


class DumpHandle:
    """Writes numbered stage files into one function's dump folder (or nothing if disabled)."""

    def __init__(self, folder: str | None):
        self.folder = folder
        self._index = 0
        self._token = None

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    def write(self, stage: str, text) -> str | None:
        """Write `text` (anything with a `str()`) as the next stage file; its path, or None."""
        if self.folder is None:
            return None
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", stage).strip("_") or "stage"
        path = os.path.join(self.folder, f"{self._index:02d}_{safe}.txt")
        self._index += 1
        with open(path, "w", encoding="utf-8") as f:
            f.write(str(text).rstrip("\n") + "\n")
        return path

    def files(self) -> list[str]:
        """The stage files written so far, in order."""
        if self.folder is None:
            return []
        return sorted(os.path.join(self.folder, n) for n in os.listdir(self.folder))

    def __enter__(self):
        self._token = _current.set(self)
        return self

    def __exit__(self, *exc) -> None:
        _current.reset(self._token)
        self._token = None

    def __repr__(self) -> str:
        return f"DumpHandle({self.folder!r})"


def _folder_name(fn_name: str) -> str:
    name = fn_name[4:-1] if fn_name.startswith("jit(") and fn_name.endswith(")") else fn_name
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "function"


def start_dump(fn_name: str, debug_dir: str | None = None) -> DumpHandle:
    """A new dump folder for one compile of `fn_name` under `debug_dir` (default:
    `tj.config.debug_dir`); a disabled handle when no directory is set.

    >>> import tempfile
    >>> d = start_dump("jit(loss)", tempfile.mkdtemp())
    >>> os.path.basename(d.write("traced", "{ lambda . let in () }"))
    '00_traced.txt'
    """
    root = debug_dir if debug_dir is not None else config.debug_dir
    if not root:
        return DumpHandle(None)
    base = _folder_name(fn_name)
    while True:
        folder = os.path.join(root, f"{base}-{next(_folder_counter)}")
        try:
            os.makedirs(folder)
            return DumpHandle(folder)
        except FileExistsError:  # left by an earlier process: take the next number
            continue


def current_dump() -> DumpHandle:
    """The dump of the compile in progress, or a disabled handle.

    >>> current_dump().write("schedule", "...") is None
    True
    """
    handle = _current.get()
    return handle if handle is not None else DumpHandle(None)


# ---------------------------------------------------------------- NaN / Inf checks


class NonFiniteError(TracejitError, FloatingPointError):
    """A jitted function produced NaN or Inf while `tj.config.debug_nans` is on."""


def _nonfinite(x) -> bool:
    arr = np.asarray(x)
    return arr.dtype.kind == "f" and not bool(np.isfinite(arr).all())


def check_outputs(graph: Graph, args: Sequence, outputs: Sequence, name: str = "function"):
    """Raise `NonFiniteError` if a float output holds NaN/Inf (see the module docstring).

    >>> import numpy as np, tracejit as tj
    >>> g = tj.make_ir(lambda x: np.log(x))(np.zeros(2))
    >>> try:
    ...     check_outputs(g, [np.zeros(2)], [np.full(2, -np.inf)], "jit(f)")
    ... except NonFiniteError as e:
    ...     print(str(e).splitlines()[0])
    jit(f): output 0 contains Inf (2 of 2 elements).
    """
    bad = [i for i, o in enumerate(outputs) if _nonfinite(o)]
    if bad:
        raise _diagnose(graph, args, bad, outputs, name)


def _describe(arr) -> str:
    arr = np.asarray(arr)
    kinds = [k for k, f in (("NaN", np.isnan), ("Inf", np.isinf)) if f(arr).any()]
    count = int((~np.isfinite(arr)).sum())
    return f"{' and '.join(kinds)} ({count} of {arr.size} elements)"


def _rerun(graph: Graph, args: Sequence) -> dict[Value, np.ndarray]:
    """Every value of `graph`, by the reference interpreter."""
    values = [*graph.inputs, *(v for n in graph.nodes for v in n.outputs)]
    return dict(zip(values, evaluate(Graph(graph.inputs, graph.nodes, values), args)))


def _origin(graph: Graph, env, start: Value) -> Node | int:
    """Where the non-finite `start` began: the earliest node with non-finite output from
    finite inputs along non-finite paths, or the position of a graph input."""
    producer = graph.producers()
    order = {id(n): i for i, n in enumerate(graph.nodes)}
    inputs = {v: i for i, v in enumerate(graph.inputs)}
    found: list[Node | int] = []
    seen: set[Value] = set()
    stack = [start]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in inputs:
            found.append(inputs[v])
            continue
        node = producer[v]
        bad_inputs = [u for u in node.inputs if _nonfinite(env[u])]
        if bad_inputs:
            stack.extend(bad_inputs)
        else:
            found.append(node)
    nodes = [f for f in found if isinstance(f, Node)]
    if nodes:
        return min(nodes, key=lambda n: order[id(n)])
    return min(found)  # type: ignore[type-var]


def _example(node: Node, env) -> str:
    """`log(0.0) = -inf`: the first bad element with its inputs, for elementwise nodes."""
    out = np.asarray(env[node.outputs[0]])
    if out.dtype.kind != "f" or any(np.shape(env[v]) != out.shape for v in node.inputs):
        return ""
    idx = tuple(int(i) for i in np.argwhere(~np.isfinite(out))[0]) if out.ndim else ()
    args = ", ".join(repr(np.asarray(env[v])[idx].item()) for v in node.inputs)
    return f" (e.g. {node.prim.name}({args}) = {out[idx].item()!r})"


def _diagnose(graph: Graph, args, bad: list[int], outputs, name: str) -> NonFiniteError:
    first = bad[0]
    head = f"{name}: output {first} contains {_describe(outputs[first])}"
    try:
        env = _rerun(graph, args)
    except Exception as err:  # noqa: BLE001  (report any failure of the re-run, keep the finding)
        return NonFiniteError(f"{head}.\nRe-running it in the reference interpreter failed: {err}")
    reproduced = [i for i in bad if _nonfinite(env[graph.outputs[i]])]
    if not reproduced:
        return NonFiniteError(
            f"{head}, but re-running the graph in the NumPy reference interpreter gives finite "
            "outputs: the compiled code disagrees with the reference, so the operation cannot "
            "be named. This is a tracejit bug; please report it (set tj.config.debug_dir to "
            "collect the generated code)."
        )
    origin = _origin(graph, env, graph.outputs[reproduced[0]])
    if isinstance(origin, int):
        return NonFiniteError(
            f"{head}.\nThe non-finite values come from the arguments: input {origin} already "
            "contains NaN or Inf. Check the data passed in."
        )
    line = format_graph(graph).splitlines()[graph.nodes.index(origin) + 1].strip()
    where = f"\n  at {origin.source}" if origin.source else ""
    produced = _describe(env[origin.outputs[0]])
    return NonFiniteError(
        f"{head}.\nThe first operation to produce a non-finite value from finite inputs is "
        f"`{origin.prim.name}` in the {origin.phase} pass:\n    {line}{where}\n"
        f"It produced {produced}{_example(origin, env)}. Guard its inputs (e.g. with "
        "tnp.where or a small epsilon) so every value stays in its domain."
    )


def print(fmt: str, *args, **kwargs) -> None:  # tj.debug.print, as in JAX
    """Print `fmt.format(*args, **kwargs)` with runtime values, also inside `jit`.

    See `tracejit.debug_print`.
    """
    from tracejit.debug_print import debug_print  # deferred: it imports the tracer

    debug_print(fmt, *args, **kwargs)

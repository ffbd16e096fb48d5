"""Pictures of what the compiler did: Graphviz DOT text for a graph and for its fused schedule.

`graph_dot(g)` draws the IR: one box per node (primitive and attributes), edges labelled with
the value's type. `schedule_dot(s)` draws the fused schedule: each kernel is a cluster holding
one box per phase (what it reduces or stores), matmuls and NumPy fallbacks are boxes, and
buffers are ellipses with their type, size in bytes and role (input, output, temporary with
its arena offset). Both accept a `Lowered` (`tj.jit(f).lower(...)`) as well; render the text
with Graphviz (`dot -Tsvg schedule.dot -o schedule.svg`), or call `to_svg(text)`, which runs
Graphviz's `dot` program (`Lowered.graph_svg()` does both). Only `to_svg` needs Graphviz.

>>> import numpy as np, tracejit as tj
>>> lowered = tj.jit(lambda x: np.exp(x) / np.sum(np.exp(x))).lower(np.ones(4, np.float32))
>>> text = schedule_dot(lowered)
>>> text.splitlines()[0], "cluster_k0" in text
('digraph schedule {', True)
"""

from __future__ import annotations

import json
import shutil
import subprocess

from tracejit.errors import TracejitError
from tracejit.ir import dtypes
from tracejit.ir import kernel as K
from tracejit.ir.graph import Graph, Value
from tracejit.ir.memory import step_io

_MAX_EXPR = 60  # longer kernel expressions are cut in labels: the picture must stay readable
_HEADER = [
    "  rankdir=TB;",
    '  node [fontname="monospace", fontsize=10];',
    '  edge [fontname="monospace", fontsize=9];',
    '  graph [fontname="monospace", fontsize=11];',
]


def _q(text: str) -> str:
    """A DOT string literal (JSON escaping is valid DOT escaping for these labels)."""
    return json.dumps(text)


def _type(shape, dtype) -> str:
    return f"{dtypes.short_name(dtype)}[{','.join(map(str, shape))}]"


def _graph_of(x) -> Graph:
    return x.graph if hasattr(x, "graph") and isinstance(x.graph, Graph) else x


def graph_dot(graph) -> str:
    """DOT text of a `Graph` (or a `Lowered`): inputs, one box per node, outputs."""
    graph = _graph_of(graph)
    lines = ["digraph graph_ir {", *_HEADER]
    where: dict[Value, str] = {}
    for i, v in enumerate(graph.inputs):
        where[v] = f"in{i}"
        lines.append(f"  in{i} [shape=ellipse, label={_q(f'input {i}: {v.type_str}')}];")
    for n, node in enumerate(graph.nodes):
        attrs = ", ".join(f"{k}={v}" for k, v in sorted(node.attrs.items()))
        label = node.prim.name + (f"\n[{attrs}]" if attrs else "")
        lines.append(f"  n{n} [shape=box, label={_q(label)}];")
        for v in node.inputs:
            lines.append(f"  {where[v]} -> n{n} [label={_q(v.type_str)}];")
        for v in node.outputs:
            where[v] = f"n{n}"
    for i, v in enumerate(graph.outputs):
        lines.append(f"  out{i} [shape=ellipse, label={_q(f'output {i}: {v.type_str}')}];")
        lines.append(f"  {where[v]} -> out{i} [label={_q(v.type_str)}];")
    return "\n".join([*lines, "}"]) + "\n"


def _schedule_of(x) -> K.Schedule:
    if isinstance(x, K.Schedule):
        return x
    from tracejit.backend_cpu import schedule_graph  # the schedule the CPU code is made from

    return schedule_graph(_graph_of(x))


def _buffer_label(b: K.Buffer) -> str:
    nbytes = b.nbytes
    role = {"input": f"input {b.index}", "output": f"output {b.index}"}.get(b.kind, b.kind)
    if b.kind == "temp" and b.offset >= 0:
        role = f"temp @ arena+{b.offset}"
    return f"b{b.id}: {_type(b.shape, b.dtype)}\n{nbytes} B, {role}"


def _short(e: K.Expr) -> str:
    """An expression's text, cut to `_MAX_EXPR` characters (a label, not the source)."""
    text = K.format_expr(e)
    return text if len(text) <= _MAX_EXPR else text[: _MAX_EXPR - 3] + "..."


def _kernel_cluster(s: int, step: K.Kernel) -> tuple[list[str], dict[int, str], dict[int, str]]:
    """A kernel as a cluster with one box per phase; (lines, reader node per buffer, writer)."""
    domain = f"outer={step.outer}" + (f" inner={step.inner}" if step.inner else "")
    lines = [f"  subgraph cluster_{step.name} {{", f"    label={_q(f'{step.name}: {domain}')};"]
    readers: dict[int, str] = {}
    writers: dict[int, str] = {}
    previous = None
    for p in [*range(step.nphases), -1]:
        work = [f"r{r.rid} = {r.op}({_short(r.expr)})" for r in step.reductions if r.phase == p]
        work += [f"b{st.buf} = {_short(st.expr)}" for st in step.stores if st.phase == p]
        if not work:
            continue
        node = f"s{s}p{p if p >= 0 else 'e'}"
        title = "epilogue" if p == -1 else f"phase {p}"
        lines.append(f"    {node} [shape=box, label={_q(chr(10).join([title, *work]))}];")
        if previous is not None:  # phases run in order, one after the other, per outer index
            lines.append(f"    {previous} -> {node} [style=dotted, arrowhead=none];")
        previous = node
        exprs = [r.expr for r in step.reductions if r.phase == p]
        exprs += [st.expr for st in step.stores if st.phase == p]
        for e in exprs:
            for ld in (x for x in K.walk(e) if isinstance(x, K.Load)):
                readers.setdefault(ld.buf, node)
        for st in step.stores:
            if st.phase == p:
                writers[st.buf] = node
    lines.append("  }")
    return lines, readers, writers


def schedule_dot(schedule) -> str:
    """DOT text of a fused `Schedule` (or of a `Lowered` / `Graph`, fused for the CPU)."""
    schedule = _schedule_of(schedule)
    lines = ["digraph schedule {", *_HEADER, "  compound=true;"]
    for b in schedule.buffers:
        lines.append(f"  b{b.id} [shape=ellipse, label={_q(_buffer_label(b))}];")
    edges = []
    for s, step in enumerate(schedule.steps):
        reads, writes = step_io(step)
        if isinstance(step, K.Kernel):
            body, readers, writers = _kernel_cluster(s, step)
            lines += body
            edges += [f"  b{b} -> {readers[b]};" for b in sorted(reads)]
            edges += [f"  {writers[b]} -> b{b};" for b in sorted(writes)]
            continue
        if isinstance(step, K.View):
            lines.append(f"  b{step.src} -> b{step.dst} [style=dashed, label=view];")
            continue
        what = "matmul (BLAS)" if isinstance(step, K.Matmul) else f"numpy {step.prim}"
        lines.append(f"  s{s} [shape=box, style=bold, label={_q(f'{step.name}: {what}')}];")
        edges += [f"  b{b} -> s{s};" for b in sorted(reads)]
        edges += [f"  s{s} -> b{b};" for b in sorted(writes)]
    return "\n".join([*lines, *edges, "}"]) + "\n"


class GraphvizError(TracejitError, RuntimeError):
    """Graphviz's `dot` program is missing or failed."""


def to_svg(dot_text: str, timeout: float = 60.0) -> str:
    """SVG text of DOT `dot_text`, rendered by Graphviz's `dot` program."""
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizError(
            "rendering needs Graphviz's `dot` program: install Graphviz (apt install graphviz, "
            "brew install graphviz), or keep the DOT text of schedule_dot/graph_dot"
        )
    cmd = [exe, "-Tsvg"]
    done = subprocess.run(
        cmd, check=False, input=dot_text, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise GraphvizError(f"Graphviz's dot failed: {done.stderr.strip()[:500]}")
    return done.stdout


__all__ = ["GraphvizError", "graph_dot", "schedule_dot", "to_svg"]

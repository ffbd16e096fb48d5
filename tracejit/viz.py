"""Pictures of what the compiler did: the IR and the fused kernel schedule as Graphviz graphs.

`schedule_dot(schedule)` draws buffers (shape, dtype, bytes, kind) as ellipses and each step
as a cluster: a kernel's operations with their dataflow inside it, a matmul or a NumPy
fallback as one box. `graph_dot(graph)` draws the traced IR, one box per node. `to_svg`
renders either with Graphviz's `dot` program. `tj.jit(f).lower(x).graph_svg()` is the way in.

>>> import numpy as np, tracejit as tj
>>> low = tj.jit(lambda x: np.exp(x - x.max())).lower(np.ones((2, 3), np.float32))
>>> "cluster_k0" in schedule_dot(low.schedule())
True
"""

from __future__ import annotations

import shutil
import subprocess

from tracejit.errors import TracejitError
from tracejit.ir import kernel as K
from tracejit.ir.graph import Graph


class GraphvizError(TracejitError, RuntimeError):
    """Graphviz's `dot` program is missing or failed."""


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _buffer_label(b: K.Buffer) -> str:
    where = f" {b.index}" if b.index >= 0 else ""
    return f"b{b.id} {b.type_str}\n{b.nbytes:,} B {b.kind}{where}"


def _step_buffers(step: K.Step) -> tuple[list[int], list[int]]:
    """(buffers read, buffers written) by one step."""
    if isinstance(step, K.Kernel):
        return sorted({ld.buf for ld in step.loads()}), [s.buf for s in step.stores]
    if isinstance(step, K.Matmul):
        return [step.a, step.b], [step.out]
    if isinstance(step, K.View):
        return [step.src], [step.dst]
    return list(step.inputs), list(step.outputs)


def _kernel_body(step: K.Kernel, prefix: str) -> tuple[list[str], dict, dict]:
    """A kernel's op nodes and edges, the nodes reading each buffer, and the store sinks."""
    lines, ids, reads = [], {}, {}
    roots = [(r.expr, f"{prefix}_r{r.rid}", f"r{r.rid} = {r.op}") for r in step.reductions]
    roots += [(s.expr, f"{prefix}_st{i}", f"store b{s.buf}") for i, s in enumerate(step.stores)]

    def link(arg, target: str) -> None:
        if isinstance(arg, K.Op):
            lines.append(f"{ids[arg]} -> {target};")
        elif isinstance(arg, K.Load):
            reads.setdefault(arg.buf, set()).add(target)
        elif isinstance(arg, K.Acc):
            lines.append(f"{prefix}_r{arg.rid} -> {target};")

    for root, sink, label in roots:
        for e in K.walk(root):
            if e in ids or not isinstance(e, K.Op):
                continue
            ids[e] = f"{prefix}_{len(ids)}"
            lines.append(f"{ids[e]} [label={_quote(e.prim)}, shape=box];")
            for arg in e.args:
                link(arg, ids[e])
        lines.append(f"{sink} [label={_quote(label)}, shape=plain];")
        link(root, sink)
    stores = {f"{prefix}_st{i}": s.buf for i, s in enumerate(step.stores)}
    return lines, reads, stores


def _step_cluster(n: int, step: K.Step) -> list[str]:
    name = getattr(step, "name", f"view{n}")
    prefix = f"s{n}"
    out = [f"subgraph cluster_{name} {{", f"label={_quote(_step_title(step, name))};"]
    read, written = _step_buffers(step)
    if isinstance(step, K.Kernel):
        body, reads, stores = _kernel_body(step, prefix)
        out += body
        edges = [f"b{buf} -> {t};" for buf, ts in sorted(reads.items()) for t in sorted(ts)]
        edges += [f"{sink} -> b{buf};" for sink, buf in stores.items()]
    else:
        out.append(f"{prefix} [label={_quote(name)}, shape=box];")
        edges = [f"b{b} -> {prefix};" for b in read] + [f"{prefix} -> b{b};" for b in written]
    return out + ["}"] + edges


def _step_title(step: K.Step, name: str) -> str:
    if isinstance(step, K.Kernel):
        inner = f" inner={step.inner}" if step.inner else ""
        return f"{name}: outer={step.outer}{inner}"
    if isinstance(step, K.Matmul):
        return f"{name}: matmul {step.batch}x({step.m}x{step.k} @ {step.k}x{step.n})"
    if isinstance(step, K.Fallback):
        return f"{name}: {step.prim} (NumPy)"
    return f"{name}: view"


def schedule_dot(schedule: K.Schedule, title: str = "schedule") -> str:
    """Graphviz source of `schedule`: steps as clusters, buffers as ellipses between them."""
    lines = [f"digraph {_quote(title)} {{", "rankdir=TB;", "node [fontname=monospace];"]
    lines.append(f"label={_quote(f'{title}: arena {schedule.arena_bytes:,} B')};")
    for b in schedule.buffers:
        lines.append(f"b{b.id} [label={_quote(_buffer_label(b))}, shape=ellipse];")
    for n, step in enumerate(schedule.steps):
        lines += _step_cluster(n, step)
    return "\n".join(lines + ["}"])


def graph_dot(graph: Graph, title: str = "graph") -> str:
    """Graphviz source of the IR `graph`: inputs, one box per node, outputs."""
    lines = [f"digraph {_quote(title)} {{", "node [fontname=monospace];"]
    ids: dict = {}
    for i, v in enumerate(graph.inputs):
        ids[v] = f"in{i}"
        lines.append(f"in{i} [label={_quote(f'input {i}: {v.type_str}')}, shape=ellipse];")
    for n, node in enumerate(graph.nodes):
        outs = ", ".join(v.type_str for v in node.outputs)
        label = f"{node.prim.name}\n{outs}"
        lines.append(f"n{n} [label={_quote(label)}, shape=box];")
        lines += [f"{ids[v]} -> n{n};" for v in node.inputs if v in ids]
        ids.update((v, f"n{n}") for v in node.outputs)
    for i, v in enumerate(graph.outputs):
        lines.append(f"out{i} [label={_quote(f'output {i}')}, shape=plain];")
        if v in ids:
            lines.append(f"{ids[v]} -> out{i};")
    return "\n".join(lines + ["}"])


def to_svg(dot_source: str, timeout: float = 60.0) -> str:
    """Render Graphviz source to SVG text with the `dot` program."""
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizError(
            "rendering needs Graphviz's `dot` program: install Graphviz (apt install graphviz, "
            "brew install graphviz), or use the .dot text from schedule_dot/graph_dot"
        )
    done = subprocess.run(
        [exe, "-Tsvg"],
        check=False,
        input=dot_source,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise GraphvizError(f"Graphviz dot failed: {done.stderr.strip()[:500]}")
    return done.stdout

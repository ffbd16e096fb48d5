"""Fusion: group a graph's nodes into kernels and order them into a `Schedule`.

The rules, in the order they apply:

1. A value is *materialized* (gets a buffer) when it is a graph input or output, the result of
   a reduction, matmul, concatenate/pad, general reshape or NumPy fallback, an operand of a
   matmul/fallback/view, an expensive elementwise value read by two consumers, or an
   elementwise value whose inlined expression would load more than `MAX_READS` buffers (a
   sum with a term per step of an unrolled loop becomes a chain of kernels). Every other
   elementwise or layout value is *inlined*: recomputed inside the expression of each kernel
   that reads it, with broadcasts, transposes, slices, reversals and size-1 reshapes folded
   into the affine index of the loads.
2. Each materialized elementwise value starts a kernel over its shape; each reduction starts a
   kernel over (kept dims, reduced dims).
3. Kernels merge when the merged kernel is valid and the step graph stays acyclic: a reduction
   absorbs same-domain reductions and elementwise producers/consumers over its input shape or
   its kept shape (softmax, layernorm, logsumexp become one kernel that reads each row once);
   elementwise kernels over one shape that share inputs become one loop.
4. Values whose only readers ended up inside their own kernel lose their buffer.

>>> import numpy as np, tracejit as tj
>>> g = tj.make_ir(lambda x: np.tanh(x) * 2.0)(np.ones(4, np.float32))
>>> [type(s).__name__ for s in fuse(g).steps]
['Kernel']
"""

from __future__ import annotations

import numpy as np

from tracejit import progress, timing
from tracejit.errors import InternalError
from tracejit.ir import kernel as K
from tracejit.ir.c_render import C_RULES
from tracejit.ir.fusion_merge import (
    MAX_READS,
    Group,
    Invalid,
    Other,
    Steps,
    drop_internal,
    merge,
)
from tracejit.ir.graph import Graph, Node, Value
from tracejit.ir.index_maps import INDEX_MAPS
from tracejit.ir.kernel_simplify import simplify
from tracejit.ir.memory import step_io
from tracejit.ir.primitives import (
    CONSTANT,
    FOLDED,
    INLINE,
    LIBRARY,
    PARTIAL,
    REDUCE,
    RESHAPE,
    TRANSCENDENTAL,
    RuleTable,
)

# The kernel accumulator (ir/kernel.py Reduction.op) of each primitive of fusion class REDUCE.
REDUCE_OPS = RuleTable("kernel accumulator")
for _name, _op in {
    "reduce_sum": "sum",
    "reduce_prod": "prod",
    "reduce_max": "max",
    "reduce_min": "min",
    "argmax": "argmax",
    "argmin": "argmin",
}.items():
    REDUCE_OPS[_name] = _op


def _row_major(shape) -> tuple[int, ...]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def _is_unit_reshape(node: Node) -> bool:
    """A reshape that only adds or removes size-1 dims (an affine map of coordinates)."""
    src, dst = node.inputs[0].shape, node.outputs[0].shape
    return [d for d in src if d != 1] == [d for d in dst if d != 1]


def classify(node: Node) -> str:
    """How fusion treats `node`: inline, reduce, view, const, matmul, partial or fallback.

    Read from the primitive's fusion class (ir/primitives.py); an elementwise primitive
    without a C rendering runs on the host.
    """
    fusion = node.prim.fusion
    if fusion == FOLDED or (fusion == INLINE and node.prim in C_RULES):
        return "inline"
    if fusion == RESHAPE:
        return "inline" if _is_unit_reshape(node) else "view"
    if fusion == REDUCE:
        axes = node.attrs.get("axes", (node.attrs.get("axis"),))
        return "reduce" if axes else "inline"
    if fusion == CONSTANT:
        return "inline" if node.outputs[0].shape == () else "const"
    if fusion in (LIBRARY, PARTIAL):
        return fusion
    return "fallback"


class _Fuser:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.producer: dict[Value, Node] = graph.producers()
        self.users = graph.users()
        self.order = {n: i for i, n in enumerate(graph.nodes)}
        self.kind = {n: classify(n) for n in graph.nodes}
        self.materialized: set[Value] = set()
        self.buf: dict[Value, int] = {}

    # ------------------------------------------------------------ materialization

    def mark_materialized(self) -> None:
        m = self.materialized
        m.update(self.graph.inputs)
        m.update(self.graph.outputs)
        self.matmul_operands: dict[Node, list[tuple[Value, bool]]] = {}
        for node in self.graph.nodes:
            kind = self.kind[node]
            if kind != "inline":
                m.update(node.outputs)
            if kind in ("view", "fallback"):
                m.update(node.inputs)
            if kind == "matmul":
                ops = [self._matmul_operand(v) for v in node.inputs]
                self.matmul_operands[node] = ops
                m.update(v for v, _ in ops)
        self._materialize_shared()

    def _matmul_operand(self, v: Value) -> tuple[Value, bool]:
        """Fold a transpose of the last two axes into the BLAS call's trans flag."""
        node = self.producer.get(v)
        if node is not None and node.prim.name == "transpose":
            perm = node.attrs["perm"]
            n = len(perm)
            if n >= 2 and tuple(perm) == tuple(range(n - 2)) + (n - 1, n - 2):
                return node.inputs[0], True
        return v, False

    def _materialize_shared(self) -> None:
        cost: dict[Value, int] = {}
        loads: dict[Value, int] = {}  # an upper bound of the buffers its expression loads
        m = self.materialized
        for node in self.graph.nodes:
            if self.kind[node] != "inline":
                continue
            inlined = [u for u in node.inputs if u not in m]
            total = node.prim.cost + sum(cost.get(u, 0) for u in inlined)
            width = len(node.inputs) - len(inlined) + sum(loads.get(u, 1) for u in inlined)
            v = node.outputs[0]
            cost[v] = total
            loads[v] = width
            shared = total >= TRANSCENDENTAL and len(self.users.get(v, ())) >= 2
            if shared or width > MAX_READS:
                m.add(v)

    # ------------------------------------------------------------ expressions

    def build(self, group: Group) -> K.Kernel:
        """The kernel for `group`, or Invalid."""
        builder = _Builder(self, group)
        return builder.kernel()

    def reads(self, group: Group) -> set[Value]:
        if group.fixed is not None:
            return set(group.reads)
        return self.build_reads(group)

    def build_reads(self, group: Group) -> set[Value]:
        """The values `group`'s kernel loads; raises Invalid when it cannot be built."""
        builder = _Builder(self, group)
        builder.kernel()
        return set(builder.loaded)

    def buffer_of(self, v: Value) -> int:
        if v not in self.buf:
            self.buf[v] = len(self.buf)
        return self.buf[v]


class _Builder:
    """Builds the expressions of one group; raises Invalid when they cannot be formed."""

    def __init__(self, fuser: _Fuser, group: Group):
        self.f = fuser
        self.group = group
        self.in_group = set(group.stores) | {n.outputs[0] for n in group.reduces}
        self.rid = {n.outputs[0]: i for i, n in enumerate(group.reduces)}
        self.loaded: list[Value] = []
        if group.key[0] == "r":
            shape, axes = group.key[1], group.key[2]
            kept = [a for a in range(len(shape)) if a not in axes]
            self.outer = tuple(shape[a] for a in kept)
            self.inner = tuple(shape[a] for a in axes)
            position = {a: i for i, a in enumerate(kept)}
            position.update({a: len(kept) + i for i, a in enumerate(axes)})
            self.inner_map = tuple(self._unit(position[a]) for a in range(len(shape)))
        else:
            self.outer, self.inner = tuple(group.key[1]), ()
            self.inner_map = None
        self.outer_map = tuple(self._unit(i) for i in range(len(self.outer)))
        self.memo: dict = {}
        self.phase: dict[int, int] = {}

    def _unit(self, var: int) -> tuple[int, tuple[int, ...]]:
        """The identity row of loop variable `var` (zero for extent-1 vars: always 0 there)."""
        coefs = [0] * (len(self.outer) + len(self.inner))
        if self._extent(var) != 1:
            coefs[var] = 1
        return (0, tuple(coefs))

    def _extent(self, var: int) -> int:
        return (self.outer + self.inner)[var]

    # -- leaves and operands
    def _leaf(self, v: Value, amap):
        """An Expr when `v` is a leaf under `amap`, else None (its operands are needed)."""
        f = self.f
        node = f.producer.get(v)
        if v in self.rid:
            if amap != self.outer_map:
                raise Invalid("reduction result read at another index")
            n = self.group.reduces[self.rid[v]]
            return K.Acc(self.rid[v], n.outputs[0].dtype)
        if node is not None and node.prim.name == "const" and f.kind[node] == "inline":
            # a scalar constant is a literal even where a library step needs it in a buffer
            return K.Literal(node.attrs["value"].array.item(), v.dtype)
        if v in f.materialized and v not in self.in_group:
            return self._load(v, amap)
        if node is None:
            return self._load(v, amap)
        name = node.prim.name
        if name == "iota":
            off, coefs = amap[node.attrs["axis"]]
            return K.Index(off, coefs, v.dtype)
        if f.kind[node] != "inline":
            raise Invalid(f"{name} result needed inline")
        return None

    def _load(self, v: Value, amap) -> K.Load:
        self.loaded.append(v)
        strides = _row_major(v.shape)
        nvars = len(self.outer) + len(self.inner)
        offset = sum(s * c for s, (c, _) in zip(strides, amap))
        coefs = tuple(sum(s * row[1][d] for s, row in zip(strides, amap)) for d in range(nvars))
        return K.Load(self.f.buffer_of(v), offset, coefs, v.dtype)

    def _operands(self, node: Node, amap) -> list:
        rule = INDEX_MAPS.get(node.prim)  # a layout primitive folded into the index
        if rule is None:
            return [(u, amap) for u in node.inputs]
        zero = (0, (0,) * (len(self.outer) + len(self.inner)))
        return [(node.inputs[0], rule(node, amap, zero))]

    def _combine(self, node: Node, args: list) -> K.Expr:
        name = node.prim.name
        if node.prim.fusion == INLINE:
            dtype = node.inputs[1 if name == "select" else 0].dtype
            return K.Op(name, tuple(args), dtype, node.outputs[0].dtype)
        return args[0]  # layout ops and empty reductions

    def expr(self, root: Value, root_map) -> K.Expr:
        memo = self.memo
        stack = [(root, root_map)]
        while stack:
            key = stack[-1]
            if key in memo:
                stack.pop()
                continue
            v, amap = key
            leaf = self._leaf(v, amap)
            if leaf is not None:
                memo[key] = leaf
                stack.pop()
                continue
            node = self.f.producer[v]
            deps = self._operands(node, amap)
            missing = [d for d in deps if d not in memo]
            if missing:
                stack.extend(missing)
                continue
            memo[key] = self._combine(node, [memo[d] for d in deps])
            stack.pop()
        return memo[(root, root_map)]

    def _acc_phase(self, e: K.Expr) -> int:
        return max((self.phase[x.rid] for x in K.walk(e) if isinstance(x, K.Acc)), default=-1)

    # -- the kernel
    def kernel(self) -> K.Kernel:
        g = self.group
        reductions, stores = [], []
        for i, node in enumerate(g.reduces):
            e = self.expr(node.inputs[0], self.inner_map)
            self.phase[i] = self._acc_phase(e) + 1
            op = REDUCE_OPS[node.prim]
            arg_dim = len(self.outer) if op in ("argmax", "argmin") else -1
            reductions.append(K.Reduction(i, op, e, node.outputs[0].dtype, self.phase[i], arg_dim))
        for v in g.stores:
            inner = self.inner_map is not None and v.shape == g.key[1]
            amap = self.inner_map if inner else self.outer_map
            if not inner and v.shape != self.outer:
                raise Invalid("store shape fits neither level")
            e = self.expr(v, amap) if v not in self.rid else K.Acc(self.rid[v], v.dtype)
            if self.inner_map is None:
                phase = 0
            elif inner:
                phase = self._acc_phase(e) + 1
            else:
                phase = -1
            ld = self._load(v, amap)
            self.loaded.pop()
            stores.append(K.Store(ld.buf, ld.offset, ld.strides, e, phase))
        return K.Kernel("", self.outer, self.inner, reductions, stores)


# ---------------------------------------------------------------- partial stores


def _partial_kernels(f: _Fuser, node: Node) -> tuple[list[K.Kernel], list[Value]]:
    """concatenate / pad as kernels writing regions of one output buffer; and their reads."""
    out = node.outputs[0]
    out_buf = f.buffer_of(out)
    strides = _row_major(out.shape)
    pieces: list[tuple[Value, tuple[int, ...]]] = []  # (operand, start corner in out)
    kernels, reads = [], []
    if node.prim.name == "concatenate":
        axis, pos = node.attrs["axis"], 0
        for x in node.inputs:
            corner = tuple(pos if a == axis else 0 for a in range(out.ndim))
            pieces.append((x, corner))
            pos += x.shape[axis]
    else:
        x, val = node.inputs
        fill = _Builder(f, Group(("e", out.shape)))
        e = fill.expr(val, ())
        kernels.append(_store_kernel(out.shape, out_buf, 0, strides, e))
        reads += fill.loaded
        pieces.append((x, tuple(lo for lo, _ in node.attrs["widths"])))
    for x, corner in pieces:
        b = _Builder(f, Group(("e", x.shape)))
        e = b.expr(x, b.outer_map)
        offset = sum(c * s for c, s in zip(corner, strides))
        kernels.append(_store_kernel(x.shape, out_buf, offset, strides, e))
        reads += b.loaded
    return kernels, reads


def _store_kernel(shape, buf: int, offset: int, strides, e: K.Expr) -> K.Kernel:
    coefs = tuple(s if d != 1 else 0 for s, d in zip(strides, shape))
    return K.Kernel("", tuple(shape), (), [], [K.Store(buf, offset, coefs, e, 0)])


# ---------------------------------------------------------------- the schedule


def _initial_steps(f: _Fuser) -> Steps:
    groups, others = [], []
    for node in f.graph.nodes:
        kind, order = f.kind[node], f.order[node]
        v = node.outputs[0] if node.outputs else None
        if kind == "inline" and v in f.materialized and node.prim.name != "const":
            # (a materialized scalar constant is a "const" buffer holding its payload: no
            # kernel writes it, so no kernel writes memory that every call shares)
            groups.append(Group(("e", v.shape), stores=[v], order=order))
        elif kind == "reduce":
            axes = node.attrs.get("axes", (node.attrs.get("axis"),))
            key = ("r", node.inputs[0].shape, tuple(axes))
            groups.append(Group(key, stores=[v], reduces=[node], order=order))
        elif kind == "partial":
            kernels, reads = _partial_kernels(f, node)
            groups.append(Group(("p",), order=order, fixed=kernels, writes=[v], reads=reads))
        elif kind == "matmul":
            ops = f.matmul_operands[node]
            others.append(Other(node, kind, order, [u for u, _ in ops]))
        elif kind in ("view", "fallback"):
            others.append(Other(node, kind, order, list(node.inputs)))
    return Steps(f, groups, others)


def _lower_other(f: _Fuser, other: Other, name: str) -> K.Step:
    node = other.node
    if other.kind == "view":
        return K.View(f.buffer_of(node.inputs[0]), f.buffer_of(node.outputs[0]))
    if other.kind == "fallback":
        return K.Fallback(
            name + f"_numpy_{node.prim.name}",
            node.prim.name,
            dict(node.attrs),
            [f.buffer_of(v) for v in node.inputs],
            [f.buffer_of(v) for v in node.outputs],
        )
    a, b = node.inputs
    out = node.outputs[0]
    batch = int(np.prod(out.shape[:-2], dtype=np.int64))
    (ua, ta), (ub, tb) = f.matmul_operands[node]
    return K.Matmul(
        name + "_matmul",
        f.buffer_of(ua),
        f.buffer_of(ub),
        f.buffer_of(out),
        batch,
        a.shape[-2],
        b.shape[-1],
        a.shape[-1],
        ta,
        tb,
    )


def _lower(f: _Fuser, ordered: list) -> list[K.Step]:
    steps: list[K.Step] = []
    for item in ordered:
        name = f"k{len(steps)}"
        if isinstance(item, Other):
            steps.append(_lower_other(f, item, name))
        elif item.fixed is not None:
            for kern in item.fixed:
                kern.name = f"k{len(steps)}_{'pad' if len(item.fixed) == 2 else 'concat'}"
                steps.append(kern)
        else:
            kern = f.build(item)
            has_row = any(s.phase >= 0 for s in kern.stores) and kern.reductions
            kind = "row" if has_row else ("reduce" if kern.reductions else "loop")
            kern.name = f"{name}_{kind}"
            steps.append(kern)
    return steps


def _buffers(f: _Fuser, steps: list[K.Step]) -> tuple[list[K.Buffer], list[int], list]:
    """Buffer objects for every value with an id; outputs claim their storage or get copies."""
    graph = f.graph
    for v in graph.outputs:  # an output no step writes (an input, a constant) still needs one
        f.buffer_of(v)
    by_value = {b: v for v, b in f.buf.items()}
    kinds: dict[int, K.Buffer] = {}
    consts: list[np.ndarray] = []
    for b, v in sorted(by_value.items()):
        node = f.producer.get(v)
        buffer = K.Buffer(b, v.shape, v.dtype, "temp")
        if node is None:
            buffer.kind, buffer.index = "input", graph.inputs.index(v)
        elif node.prim.name == "const":
            buffer.kind, buffer.index = "const", len(consts)
            consts.append(np.ascontiguousarray(node.attrs["value"].array))
        elif f.kind[node] == "view":
            buffer.kind, buffer.base = "view", f.buffer_of(node.inputs[0])
        kinds[b] = buffer
    outputs = []
    claimed: set[int] = set()
    for i, v in enumerate(graph.outputs):
        b = f.buffer_of(v)
        if b not in kinds:  # pragma: no cover - every output is materialized
            raise InternalError("output without a buffer")
        root = K.root(kinds, b)
        if kinds[root].kind in ("input", "const", "output") or root in claimed:
            new = len(kinds)
            kinds[new] = K.Buffer(new, v.shape, v.dtype, "output", index=i)
            strides = _row_major(v.shape)
            load = K.Load(
                b, 0, tuple(s if d != 1 else 0 for s, d in zip(strides, v.shape)), v.dtype
            )
            copy = _store_kernel(v.shape, new, 0, strides, load)
            copy.name = f"k{len(steps)}_copy"
            steps.append(copy)
            outputs.append(new)
            continue
        claimed.add(root)
        out = kinds[b]
        if root != b:  # the view's root now lives in the output array
            kinds[root].kind, kinds[root].base = "view", b
        out.kind, out.index, out.base = "output", i, None
        outputs.append(b)
    used = set(outputs) | {f.buffer_of(v) for v in graph.inputs}
    for step in steps:
        reads, writes = step_io(step)
        used |= reads | writes
        if isinstance(step, K.View):
            used.add(step.dst)
    for b in list(used):
        while kinds[b].base is not None:
            b = kinds[b].base
            used.add(b)
    return [kinds[b] for b in sorted(kinds) if b in used], outputs, consts


def fuse(graph: Graph) -> K.Schedule:
    """Group `graph`'s nodes into kernels and library calls: the `Schedule` (no memory plan).

    >>> import numpy as np, tracejit as tj
    >>> g = tj.make_ir(lambda x: x + 1.0)(np.ones(3, np.float32))
    >>> fuse(g).kernel_names()
    ['k0_loop']
    """
    progress.count(nodes=len(graph.nodes))
    with timing.phase("fusion"):
        schedule = _fuse(graph)
    progress.count(steps=len(schedule.steps))
    return schedule


def _fuse(graph: Graph) -> K.Schedule:
    f = _Fuser(graph)
    f.mark_materialized()
    for v in graph.inputs:
        f.buffer_of(v)
    steps = _initial_steps(f)
    merge(steps)
    drop_internal(steps, set(graph.outputs))
    lowered = _lower(f, steps.topological())
    buffers, outputs, consts = _buffers(f, lowered)
    # each kernel with fewer, longer loop dims (ir/kernel_simplify.py), for both backends
    lowered = [simplify(s) if isinstance(s, K.Kernel) else s for s in lowered]
    inputs = [f.buffer_of(v) for v in graph.inputs]
    return K.Schedule(buffers, lowered, inputs, outputs, consts)


__all__ = ["classify", "fuse"]

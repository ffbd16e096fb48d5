"""The backend-neutral loop IR: a `Schedule` of steps over numbered buffers.

A `Kernel` is a loop nest over `outer` dims (independent, parallelizable) and, for
reductions, `inner` dims. Its body is made of expression trees whose leaves are affine `Load`s
(`offset + sum(strides[d] * i_d)`, in elements, over the loop variables `i_0..i_n`), so
broadcasts, transposes, slices and reversals cost no copy. A reduction kernel runs, per
outer index, one inner loop per *phase*: phase p computes the reductions whose inputs need
only the results of phases < p (softmax: max, then sum, then the stores), so each row is read
from memory once and stays in cache for the next phase.

Steps: `Kernel`, `Matmul` (a BLAS call), `View` (a reshape of contiguous data: no copy) and
`Fallback` (a primitive run by NumPy through a callback). Buffers are contiguous row-major.

`format_schedule` prints it:

    b0:f32[4,8] input 0
    b1:f32[4,8] output 0
    k0 reduce outer=(4,) inner=(8,)
      phase 0: r0 = max(b0[8*i0 + i1])
      phase 1: r1 = sum(exp((b0[8*i0 + i1] - r0)))
      phase 2: b1[8*i0 + i1] = (exp((b0[8*i0 + i1] - r0)) / r1)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tracejit.ir.graph import Shaped

# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Load:
    buf: int
    offset: int
    strides: tuple[int, ...]  # one per loop variable (outer then inner); 0 where unused
    dtype: np.dtype


@dataclass(frozen=True, eq=False)
class Literal:
    """A constant of `dtype`. Literals are equal when their bit patterns are: 0.0 and -0.0
    are two literals (`x * 0.0` next to `x / -0.0`), and a NaN literal equals itself."""

    value: Any
    dtype: np.dtype

    def bits(self) -> tuple:
        bits = self.__dict__.get("_bits")
        if bits is None:  # computed once: walks hash a kernel's literals millions of times
            bits = (np.dtype(self.dtype).str, np.asarray(self.value, self.dtype).tobytes())
            object.__setattr__(self, "_bits", bits)
        return bits

    def __eq__(self, other) -> bool:
        return isinstance(other, Literal) and self.bits() == other.bits()

    def __hash__(self) -> int:
        return hash(self.bits())


@dataclass(frozen=True)
class Index:
    """An affine function of the loop variables, as an integer of `dtype` (from `iota`)."""

    offset: int
    coefs: tuple[int, ...]
    dtype: np.dtype


@dataclass(frozen=True)
class Acc:
    """The result of reduction `rid` of the enclosing kernel (valid in later phases)."""

    rid: int
    dtype: np.dtype


@dataclass(frozen=True, eq=False)
class Op:
    """`prim` applied to sub-expressions. Compared by identity: fusion builds each
    (value, index map) once, so equal sub-expressions are shared objects, and identity keeps
    hashing O(1) on deep chains (structural hashing would recurse once per level)."""

    prim: str
    args: tuple
    dtype: np.dtype  # the operands' dtype (branches' for select)
    out_dtype: np.dtype
    attrs: tuple = ()


Expr = Load | Literal | Index | Acc | Op


def expr_dtype(e: Expr) -> np.dtype:
    return e.out_dtype if isinstance(e, Op) else e.dtype


def walk(*roots: Expr):
    """Every sub-expression of the `roots` once, children before parents (iterative)."""
    seen: set = set()
    stack = [(e, False) for e in reversed(roots)]
    while stack:
        node, done = stack.pop()
        if done:
            yield node
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        if isinstance(node, Op):
            stack.extend((a, False) for a in reversed(node.args))


# ---------------------------------------------------------------- steps


@dataclass
class Buffer(Shaped):
    id: int
    shape: tuple[int, ...]
    dtype: np.dtype
    kind: str  # "input" | "const" | "output" | "temp" | "view"
    index: int = -1  # position among inputs / consts / outputs
    base: int | None = None  # a view's source buffer
    offset: int = -1  # a temp's byte offset in the arena (memory plan)


def base_first(buffers: dict[int, Buffer]) -> list[int]:
    """Buffer ids, ascending but for a view's base, which comes before the view."""
    done: set[int] = set()
    order = []
    for b in sorted(buffers):
        chain = []
        while b not in done:
            chain.append(b)
            if buffers[b].kind != "view":
                break
            b = buffers[b].base
        for c in reversed(chain):
            order.append(c)
            done.add(c)
    return order


def root(buffers: dict[int, Buffer], b: int) -> int:
    """The buffer that view `b` (of a view...) lies in; `b` itself when not a view."""
    while buffers[b].kind == "view":
        b = buffers[b].base
    return b


@dataclass
class Reduction:
    rid: int
    op: str  # sum prod max min argmax argmin
    expr: Expr
    dtype: np.dtype  # the result's dtype (int64 for argmax/argmin)
    phase: int
    arg_dim: int = -1  # argmax/argmin: the loop variable whose index is the result


@dataclass
class Store:
    buf: int
    offset: int
    strides: tuple[int, ...]
    expr: Expr
    phase: int  # -1: after the phases, per outer index (reduction results and their users)


@dataclass
class Kernel:
    name: str
    outer: tuple[int, ...]
    inner: tuple[int, ...] = ()
    reductions: list[Reduction] = field(default_factory=list)
    stores: list[Store] = field(default_factory=list)

    @property
    def nphases(self) -> int:
        phases = [r.phase for r in self.reductions] + [s.phase for s in self.stores]
        return max(phases, default=-1) + 1

    def loads(self) -> list[Load]:
        roots = [r.expr for r in self.reductions] + [s.expr for s in self.stores]
        return [e for root in roots for e in walk(root) if isinstance(e, Load)]

    def affine_maps(self) -> list[tuple[int, tuple[int, ...]]]:
        """(offset, coefficients) of every store, load and index of the kernel."""
        maps = [(s.offset, s.strides) for s in self.stores]
        for root in [r.expr for r in self.reductions] + [s.expr for s in self.stores]:
            for e in walk(root):
                if isinstance(e, (Load, Index)):
                    maps.append((e.offset, e.strides if isinstance(e, Load) else e.coefs))
        return maps


@dataclass
class Matmul:
    name: str
    a: int
    b: int
    out: int
    batch: int
    m: int
    n: int
    k: int
    trans_a: bool = False  # a holds (..., k, m): use its transpose
    trans_b: bool = False


@dataclass
class View:
    src: int
    dst: int


@dataclass
class Fallback:
    name: str
    prim: str
    attrs: dict
    inputs: list[int]
    outputs: list[int]


Step = Kernel | Matmul | View | Fallback


@dataclass
class Schedule:
    buffers: list[Buffer]
    steps: list[Step]
    inputs: list[int]  # buffer per graph input
    outputs: list[int]  # buffer per graph output
    consts: list[np.ndarray]  # payloads of "const" buffers, by index
    arena_bytes: int = 0

    def __str__(self) -> str:
        return format_schedule(self)

    def kernel_names(self) -> list[str]:
        return [s.name for s in self.steps if not isinstance(s, View)]


# ---------------------------------------------------------------- printing


def rebuild(kernel: Kernel, leaf, store, arg_dim=None, outer=None, inner=None, op=None) -> Kernel:
    """A copy of `kernel` with every Load/Index leaf replaced by `leaf(node)` (shared
    sub-expressions stay shared), each store by `store(old_store, new_expr)`, and optionally
    new argmax dims (`arg_dim(old)`), loop extents, and each rebuilt Op `o` replaced by
    `op(o)`."""
    memo: dict = {}

    def rewrite(e: Expr) -> Expr:
        for node in walk(e):
            if node in memo:
                continue
            if isinstance(node, (Load, Index)):
                memo[node] = leaf(node)
            elif isinstance(node, Op):
                args = tuple(memo[a] for a in node.args)
                new = Op(node.prim, args, node.dtype, node.out_dtype, node.attrs)
                memo[node] = op(new) if op else new
            else:
                memo[node] = node
        return memo[e]

    reductions = [
        Reduction(
            r.rid,
            r.op,
            rewrite(r.expr),
            r.dtype,
            r.phase,
            arg_dim(r.arg_dim) if arg_dim else r.arg_dim,
        )
        for r in kernel.reductions
    ]
    stores = [store(s, rewrite(s.expr)) for s in kernel.stores]
    return Kernel(
        kernel.name,
        kernel.outer if outer is None else outer,
        kernel.inner if inner is None else inner,
        reductions,
        stores,
    )


def hoist_offsets(kernel: Kernel, buffer_at) -> Kernel:
    """`kernel` with each positive constant offset of a load or store moved into the buffer
    address: `buffer_at(buf, offset)` names a buffer starting `offset` elements into `buf`.

    The kernels of an unrolled loop differ mostly in where they read and write (step t reads
    slice t of an input); without the offsets their code is the same, so it is emitted once.

    >>> f32 = np.dtype(np.float32)
    >>> k = Kernel("k", (4,), (), [], [Store(1, 8, (1,), Load(0, 4, (1,), f32), 0)])
    >>> h = hoist_offsets(k, lambda buf, offset: 100 * buf + offset)
    >>> h.stores[0].buf, h.stores[0].offset, h.stores[0].expr
    (108, 0, Load(buf=4, offset=0, strides=(1,), dtype=dtype('float32')))
    """

    def moved(buf: int, offset: int) -> tuple[int, int]:
        return (buffer_at(buf, offset), 0) if offset > 0 else (buf, offset)

    def leaf(node):
        if isinstance(node, Load):
            return Load(*moved(node.buf, node.offset), node.strides, node.dtype)
        return node

    def store(s: Store, expr: Expr) -> Store:
        return Store(*moved(s.buf, s.offset), s.strides, expr, s.phase)

    return rebuild(kernel, leaf, store)


def format_expr(e: Expr, var: str = "i") -> str:
    """Readable infix text of an expression (iterative, so deep chains cannot overflow).

    A sub-expression used more than once is printed once, as `tN` in a trailing `where`
    list: a chain that reuses each step twice stays linear in text instead of doubling.

    >>> x = Load(0, 0, (1,), np.dtype("float32"))
    >>> y = Op("mul", (x, x), x.dtype, x.dtype)
    >>> format_expr(Op("add", (y, y), x.dtype, x.dtype))
    'add(t0, t0) where t0 = mul(b0[i0], b0[i0])'
    """
    nodes = list(walk(e))
    uses: dict = {}
    for node in nodes:
        for a in node.args if isinstance(node, Op) else ():
            uses[a] = uses.get(a, 0) + 1
    text: dict = {}
    lets: list[str] = []
    for node in nodes:
        if isinstance(node, Load):
            text[node] = f"b{node.buf}[{format_affine(node.offset, node.strides, var)}]"
        elif isinstance(node, Literal):
            text[node] = repr(node.value)
        elif isinstance(node, Index):
            text[node] = f"({format_affine(node.offset, node.coefs, var)})"
        elif isinstance(node, Acc):
            text[node] = f"r{node.rid}"
        else:
            args = ", ".join(text[a] for a in node.args)
            attrs = "".join(f"[{k}={v}]" for k, v in node.attrs)
            text[node] = f"{node.prim}{attrs}({args})"
            if uses.get(node, 0) > 1:
                lets.append(f"t{len(lets)} = {text[node]}")
                text[node] = f"t{len(lets) - 1}"
    return text[e] + (f" where {'; '.join(lets)}" if lets else "")


def format_affine(offset: int, coefs, var: str = "i") -> str:
    terms = [f"{c}*{var}{d}" if c != 1 else f"{var}{d}" for d, c in enumerate(coefs) if c]
    if offset or not terms:
        terms.insert(0, str(offset))
    return " + ".join(terms)


def _format_step(i: int, step: Step) -> list[str]:
    if isinstance(step, View):
        return [f"b{step.dst} = view b{step.src}"]
    if isinstance(step, Matmul):
        ta, tb = "ᵀ" if step.trans_a else "", "ᵀ" if step.trans_b else ""
        return [
            (
                f"{step.name}: b{step.out} = b{step.a}{ta} @ b{step.b}{tb} "
                f"(batch={step.batch}, m={step.m}, n={step.n}, k={step.k})"
            )
        ]
    if isinstance(step, Fallback):
        ins = " ".join(f"b{b}" for b in step.inputs)
        outs = " ".join(f"b{b}" for b in step.outputs)
        return [f"{step.name}: {outs} = numpy {step.prim}{step.attrs or ''} {ins}"]
    lines = [f"{step.name}: outer={step.outer} inner={step.inner}"]
    for p in [*range(step.nphases), -1]:
        label = "epilogue" if p == -1 else f"phase {p}"
        for r in step.reductions:
            if r.phase == p:
                lines.append(f"  {label}: r{r.rid} = {r.op}({format_expr(r.expr)})")
        for s in step.stores:
            if s.phase == p:
                where = format_affine(s.offset, s.strides)
                lines.append(f"  {label}: b{s.buf}[{where}] = {format_expr(s.expr)}")
    return lines


def format_schedule(schedule: Schedule) -> str:
    """The schedule as text: buffers, then one block per step."""
    lines = []
    for b in schedule.buffers:
        where = {
            "input": f"input {b.index}",
            "const": f"const {b.index}",
            "output": f"output {b.index}",
            "temp": f"arena+{b.offset}",
            "view": f"view of b{b.base}",
        }[b.kind]
        lines.append(f"b{b.id}:{b.type_str} {where}")
    for i, step in enumerate(schedule.steps):
        lines.extend(_format_step(i, step))
    return "\n".join(lines)


__all__ = [
    "Acc",
    "Buffer",
    "Expr",
    "Fallback",
    "Index",
    "Kernel",
    "Literal",
    "Load",
    "Matmul",
    "Op",
    "Reduction",
    "Schedule",
    "Store",
    "View",
    "base_first",
    "expr_dtype",
    "format_expr",
    "format_schedule",
    "hoist_offsets",
    "rebuild",
    "root",
    "walk",
]

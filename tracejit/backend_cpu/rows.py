"""C++ for elementwise loops and row reductions (the reduced axes are the inner loops).

A row kernel runs, per outer index, one inner loop per phase (softmax: max, sum, store). A
sub-expression that a later phase needs again and that calls a libm function (softmax's
`exp(x - max)`) is computed once: its phase writes it into a per-row scratch array on the
stack (L1-resident), later phases read it back. A division stays a division (`e / sum` is not
`e * (1 / sum)`, which is off by an ulp, and not 1 for a row of one element).

>>> import numpy as np
>>> from tracejit.ir import kernel as K
>>> f32 = np.dtype("float32")
>>> k = K.Kernel("k0", (4,), (8,), [K.Reduction(0, "sum", K.Load(0, 0, (8, 1), f32), f32, 0)],
...              [K.Store(1, 0, (1, 0), K.Acc(0, f32), -1)])
>>> bufs = {0: K.Buffer(0, (4, 8), f32, "input"), 1: K.Buffer(1, (4,), f32, "output")}
>>> "reduction(+:a0b)" in RowWriter(k, bufs, set()).function()
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tracejit.backend_cpu.emit import CPP, BaseWriter
from tracejit.ir import kernel as K
from tracejit.ir.c_render import c_type, literal
from tracejit.ir.cwriter.emit import decompose, indent
from tracejit.ir.cwriter.reduce import Accumulator, Partial, pick, two_sum
from tracejit.ir.primitives import TRANSCENDENTAL, get

# Scratch rows live on the stack of the thread running the kernel: bounded so they stay in
# L1/L2 and far from the stack limit of OpenMP worker threads (2-8 MiB).
SCRATCH_MAX_BYTES = 32 * 1024
# Float sums add into a vector accumulator of their own type for a block of the innermost loop,
# SUM_BLOCK_BYTES of terms (16 sequential adds per lane of a 64-byte vector: NumPy's pairwise
# sum adds 16 per accumulator in its blocks of 128 too), then into a wider total. Summing
# float32 in double throughout halved the exp-sum loop's vector width (softmax +20%).
SUM_BLOCK_BYTES = 1024
# The type the blocks of a float32 sum add into: double (as the GPU's accumulators,
# ir/cwriter/reduce.sum_accumulator_type). float64 sums: `_float64_sum`.
BLOCK_TOTAL = {np.dtype(np.float32): "double"}


@dataclass
class AccCode:
    """The code of one reduction's accumulator(s) in a row or partial loop."""

    pre: list[str]
    update: list[str]
    # its fields and result (`partial.result`); a split reduction's blocks combine them
    # in block order (CPP.combine)
    partial: Partial
    clauses: list[tuple[str, str]]  # omp simd reduction clauses (op, variable)
    sequential: bool  # argmax/argmin: the loop carries a dependence, no simd reduction
    # float sums: an accumulator of the sum's type per block of the innermost loop
    # (block_pre), added into the wider total after the block (block_post); see SUM_BLOCK_BYTES
    block_pre: list[str] = field(default_factory=list)
    block_post: list[str] = field(default_factory=list)
    block: int = 0  # iterations per block (SUM_BLOCK_BYTES of terms)


def accumulator(r: K.Reduction, v: str) -> AccCode:
    """Scalar accumulator code for reduction `r` of per-element value `v` (the semantics:
    ir/cwriter/reduce.py; here, how a simd loop carries them)."""
    acc = Accumulator(r, CPP)
    name = acc.name
    if acc.is_arg:  # in index order: the loop and the blocks
        return AccCode(acc.declare(), acc.update(v, f"i{r.arg_dim}"), acc.partial(), [], True)
    if r.op == "sum" and np.dtype(r.dtype) == np.float64:
        return _float64_sum(r, v)
    if r.op == "sum" and r.dtype.kind == "f":  # float blocks into a wider total
        wide, ct = BLOCK_TOTAL[np.dtype(r.dtype)], c_type(r.dtype)
        upd = [f"{name}b = {acc.combine(f'{name}b', v)};"]
        code = AccCode([f"{wide} {name} = 0;"], upd, acc.partial(), [("+", f"{name}b")], False)
        code.block_pre = [f"{ct} {name}b = 0;"]
        code.block_post = [f"{name} = {acc.combine(name, f'{name}b')};"]
        code.block = SUM_BLOCK_BYTES // np.dtype(r.dtype).itemsize
        return code
    pre, post = acc.declare(), [acc.result(name)]
    if acc.is_bool or r.op in ("sum", "prod"):
        return AccCode(pre, acc.update(v), acc.partial(), [(acc.operator(), name)], False)
    upd = [f"{name} = {pick(r.op, name, v)};"]  # omp simd max/min: NaN is carried apart
    clauses = [(r.op, name)]
    fields, ops = [(acc.acc_t, name)], [lambda a, b: pick(r.op, a, b)]
    if acc.in_dt.kind == "f":
        pre.append(f"int32_t {name}n = 0;")
        upd.append(f"{name}n = {name}n | ({v} != {v});")
        clauses.append(("|", f"{name}n"))
        fields.append(("int32_t", f"{name}n"))
        ops.append(lambda a, b: f"{a} | {b}")
        post = [
            f"const {acc.acc_t} r{r.rid} = {name}n ? {literal(float('nan'), acc.in_dt)} : {name};"
        ]
    return AccCode(pre, upd, Partial.fieldwise(r.rid, fields, ops, post), clauses, False)


def _float64_sum(r: K.Reduction, v: str) -> AccCode:
    """A float64 sum: each vector lane adds its terms of a block with Knuth's TwoSum, keeping
    the exact rounding error of every add in a second accumulator; after the block, lanes
    combine (GCC adds them in order) and the block's sum and error go into a long double
    total with Neumaier's correction (`tj_neumaier`, backend_cpu/codegen.py).

    Plain lanes err by up to ~k/4 + L/2 ulps of the total (k terms per lane and block, L
    lanes), identically for identical blocks: a constant fill of 2^20 terms was 3 ulps off
    where lanes are 4 wide (the H100 machine; NumPy 1). A plain long double total of 96,450
    blocks was 2 ulps off at 12,345,678 x (1/3) (NumPy 0). What is left is the lanes'
    combine: <= (L - 1) / 2 ulps. TwoSum needs no fast-math and has no product to contract;
    GCC keeps the loop vectorized.
    """
    name = f"a{r.rid}"
    upd = two_sum(f"{name}b", f"{name}k", v, name)
    pre = [f"long double {name} = 0, {name}c = 0;"]
    # an Inf or NaN term makes the error terms NaN: the plain sum is the answer then
    total = f"__builtin_isfinite({name}) ? {name} + {name}c : {name}"
    post = [f"const double r{r.rid} = (double)({total});"]
    fields = [("long double", name), ("long double", f"{name}c")]
    part = Partial.fieldwise(r.rid, fields, [lambda a, b: f"{a} + {b}"] * 2, post)
    code = AccCode(pre, upd, part, [("+", f"{name}b"), ("+", f"{name}k")], False)
    code.block_pre = [f"double {name}b = 0, {name}k = 0;"]
    block = f"__builtin_isfinite({name}b) ? (long double){name}b + {name}k : {name}b"
    code.block_post = [f"tj_neumaier({name}, {name}c, {block});"]
    code.block = SUM_BLOCK_BYTES // 8
    return code


def libm_heavy(*roots: K.Expr) -> set:
    """The sub-expressions of the `roots` whose cone costs at least one libm call
    (TRANSCENDENTAL, the primitives' cost scale: a libm call is worth a store and a reload
    from L1)."""
    cost: dict = {}
    for node in K.walk(*roots):
        if isinstance(node, K.Op):
            cost[node] = get(node.prim).cost + sum(cost.get(a, 0) for a in node.args)
    return {n for n, c in cost.items() if c >= TRANSCENDENTAL}


class LoopWriter(BaseWriter):
    """An elementwise loop nest: units are outer rows, the last dim is a simd loop."""

    def units_and_work(self) -> tuple[int, int]:
        k = self.k
        if len(k.outer) > 1:
            return int(np.prod(k.outer[:-1], dtype=np.int64)), int(np.prod(k.outer))
        return (k.outer[0], k.outer[0]) if k.outer else (1, 1)

    def body(self) -> list[str]:
        k = self.k
        em = self.emitter()
        stores = self.stores(em, 0)
        body = em.lines + stores
        n = len(k.outer)
        units = self.units_and_work()[0]
        if n == 0:
            return ["(void)lo; (void)hi;", "{", *indent(body, 2), "}"]
        if n == 1:
            return ["#pragma omp simd", *CPP.parallel_for(units, body, var="i0")]
        last = n - 1
        row = [
            *decompose(k.outer[:-1], "u", 0),
            "#pragma omp simd",
            f"for (int64_t i{last} = 0; i{last} < {k.outer[-1]}LL; ++i{last}) {{",
            *indent(body, 2),
            "}",
        ]
        return CPP.parallel_for(units, row)


class RowWriter(BaseWriter):
    """A reduction kernel whose units are outer indices, each running every phase's loop."""

    def __init__(self, kernel: K.Kernel, buffers: dict[int, K.Buffer], uses: set[str]):
        super().__init__(kernel, buffers, uses)
        self.scratch = self._plan_scratch()

    def units_and_work(self) -> tuple[int, int]:
        k = self.k
        inner = int(np.prod(k.inner, dtype=np.int64)) * max(k.nphases, 1)
        units = int(np.prod(k.outer, dtype=np.int64))
        return units, units * max(inner, 1)

    # -- scratch rows
    def _phase_roots(self, phase: int) -> list[K.Expr]:
        k = self.k
        roots = [r.expr for r in k.reductions if r.phase == phase]
        return roots + [s.expr for s in k.stores if s.phase == phase]

    def _plan_scratch(self) -> dict:
        """{sub-expression: (scratch index, phase that writes it)} for expensive values a
        later phase would recompute."""
        k = self.k
        size = int(np.prod(k.inner, dtype=np.int64)) if k.inner else 0
        if k.nphases < 2 or size == 0:
            return {}
        first: dict = {}
        for p in range(k.nphases):
            for node in K.walk(*self._phase_roots(p)):  # one walk of the roots' shared cones
                first.setdefault(node, p)
        plan: dict = {}
        nbytes = 0
        for p in range(1, k.nphases):
            heavy = libm_heavy(*self._phase_roots(p))
            seen: set = set()  # a second visit decides as the first did: the budget only shrinks
            for root in self._phase_roots(p):
                stack = [root]
                while stack:
                    node = stack.pop()
                    if node in plan or node not in heavy or node in seen:
                        continue
                    seen.add(node)
                    item = K.expr_dtype(node).itemsize * size
                    if first[node] < p and nbytes + item <= SCRATCH_MAX_BYTES:
                        plan[node] = (len(plan), first[node])
                        nbytes += item
                        continue
                    stack.extend(node.args)
        return plan

    def _flat_inner(self) -> str:
        k = self.k
        nouter, terms, stride = len(k.outer), [], 1
        for d in reversed(range(len(k.inner))):
            terms.append(f"i{nouter + d}" if stride == 1 else f"{stride}LL * i{nouter + d}")
            stride *= k.inner[d]
        return " + ".join(reversed(terms))

    # -- the body
    def body(self) -> list[str]:
        k = self.k
        scratch = [
            f"{c_type(K.expr_dtype(node))} s{i}[{int(np.prod(k.inner))}];"
            for node, (i, _) in self.scratch.items()
        ]
        body = decompose(k.outer, "u", 0) if k.outer else []
        for phase in range(k.nphases):
            body += self.phase(phase)
        body += self.epilogue()
        return CPP.parallel_for(self.units_and_work()[0], body, head=scratch)

    def epilogue(self) -> list[str]:
        em = self.emitter("e")
        stores = self.stores(em, -1)
        return em.lines + stores

    def phase(self, phase: int, first_range: tuple[str, str] | None = None) -> list[str]:
        """One phase's loop nest over the inner dims (the first over `first_range` if given),
        with its accumulators before and results after."""
        pre, post, loops = self._phase_loop(phase, first_range, f"p{phase}_")
        return [*pre, *loops, *post]

    def _phase_loop(self, phase: int, first_range, prefix: str):
        """(accumulator declarations, results, the loop nest) of one phase."""
        k = self.k
        seed = self._seed(phase)
        em = self.emitter(prefix, seed)
        accs = [accumulator(r, em.value(r.expr)) for r in k.reductions if r.phase == phase]
        stores = self.stores(em, phase)
        flat = self._flat_inner() if k.inner else "0"
        scratch = [
            f"s{i}[{flat}] = {em.value(node)};"
            for node, (i, p) in self.scratch.items()
            if p == phase
        ]
        body = em.lines + [u for a in accs for u in a.update] + stores + scratch
        sequential = any(a.sequential for a in accs)
        clauses = [c for a in accs for c in a.clauses]
        pre = [p for a in accs for p in a.pre]
        post = [q for a in accs for q in a.partial.result]
        block_pre = [p for a in accs for p in a.block_pre]
        if block_pre and k.inner:
            size = min(a.block for a in accs if a.block)
            block = (block_pre, [q for a in accs for q in a.block_post], size)
            return pre, post, self._blocked_nest(clauses, sequential, first_range, body, block)
        if block_pre:  # no inner loop: the block is the one element
            body = block_pre + body + [q for a in accs for q in a.block_post]
        loops = self._loops(clauses, sequential, first_range)
        return pre, post, self._nest(loops, body)

    def _blocked_nest(self, clauses, sequential, first_range, body, block) -> list[str]:
        """The loop nest with its innermost loop run in blocks of `block[2]` iterations, each
        with fresh float sum accumulators added into the wider totals after it."""
        k = self.k
        last = len(k.inner) - 1
        var = f"i{len(k.outer) + last}"
        lo, hi = first_range if (last == 0 and first_range) else ("0", f"{k.inner[last]}LL")
        red = " ".join(f"reduction({op}:{name})" for op, name in clauses)
        end = f"{var}b + {block[2]}LL"
        inner = [
            f"for (int64_t {var}b = {lo}; {var}b < {hi}; {var}b += {block[2]}LL) {{",
            f"  const int64_t {var}e = {end} < {hi} ? {end} : {hi};",
            *indent(block[0]),
            *([] if sequential else [f"  #pragma omp simd {red}"]),
            f"  for (int64_t {var} = {var}b; {var} < {var}e; ++{var}) {{",
            *indent(body, 4),
            "  }",
            *indent(block[1]),
            "}",
        ]
        outer = [h for h in self._loops([], True, first_range) if h.startswith("for")][:-1]
        return self._nest(outer, inner)

    def _seed(self, phase: int) -> dict:
        flat = self._flat_inner() if self.k.inner else "0"
        return {node: f"s{i}[{flat}]" for node, (i, p) in self.scratch.items() if p < phase}

    def _loops(self, clauses, sequential: bool, first_range) -> list[str]:
        k = self.k
        nouter = len(k.outer)
        loops = []
        for d, ext in enumerate(k.inner):
            var = f"i{nouter + d}"
            lo, hi = first_range if (d == 0 and first_range) else ("0", f"{ext}LL")
            if d == len(k.inner) - 1 and not sequential:
                red = " ".join(f"reduction({op}:{name})" for op, name in clauses)
                loops.append(f"#pragma omp simd {red}".rstrip())
            loops.append(f"for (int64_t {var} = {lo}; {var} < {hi}; ++{var}) {{")
        return loops

    @staticmethod
    def _nest(loops: list[str], body: list[str]) -> list[str]:
        lines, depth = [], 0
        for line in loops:
            lines.append(" " * depth + line)
            if line.startswith("for"):
                depth += 2
        lines += indent(body, depth)
        while depth:
            depth -= 2
            lines.append(" " * depth + "}")
        return lines


__all__ = ["AccCode", "LoopWriter", "RowWriter", "accumulator", "libm_heavy"]

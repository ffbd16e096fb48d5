"""C++ for reductions that a row loop would run badly: column reductions and full reductions.

Column reductions (a sum over axis 0: bias gradients, batch statistics) read memory that is
contiguous along a *kept* axis. A row loop would walk the reduced axis innermost with a large
stride; instead the reduced axes become the outer loops and the innermost loop runs over a
block of `COLUMN_BLOCK` consecutive kept indices, updating one accumulator per column (a
stack array): every load is contiguous and the loop vectorizes without a reduction clause.
Column blocks (times the other kept indices) are the parallel units.

Full reductions to a scalar (a loss, a mean) have one outer unit; they split the first
reduced dim into blocks whose partial results go to a per-block struct, combined in block
order afterwards (argmax keeps the first index of the extreme, NaN still wins).

>>> import numpy as np
>>> from tracejit.ir import kernel as K
>>> f32 = np.dtype("float32")
>>> k = K.Kernel("k0", (64,), (32,), [K.Reduction(0, "sum", K.Load(0, 0, (1, 64), f32), f32, 0)],
...              [K.Store(1, 0, (1, 0), K.Acc(0, f32), -1)])
>>> is_column(K.Kernel("k0", (64,), (32,), k.reductions, k.stores))
True
"""

from __future__ import annotations

import numpy as np

from tracejit.backend_cpu.emit import CPP, BaseWriter
from tracejit.backend_cpu.rows import RowWriter, accumulator
from tracejit.ir import kernel as K
from tracejit.ir.cwriter.emit import decompose, indent
from tracejit.ir.cwriter.layout import load_bias
from tracejit.ir.cwriter.reduce import Accumulator, Partial, ordered_arg_better

# Columns per parallel unit: a multiple of every vector width, and small enough that the
# accumulator arrays (one per reduction, <= 8 bytes a column) stay in L1 next to the rows.
COLUMN_BLOCK = 256


def is_column(k: K.Kernel) -> bool:
    """Whether kernel `k` (a reduction) reads memory contiguously along its last kept axis
    rather than along its reduced axes: it then runs as a column reduction."""
    if not k.reductions or not k.outer or not k.inner or k.outer[-1] < 2:
        return False
    row, col = load_bias(k)
    return col > row


def is_partial(k: K.Kernel) -> bool:
    """Whether kernel `k` reduces everything to one outer unit in one phase, so its reduced
    range can be split across threads."""
    return (
        bool(k.reductions)
        and not k.outer
        and bool(k.inner)
        and k.inner[0] > 1
        and k.nphases == 1
        and all(s.phase == -1 for s in k.stores)
    )


def _column_update(a: Accumulator, v: str) -> list[str]:
    """Adding `v` to column `jj` of accumulator `a`'s arrays; argmax candidates arrive in
    index order (`ordered_arg_better`) and replace the best without a branch."""
    n, r = a.name, a.r
    if not a.is_arg:
        return [f"{n}[jj] = {a.combine(f'{n}[jj]', a.term(v))};"]
    return [
        f"const bool {n}c = {ordered_arg_better(r.op, a.in_dt, v, f'{n}v[jj]')};",
        f"{n}v[jj] = {n}c ? {v} : {n}v[jj];",
        f"{n}i[jj] = {n}c ? i{r.arg_dim} : {n}i[jj];",
    ]


class ColumnWriter(BaseWriter):
    """A reduction whose innermost loop runs over a block of the last kept (outer) axis."""

    def __init__(self, kernel: K.Kernel, buffers: dict[int, K.Buffer], uses: set[str]):
        super().__init__(kernel, buffers, uses)
        k = self.k
        self.col = len(k.outer) - 1  # the column loop variable
        self.nblocks = -(-k.outer[-1] // COLUMN_BLOCK)
        self.accs = [Accumulator(r, CPP) for r in k.reductions]

    def units_and_work(self) -> tuple[int, int]:
        k = self.k
        rest = int(np.prod(k.outer[:-1], dtype=np.int64))
        work = int(np.prod(k.outer + k.inner, dtype=np.int64)) * max(k.nphases, 1)
        return rest * self.nblocks, work

    def _column_loop(self, lines: list[str], acc_phase: int) -> list[str]:
        """A simd loop over the block's columns; `r<rid>` of phases < acc_phase are defined."""
        c = f"i{self.col}"
        results = [a.result(f"{a.parts()[-1][1]}[jj]") for a in self.accs if a.r.phase < acc_phase]
        head = [
            "#pragma omp simd",
            f"for (int64_t {c} = c0; {c} < c1; ++{c}) {{",
            f"  const int64_t jj = {c} - c0;",
            "  (void)jj;",
        ]
        return head + indent(results + lines, 2) + ["}"]

    def body(self) -> list[str]:
        k = self.k
        decls = [f"{t} {var}[{COLUMN_BLOCK}];" for a in self.accs for t, var in a.parts()]
        body = [
            f"const int64_t c0 = (u % {self.nblocks}LL) * {COLUMN_BLOCK}LL;",
            (
                f"const int64_t c1 = c0 + {COLUMN_BLOCK}LL < {k.outer[-1]}LL ? "
                f"c0 + {COLUMN_BLOCK}LL : {k.outer[-1]}LL;"
            ),
        ]
        if self.col:
            body.append(f"const int64_t w = u / {self.nblocks}LL;")
            body += decompose(k.outer[:-1], "w", 0)
        init = [f"{v}[jj] = {s};" for a in self.accs for (_, v), s in zip(a.parts(), a.starts())]
        body += self._column_loop(init, 0)
        for phase in range(k.nphases):
            body += self._phase(phase)
        em = self.emitter("e")
        stores = self.stores(em, -1)
        if stores:
            body += self._column_loop(em.lines + stores, k.nphases)
        return CPP.parallel_for(self.units_and_work()[0], body, head=decls)

    def _phase(self, phase: int) -> list[str]:
        k = self.k
        em = self.emitter(f"p{phase}_")
        update = []
        for a in self.accs:
            if a.r.phase == phase:
                update += _column_update(a, em.value(a.r.expr))
        stores = self.stores(em, phase)
        inner = self._column_loop(em.lines + update + stores, phase)
        nouter = len(k.outer)
        loops = [
            f"for (int64_t i{nouter + d} = 0; i{nouter + d} < {ext}LL; ++i{nouter + d}) {{"
            for d, ext in enumerate(k.inner)
        ]
        return RowWriter._nest(loops, inner)


class PartialWriter(RowWriter):
    """A full reduction split over blocks of its first reduced dim; a finish function
    combines the blocks' partial accumulators in order and runs the epilogue."""

    def units_and_work(self) -> tuple[int, int]:
        k = self.k
        return k.inner[0], int(np.prod(k.inner, dtype=np.int64))

    def _partials(self) -> list[Partial]:
        return [accumulator(r, "v").partial for r in self.k.reductions]

    def _fields(self) -> list[tuple[str, str]]:
        return [f for p in self._partials() for f in p.fields]

    def params(self) -> list[str]:
        return [*CPP.unit_params(), f"{self.k.name}_part* part", self.buffer_params()]

    def body(self) -> list[str]:
        lines = self.phase(0, ("lo", "hi"))
        lines += [f"part->{var} = {var};" for _, var in self._fields()]
        return lines

    def function(self) -> str:
        name = self.k.name
        struct = [f"struct {name}_part {{"]
        struct += [f"  {ct} {var};" for ct, var in self._fields()] + ["};"]
        finish_params = [f"const {name}_part* parts", "int64_t n", self.buffer_params()]
        finish = CPP.function(f"{name}_finish", finish_params, self._finish_body())
        return "\n".join([*struct, super().function(), finish])

    def _finish_body(self) -> list[str]:
        lines = CPP.combine(self._partials())
        em = self.emitter("e")
        stores = self.stores(em, -1)
        return lines + em.lines + stores

    def call(self) -> str:
        units, work = self.units_and_work()
        name, args = self.k.name, self.args()
        return "\n".join(
            [
                "{",
                f"  {name}_part parts[TJ_PARALLEL_BLOCKS];",
                (
                    f"  const int64_t n = tj_parallel_parts({units}LL, {work}LL, "
                    f"[&](int64_t b, int64_t lo, int64_t hi) {{ {name}(lo, hi, &parts[b]{args}); }});"
                ),
                f"  {name}_finish(parts, n{args});",
                "}",
            ]
        )


__all__ = ["COLUMN_BLOCK", "ColumnWriter", "PartialWriter", "is_column", "is_partial"]

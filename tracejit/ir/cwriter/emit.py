"""The one expression emitter of both kernel writers: a loop body's statements, every
sub-expression once, as a typed local, spelled in the backend's `Dialect`.

>>> import numpy as np
>>> from tracejit.ir import kernel as K
>>> from tracejit.ir.cwriter.dialect import GCC
>>> em = Emitter(GCC, set())
>>> em.value(K.Op("add", (K.Load(0, 0, (1,), np.dtype("float32")),) * 2, np.dtype("float32"),
...                  np.dtype("float32")))
't1'
>>> em.lines
['const float t0 = b0[i0];', 'const float t1 = (t0 + t0);']
"""

from __future__ import annotations

import numpy as np

from tracejit.ir import kernel as K
from tracejit.ir.c_render import c_type, literal, render
from tracejit.ir.cwriter.dialect import Dialect, indent, int_suffix


def affine(offset: int, coefs, var: str = "i", suffix: str = "LL") -> str:
    """`offset + sum(c_d * var_d)` as C text; `suffix` types the constants (e.g. 64-bit).

    >>> affine(3, (4, 1, 0)), affine(3, (4,), suffix="")
    ('3 + 4LL * i0 + i1', '3 + 4 * i0')
    """
    terms = [f"{offset}"] if offset else []
    for d, c in enumerate(coefs):
        if c == 1:
            terms.append(f"{var}{d}")
        elif c:
            terms.append(f"{c}{suffix} * {var}{d}")
    return " + ".join(terms) or "0"


def decompose(
    extents, flat: str, first_var: int, idx: str = "int64_t", suffix: str = "LL"
) -> list[str]:
    """Statements splitting flat index `flat` into loop variables i{first_var}... over `extents`.

    `idx` is the C type of the variables, `suffix` the one of the integer literals.

    >>> decompose((2, 3), "j", 1, idx="int", suffix="")
    ['const int i2 = j % 3;', 'const int q2 = j / 3;', 'const int i1 = q2;']
    """
    lines = []
    rest = flat
    for d in reversed(range(len(extents))):
        var = f"i{first_var + d}"
        if d == 0:
            lines.append(f"const {idx} {var} = {rest};")
        else:
            lines.append(f"const {idx} {var} = {rest} % {extents[d]}{suffix};")
            lines.append(f"const {idx} q{first_var + d} = {rest} / {extents[d]}{suffix};")
            rest = f"q{first_var + d}"
    return lines


class Emitter:
    """Emits the statements of one loop body into `lines`.

    `names` may be pre-seeded with C text for sub-expressions computed elsewhere (a scratch
    row, an accumulator): those are used as they are and their operands are not emitted.
    `replace` maps a `Load` to the C text it reads instead of its buffer (a register cache,
    a vector lane). `idx` is the C type of the loop variables `i0, i1, ...`: with `int`,
    index constants carry no `LL` suffix.
    """

    def __init__(
        self,
        dialect: Dialect,
        uses: set,
        prefix: str = "t",
        idx: str = "int64_t",
        names: dict | None = None,
        replace: dict | None = None,
    ):
        self.dialect = dialect
        self.uses = uses
        self.prefix = prefix
        self.idx = idx
        self.names: dict = dict(names or {})
        self.replace = replace or {}
        self.lines: list[str] = []

    def affine(self, offset: int, coefs) -> str:
        return affine(offset, coefs, "i", int_suffix(self.idx))

    def _pending(self, e: K.Expr) -> list:
        """Sub-expressions of `e` without a name yet, children first (iterative)."""
        order, seen, stack = [], set(), [(e, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if node in seen or node in self.names:
                continue
            seen.add(node)
            stack.append((node, True))
            if isinstance(node, K.Op):
                stack.extend((a, False) for a in reversed(node.args))
        return order

    def _text(self, node: K.Expr) -> str:
        """The C expression of `node`, its operands already named."""
        if isinstance(node, K.Load):
            text = self.replace.get(node)
            return text or f"b{node.buf}[{self.affine(node.offset, node.strides)}]"
        if isinstance(node, K.Index):
            return f"({c_type(node.dtype)})({self.affine(node.offset, node.coefs)})"
        fn = self.dialect.inline_f32.get(node.prim)
        if fn is not None and node.dtype == np.float32:  # the C++ backend's fast_*.py
            self.uses.add(fn)
            return f"{fn}({self.names[node.args[0]]})"
        args = [self.names[a] for a in node.args]
        attrs = dict(node.attrs)
        return render(node.prim, args, node.dtype, node.out_dtype, attrs, self.uses, self.dialect)

    def value(self, e: K.Expr) -> str:
        """The C name (or literal) holding `e`, emitting what it needs."""
        for node in self._pending(e):
            if isinstance(node, K.Literal):
                self.names[node] = literal(node.value, node.dtype, self.dialect)
            elif isinstance(node, K.Acc):
                self.names[node] = f"r{node.rid}"
            else:
                name = f"{self.prefix}{len(self.lines)}"
                text = self._text(node)
                self.lines.append(f"const {c_type(K.expr_dtype(node))} {name} = {text};")
                self.names[node] = name
        return self.names[e]

    def stores(self, kernel: K.Kernel, phase: int, targets: dict | None = None) -> list[str]:
        """Statements storing the phase's values; `targets` maps a Store's id to its lvalue."""
        out = []
        for s in kernel.stores:
            if s.phase != phase:
                continue
            val = self.value(s.expr)
            where = (targets or {}).get(id(s)) or f"b{s.buf}[{self.affine(s.offset, s.strides)}]"
            out.append(f"{where} = {val};")
        return out


def buffer_ids(kernel: K.Kernel) -> list[int]:
    """The buffers `kernel` reads or writes, in parameter order."""
    return sorted({ld.buf for ld in kernel.loads()} | {s.buf for s in kernel.stores})


def param_text(
    dialect: Dialect,
    kernel: K.Kernel,
    buffers: dict[int, K.Buffer],
    donated: frozenset[tuple[int, int]] = frozenset(),
) -> str:
    """The C parameter list of `kernel`'s buffers (`donated`: see `may_alias`)."""
    written = {s.buf for s in kernel.stores}
    return ", ".join(
        dialect.param(
            c_type(buffers[b].dtype), b, b in written, may_alias(b, written, buffers, donated)
        )
        for b in buffer_ids(kernel)
    )


def _span(buf: K.Buffer) -> tuple:
    """(allocation, start, end) of a root buffer's bytes: temporaries share the arena."""
    if buf.kind != "temp":
        return (buf.id, 0, 1)
    if buf.offset < 0:  # not planned yet: it may share with any temporary
        return ("arena", 0, 1 << 62)
    return ("arena", buf.offset, buf.offset + max(buf.nbytes, 1))


def may_alias(
    b: int,
    written: set[int],
    buffers: dict[int, K.Buffer],
    donated: frozenset[tuple[int, int]] = frozenset(),
) -> bool:
    """Whether buffer `b` may share memory with a buffer the kernel writes: a temporary the
    memory plan put in place of a dying one (ir/memory.py), or an input whose memory the
    call gives to an output, a pair (input id, output id) of `donated` (ir/donation.py; a
    call without donation passes none). Such a buffer must not be
    `__restrict__`: nvcc may then load it through the non-coherent cache and after a store
    to the same address; an in-place output whose value did not depend on the input it
    replaced read the new value (`unique_counts` gave [3, 0, 0] on an H100)."""
    if b in written:
        return False
    rb = buffers[K.root(buffers, b)]
    span = _span(rb)
    for w in written:
        wb = buffers[K.root(buffers, w)]
        other = _span(wb)
        if other[0] == span[0] and other[1] < span[2] and span[1] < other[2]:
            return True
        if (rb.id, wb.id) in donated:
            return True
    return False


__all__ = ["Emitter", "affine", "buffer_ids", "decompose", "indent", "may_alias", "param_text"]

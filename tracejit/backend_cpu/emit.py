"""Building blocks of the C++ kernel writers: expression emission, reduction identities and
the parts every kernel writer shares (parameters, signature, call). Loop-variable splitting and
the max/min identities are shared with the CUDA writers in `tracejit.ir.c_common`.

>>> import numpy as np
>>> from tracejit.ir import kernel as K
>>> em = Emitter(set())
>>> em.value(K.Op("add", (K.Load(0, 0, (1,), np.dtype("float32")),) * 2, np.dtype("float32"),
...                  np.dtype("float32")))
't1'
>>> em.lines
['const float t0 = b0[i0];', 'const float t1 = (t0 + t0);']
"""

from __future__ import annotations

import numpy as np

from tracejit.backend_cpu.fast_exp import EXPF_C, EXPF_NAME
from tracejit.backend_cpu.fast_log import LOGF_C, LOGF_NAME
from tracejit.backend_cpu.fast_tanh import TANHF_C, TANHF_NAME
from tracejit.ir import c_common
from tracejit.ir import kernel as K
from tracejit.ir.c_common import indent
from tracejit.ir.c_render import c_type, literal, render
from tracejit.ir.kernel_simplify import simplify

IDENTITY = {"sum": 0, "prod": 1}
# float32 functions generated inline (their C is included by codegen) instead of libm/libmvec.
INLINE_F32 = {"tanh": TANHF_NAME, "exp": EXPF_NAME, "log": LOGF_NAME}
# their C definitions, which codegen includes for the names a translation unit uses
INLINE_F32_C = {TANHF_NAME: TANHF_C, EXPF_NAME: EXPF_C, LOGF_NAME: LOGF_C}


class Emitter:
    """Emits the statements of one loop body: every sub-expression once, as a local.

    `names` may be pre-seeded with C text for sub-expressions computed elsewhere (a scratch
    row, an accumulator): those are used as they are and their operands are not emitted.
    """

    def __init__(self, uses: set[str], prefix: str = "t", var: str = "i", names=None):
        self.uses = uses
        self.prefix = prefix
        self.var = var
        self.names: dict = dict(names or {})
        self.lines: list[str] = []
        self.counter = 0

    def affine(self, offset: int, coefs) -> str:
        return c_common.affine(offset, coefs, self.var)

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

    def value(self, e: K.Expr) -> str:
        for node in self._pending(e):
            if isinstance(node, K.Literal):
                self.names[node] = literal(node.value, node.dtype)
                continue
            if isinstance(node, K.Acc):
                self.names[node] = f"r{node.rid}"
                continue
            if isinstance(node, K.Load):
                text = f"b{node.buf}[{self.affine(node.offset, node.strides)}]"
            elif isinstance(node, K.Index):
                text = f"({c_type(node.dtype)})({self.affine(node.offset, node.coefs)})"
            elif node.prim in INLINE_F32 and node.dtype == np.float32:  # fast_tanh/exp/log.py
                fn = INLINE_F32[node.prim]
                text = f"{fn}({self.names[node.args[0]]})"
                self.uses.add(fn)
            else:
                args = [self.names[a] for a in node.args]
                attrs = dict(node.attrs)
                text = render(node.prim, args, node.dtype, node.out_dtype, attrs, self.uses, "tj_")
            name = f"{self.prefix}{self.counter}"
            self.counter += 1
            self.lines.append(f"const {c_type(K.expr_dtype(node))} {name} = {text};")
            self.names[node] = name
        return self.names[e]


class BaseWriter:
    """What every kernel writer shares: the simplified kernel, its parameters, its signature,
    and the `tj_parallel` call over `units_and_work()`. Subclasses write `body()`."""

    def __init__(self, kernel: K.Kernel, buffers: dict[int, K.Buffer], uses: set[str]):
        self.k = simplify(kernel)
        self.buffers = buffers
        self.uses = uses

    def params(self) -> list[int]:
        bufs = {ld.buf for ld in self.k.loads()} | {s.buf for s in self.k.stores}
        return sorted(bufs)

    def param_text(self) -> str:
        return ", ".join(f"{c_type(self.buffers[b].dtype)}* b{b}" for b in self.params())

    def signature(self) -> str:
        ps = self.param_text()
        return f"static void {self.k.name}(int64_t lo, int64_t hi{', ' if ps else ''}{ps})"

    def args(self) -> str:
        return "".join(f", b{b}" for b in self.params())

    def units_and_work(self) -> tuple[int, int]:
        raise NotImplementedError

    def body(self) -> list[str]:
        raise NotImplementedError

    def stores(self, em: Emitter, phase: int) -> list[str]:
        out = []
        for s in self.k.stores:
            if s.phase == phase:
                val = em.value(s.expr)
                out.append(f"b{s.buf}[{em.affine(s.offset, s.strides)}] = {val};")
        return out

    def function(self) -> str:
        return "\n".join([self.signature() + " {", *indent(self.body(), 2), "}"])

    def call(self) -> str:
        units, work = self.units_and_work()
        return (
            f"tj_parallel({units}LL, {work}LL, [&](int64_t lo, int64_t hi) "
            f"{{ {self.k.name}(lo, hi{self.args()}); }});"
        )


__all__ = ["IDENTITY", "INLINE_F32", "INLINE_F32_C", "BaseWriter", "Emitter", "indent"]

"""Building blocks of the C++ kernel writers: the C++ dialect of the shared expression
emitter (ir/cwriter) and the parts every kernel writer shares
(parameters, signature, call).

>>> import numpy as np
>>> from tracejit.ir import kernel as K
>>> em = Emitter(CPP, set())
>>> ex = K.Op("exp", (K.Load(0, 0, (1,), np.dtype("float32")),), np.dtype("float32"),
...           np.dtype("float32"))
>>> em.value(ex), em.lines[-1]
('t1', 'const float t1 = tj_expf(t0);')
"""

from __future__ import annotations

from tracejit.backend_cpu.fast_exp import EXPF_C, EXPF_NAME
from tracejit.backend_cpu.fast_log import LOGF_C, LOGF_NAME
from tracejit.ir import kernel as K
from tracejit.ir.cwriter.dialect import Dialect
from tracejit.ir.cwriter.emit import Emitter, buffer_ids, indent, param_text
from tracejit.ir.cwriter.fast_tanh import TANHF_C, TANHF_NAME

# float32 functions generated inline (their C is included by codegen) instead of libm/libmvec.
INLINE_F32 = {"tanh": TANHF_NAME, "exp": EXPF_NAME, "log": LOGF_NAME}
# their C definitions, which codegen includes for the names a translation unit uses
INLINE_F32_C = {TANHF_NAME: TANHF_C, EXPF_NAME: EXPF_C, LOGF_NAME: LOGF_C}
# C++: GCC builtins, libm through the `tj_<fn>` wrappers (vector_math.py), float32
# exp/log/tanh inline, plain pointer parameters (a view may alias a written buffer).
CPP = Dialect(libm_prefix="tj_", inline_f32=INLINE_F32)


class BaseWriter:
    """What every kernel writer shares: the simplified kernel, its parameters, its function,
    and the `tj_parallel` call over `units_and_work()`. Subclasses write `body()`."""

    def __init__(self, kernel: K.Kernel, buffers: dict[int, K.Buffer], uses: set[str]):
        self.k = kernel
        self.buffers = buffers
        self.uses = uses

    def emitter(self, prefix: str = "t", names: dict | None = None) -> Emitter:
        return Emitter(CPP, self.uses, prefix, names=names)

    def buffer_params(self) -> str:
        return param_text(CPP, self.k, self.buffers)

    def params(self) -> list[str]:
        """The kernel's parameters: its range of units and its buffers."""
        return [*CPP.unit_params(), self.buffer_params()]

    def args(self) -> str:
        return "".join(f", b{b}" for b in buffer_ids(self.k))

    def units_and_work(self) -> tuple[int, int]:
        raise NotImplementedError

    def body(self) -> list[str]:
        raise NotImplementedError

    def stores(self, em: Emitter, phase: int) -> list[str]:
        return em.stores(self.k, phase)

    def function(self) -> str:
        return CPP.function(self.k.name, self.params(), self.body())

    def call(self) -> str:
        units, work = self.units_and_work()
        return (
            f"tj_parallel({units}LL, {work}LL, [&](int64_t lo, int64_t hi) "
            f"{{ {self.k.name}(lo, hi{self.args()}); }});"
        )


__all__ = ["CPP", "INLINE_F32", "INLINE_F32_C", "BaseWriter", "Emitter", "indent"]

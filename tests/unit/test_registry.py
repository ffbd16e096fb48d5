"""The primitive registry drives everything: every primitive has every rule.

`test_every_primitive_has_every_rule` walks `PRIMITIVES`: a primitive added without a VJP,
a batching rule, or a way to run compiled (a C rendering, its own kernel in both backends, or
a declared host-only / library / loop class) fails here by name; a host primitive also needs
a CUDA implementation through CuPy's libraries or a stated reason to run on the host there. tests/backend/
test_new_primitives.py adds primitives in one entry each and runs them on every device.
"""

from __future__ import annotations

import numpy as np
import pytest
from _prims import elementwise_names

from tracejit.backend_cpu.gather import CPU_KERNELS
from tracejit.backend_cuda.gather import CUDA_KERNELS
from tracejit.batching import BATCH_RULES
from tracejit.ir.array_library import ARRAY_IMPLS
from tracejit.ir.autodiff import VJP_RULES
from tracejit.ir.c_render import C_RULES, render
from tracejit.ir.fusion import REDUCE_OPS
from tracejit.ir.index_maps import INDEX_MAPS
from tracejit.ir.primitives import (
    CREATION,
    ELEMENTWISE,
    FOLDED,
    FUSION_CLASSES,
    HOST,
    INLINE,
    KERNEL,
    PRIMITIVES,
    REDUCE,
    RESHAPE,
    TRANSCENDENTAL,
    ElementwiseRule,
)

# Host primitives (fusion class HOST) that CUDA programs run on the host, with why: every other
# one runs on the device through CuPy's libraries (an ARRAY_IMPLS entry, backend_cuda/library.py).
HOST_ON_CUDA = {
    "debug_print": "prints on the host by design: its operands are copied back, as JAX's",
    "custom_vjp_call": "never compiled: replaced by its primal graph first (expand_custom_calls)",
    **dict.fromkeys(
        ("psum", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute", "axis_index"),
        "a collective: CUDA programs run it through NCCL (distributed/nccl.py), not a library",
    ),
}

# Elementwise primitives whose operands are not one dtype of kinds (tested by name elsewhere:
# test_autodiff, test_backend_cpu, test_checkpoint, test_bitcast; the complex ones in test_complex).
OWN_OPERANDS = {"select", "convert", "bitcast_convert_type", "remat_barrier", "real", "imag"}
OWN_OPERANDS |= {"conj", "complex"}


def _registered():
    return {n: p for n, p in PRIMITIVES.items() if not n.startswith("test_")}  # tests' stand-ins


def test_every_primitive_has_every_rule():
    missing: dict[str, list[str]] = {}
    for name, prim in _registered().items():
        lacks = []
        if not (callable(prim.rule) and callable(prim.impl)):
            lacks.append("shape rule and reference implementation")
        if prim not in VJP_RULES:
            lacks.append("VJP (or a zero-derivative rule)")
        if prim not in BATCH_RULES:
            lacks.append("batching rule")
        if prim.fusion not in FUSION_CLASSES:
            lacks.append(f"fusion class (has {prim.fusion!r})")
        if prim.fusion == INLINE and prim not in C_RULES:
            lacks.append("C rendering")
        drawn = isinstance(prim.rule, ElementwiseRule) or name in OWN_OPERANDS
        if prim.kind == ELEMENTWISE and not drawn:
            lacks.append("ElementwiseRule (which the property tests draw operands from)")
        folded = prim.fusion in (FOLDED, RESHAPE) and prim.kind != CREATION  # iota: a leaf
        if folded and prim not in INDEX_MAPS:
            lacks.append("index map (ir/index_maps.py)")
        if prim.fusion == REDUCE and prim not in REDUCE_OPS:
            lacks.append("kernel accumulator (ir/fusion.py REDUCE_OPS)")
        if prim.fusion == KERNEL and not (prim in CPU_KERNELS and prim in CUDA_KERNELS):
            lacks.append("kernel in both backends")
        on_device = ARRAY_IMPLS.get(prim) is not None
        if prim.fusion == HOST and on_device == (name in HOST_ON_CUDA):
            lacks.append("CUDA implementation (ARRAY_IMPLS) or a reason in HOST_ON_CUDA, not both")
        if lacks:
            missing[name] = lacks
    assert not missing, f"primitives missing rules: {missing}"
    # a backend's kernel is the kernel of a primitive of fusion class KERNEL
    for table in (CPU_KERNELS, CUDA_KERNELS):
        assert all(p.fusion == KERNEL for p in _registered().values() if p in table)


@pytest.mark.parametrize("name", elementwise_names(1) + elementwise_names(2))
def test_cost_says_whether_the_c_rendering_calls_libm(name):
    """TRANSCENDENTAL (what fusion and the row writer read) exactly where a libm call is."""
    prim = PRIMITIVES[name]
    kinds, arity = prim.rule.kinds, prim.rule.arity
    dtype = np.dtype(np.float64 if "f" in kinds else np.int64 if "i" in kinds else np.bool_)
    out_dtype = prim.abstract_eval([((), dtype, False)] * arity, {})[0][1]
    uses: set[str] = set()
    render(prim, ["a", "b"][:arity], dtype, out_dtype, {}, uses)
    assert (prim.cost >= TRANSCENDENTAL) == bool(uses), (name, uses)

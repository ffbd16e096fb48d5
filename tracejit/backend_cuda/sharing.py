"""Which inputs of a CUDA call share memory with the outputs it writes (donation).

A CUDA function's kernels read every read-only buffer through a `const T* __restrict__`
pointer: nothing the kernel writes may then change it, or nvcc's loads through the
non-coherent cache and past the stores return stale values. Without donation that holds:
outputs are fresh arrays and temporaries never overlap an input. A call with
`donate_argnums` may pass, per output, a donated input's array to write it into
(ir/donation.py, tracer/jit_options.run_donating); `shared_pairs` lists the (input buffer,
output buffer) pairs such a call makes, by the addresses of the arrays themselves, and the
executable runs it with kernels generated for those pairs (codegen.generate's `donated`).

>>> import numpy as np
>>> from types import SimpleNamespace as NS
>>> def device(ptr, n):  # an array on the device: its address and 8-byte elements
...     return NS(__cuda_array_interface__={"data": (ptr, False), "shape": (n,),
...                                         "typestr": "<f8", "strides": None})
>>> schedule = NS(inputs=[10, 11], outputs=[20, 21])
>>> p, g = device(4096, 4), device(8192, 4)
>>> sorted(shared_pairs(schedule, [p, g], [None, device(4096, 4)]))
[(10, 21)]
>>> shared_pairs(schedule, [p, np.ones(4)], None)
frozenset()
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tracejit.devices import is_cuda_array


def _extent(x) -> tuple[int, int]:
    """[start, end) of the bytes a CUDA array (`__cuda_array_interface__`) spans."""
    cai = x.__cuda_array_interface__
    ptr, shape = cai["data"][0], tuple(cai["shape"])
    itemsize = np.dtype(cai["typestr"]).itemsize
    if any(n == 0 for n in shape):
        return ptr, ptr
    strides = cai.get("strides")
    if strides is None:
        return ptr, ptr + int(np.prod(shape, dtype=np.int64)) * itemsize
    low = sum(s * (n - 1) for s, n in zip(strides, shape) if s < 0)
    high = sum(s * (n - 1) for s, n in zip(strides, shape) if s > 0)
    return ptr + low, ptr + high + itemsize


def shared_pairs(schedule, args: Sequence, outs: Sequence | None) -> frozenset[tuple[int, int]]:
    """(input buffer id, output buffer id) for each input array of `args` whose memory
    overlaps the array `outs` gives for that output (None: a fresh one)."""
    pairs = set()
    inputs = [(b, _extent(x)) for b, x in zip(schedule.inputs, args) if is_cuda_array(x)]
    for out_id, given in zip(schedule.outputs, outs or ()):
        if given is None:
            continue
        start, end = _extent(given)
        pairs.update((b, out_id) for b, (s, e) in inputs if s < end and start < e)
    return frozenset(pairs)


__all__ = ["shared_pairs"]

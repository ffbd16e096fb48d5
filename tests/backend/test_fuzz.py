"""The differential fuzzer: random programs compiled on the test device against NumPy.

Each program (tests/_fuzz_programs.py) mixes elementwise ops of every dtype (bool, int8 to
int64, uint8 to uint64, float32/64, complex64/128), weak Python scalars, broadcasting,
reductions and scans, layout and indexing (also by traced integer arrays, dynamic_slice and
scatters), matmul, where/clip/select, sort/argsort/searchsorted/median/percentile/quantile,
fft/ifft/rfft/irfft/fft2, linalg (solve, inv, det, slogdet, cholesky, qr, eigh, svd), lax
loops (fori_loop, while_loop, scan, cond), the numerics rewrites and tj.nn functions, on
size-0 and size-1 axes, C/Fortran/strided/negative-stride inputs and NaN, +-inf, -0.0,
subnormal and extreme values. A batch of programs runs compiled on the
device under test (`TRACEJIT_TEST_DEVICE`) as one jitted function (_fuzz_batch.py), and
through the reference interpreter (device="numpy": trace, passes, NumPy per primitive); each
program's outputs are compared with NumPy running the same source: bit for bit where the
result is exact, within the stated ulp bounds elsewhere (tests/_fuzz_bounds.py). A failure
prints the shrunk program as Python source with its inputs.

Example counts: tests/_fuzz_settings.py (CI: a few batches, derandomized;
HYPOTHESIS_PROFILE=thorough: 10,000 programs; TRACEJIT_FUZZ_PROGRAMS=n overrides).
"""

from __future__ import annotations

import sys

import numpy as np
from _fuzz_batch import run_batch
from _fuzz_check import STATS, check_outputs
from _fuzz_programs import programs
from _fuzz_settings import BATCH, FORWARD_SETTINGS
from hypothesis import given
from hypothesis import strategies as st


def _describe(program, args) -> str:
    # every value printed exactly (the shortest repr that reads back), so a report replays
    with np.printoptions(floatmode="unique", threshold=sys.maxsize):
        inputs = "\n".join(
            f"v{i} = {a!r}  # strides {a.strides}" for i, a in zip(program.inputs, args)
        )
    return f"{program!r}\n{inputs}"


@FORWARD_SETTINGS
@given(batch=st.lists(programs(), min_size=1, max_size=BATCH))
def test_compiled_programs_match_numpy(batch, device):
    functions = [p.traced() for p, _ in batch]
    arg_lists = [args for _, args in batch]
    compiled = run_batch(functions, arg_lists, device)
    reference = run_batch(functions, arg_lists, "numpy")
    problems = []
    for (program, args), got, ref in zip(batch, compiled, reference):
        if got is None or ref is None:
            continue
        wants = program.shadows(args)
        found = check_outputs(got, wants, f"compiled ({device}) vs NumPy")
        found += check_outputs(ref, wants, "reference interpreter vs NumPy")
        STATS[f"programs on {device}"] += 1
        STATS[f"mismatching programs on {device}"] += bool(found)
        if found:
            problems.append("\n".join([_describe(program, args), *found]))
    assert not problems, "\n\n".join(problems)

"""The differential fuzzer: random programs compiled on the test device against NumPy.

Each example is one random program (tests/_fuzz_programs.py: elementwise ops of every
dtype, weak Python scalars, broadcasting, reductions, layout and indexing, matmul, where,
the numerics rewrites and tj.nn functions; size-0 and size-1 axes; Fortran, strided and
negative-stride inputs; NaN, +-inf, -0.0, subnormals and extremes). It runs compiled on the
device under test (`TRACEJIT_TEST_DEVICE`) and through the reference interpreter
(device="numpy": trace, passes, NumPy per primitive), and both are compared with NumPy
running the same source: bit for bit where the result is exact, within the stated ulp bounds
elsewhere (tests/_fuzz_bounds.py). A failure prints the shrunk program as Python source.

Example counts: tests/_fuzz_settings.py (CI: a few, derandomized; HYPOTHESIS_PROFILE=thorough:
10,000; TRACEJIT_FUZZ_PROGRAMS=n overrides).
"""

from __future__ import annotations

from _fuzz_check import STATS, check_outputs
from _fuzz_programs import programs
from _fuzz_settings import FORWARD_SETTINGS
from hypothesis import given, reject

import tracejit as tj
from tracejit.errors import TracejitError


def run_compiled(program, args, device):
    try:
        return tj.device_get(tj.jit(program.traced(), device=device)(*args))
    except TracejitError as e:  # a named refusal is not a wrong result: counted, not compared
        STATS[f"refused on {device}: {type(e).__name__}: {str(e)[:50]}"] += 1
        reject()


@FORWARD_SETTINGS
@given(case=programs())
def test_compiled_program_matches_numpy(case, device):
    program, args = case
    wants = program.shadows(args)
    compiled = run_compiled(program, args, device)
    reference = run_compiled(program, args, "numpy")
    problems = check_outputs(compiled, wants, f"compiled ({device}) vs NumPy")
    problems += check_outputs(reference, wants, "reference interpreter vs NumPy")
    STATS[f"programs on {device}"] += 1
    STATS[f"mismatching programs on {device}"] += bool(problems)
    assert not problems, "\n".join([repr(program), *problems])

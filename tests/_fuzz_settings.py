"""How many programs the fuzzer runs: a few in CI, 10,000 (2,000 gradient programs) in the
thorough profile; TRACEJIT_FUZZ_PROGRAMS / TRACEJIT_FUZZ_GRAD_PROGRAMS override.

Programs run in batches of 1..BATCH (one compile per batch, _fuzz_batch.py), BATCH / 2 per
example on average, so a count of n programs is n / (BATCH / 2) examples; the tests count the
programs they actually checked in _fuzz_check.STATS (TRACEJIT_FUZZ_STATS=path writes them).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
BATCH = 8
# (forward programs, gradient programs) per profile. CI: the fuzzer's share of the suite stays
# near 15 s on a busy 2-core machine (the forward half also runs under the CUDA emulator).
COUNTS = {"ci": (16, 12), "dev": (40, 16), "thorough": (10_000, 2_000)}
FORWARD, GRADIENT = COUNTS.get(PROFILE, COUNTS["dev"])
FORWARD = int(os.environ.get("TRACEJIT_FUZZ_PROGRAMS", FORWARD))
GRADIENT = int(os.environ.get("TRACEJIT_FUZZ_GRAD_PROGRAMS", GRADIENT))

# The device fixture is function scoped but returns a constant: no state leaks between examples.
_COMMON = {
    "deadline": None,
    "suppress_health_check": [
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
}
FORWARD_SETTINGS = settings(max_examples=max(1, FORWARD * 2 // BATCH), **_COMMON)
GRADIENT_SETTINGS = settings(max_examples=max(1, GRADIENT * 2 // BATCH), **_COMMON)

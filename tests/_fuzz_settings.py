"""How many programs the fuzzer runs: a few in CI, 10,000 (2,000 gradient programs) in the
thorough profile; TRACEJIT_FUZZ_PROGRAMS / TRACEJIT_FUZZ_GRAD_PROGRAMS override."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
# (forward programs, gradient programs) per profile. CI: ~1 s of compiling per program on a
# busy 2-core machine, so these keep the fuzzer's share of the suite near 15 s.
COUNTS = {"ci": (15, 8), "dev": (20, 8), "thorough": (10_000, 2_000)}
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
FORWARD_SETTINGS = settings(max_examples=FORWARD, **_COMMON)
GRADIENT_SETTINGS = settings(max_examples=GRADIENT, **_COMMON)

"""Test setup: hypothesis profiles, shared helpers, the devices under test.

Layout by hardware need: tests/unit needs no C++ compiler, tests/backend compiles (its tests
that take the `device` fixture run once per device under test), tests/gpu needs a CUDA device
(a GPU, or the CUDA emulator that the root conftest.py installs on machines without CuPy).
"""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import tracejit as tj

# The shared helpers (tests/_*.py) import as top-level modules from every folder.
HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from _devices import TEST_DEVICES, device_id

# The CUDA emulator's stand-in `cupy` package is test tooling, not tests or doctests.
collect_ignore = ["cuda_emulator"]

# "ci" keeps the whole suite under ~10 minutes on 2 cores; "thorough" runs many more examples
# (the fuzzer's program counts per profile: tests/_fuzz_settings.py; 10,000 in "thorough").
# "ci" is derandomized: a CI verdict must not depend on the draw (explore with "thorough").
settings.register_profile(
    "ci",
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.register_profile(
    "thorough", max_examples=300, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# The cache directory, graph verification and the CUDA emulator are set in the root conftest.py.


@pytest.fixture(scope="module", params=TEST_DEVICES, ids=device_id)
def device(request):
    """Each device under test in turn: the tests that take it run once per device."""
    if request.param == "cuda" and not tj.devices.cuda_available():
        pytest.skip("TRACEJIT_TEST_DEVICE=cuda but CuPy or a CUDA GPU is missing")
    return request.param


@pytest.fixture
def without_cupy(monkeypatch):
    """CuPy made unimportable for one test: the missing-GPU errors on any machine."""
    from tracejit import devices

    monkeypatch.setitem(sys.modules, "cupy", None)
    devices._cupy_status.cache_clear()
    yield
    monkeypatch.undo()
    devices._cupy_status.cache_clear()

"""Test setup: hypothesis profiles, graph verification on, device under test."""

import os

import pytest
from hypothesis import HealthCheck, settings

import tracejit as tj

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

# The cache directory and graph verification are set in the root conftest.py.

# TRACEJIT_TEST_DEVICE=cuda runs the device-parametrized tests on the GPU.
TEST_DEVICE = os.environ.get("TRACEJIT_TEST_DEVICE", "cpu")


@pytest.fixture
def device():
    if TEST_DEVICE == "cuda" and not tj.devices.cuda_available():
        pytest.skip("TRACEJIT_TEST_DEVICE=cuda but CuPy or a CUDA GPU is missing")
    return TEST_DEVICE

"""The devices under test: shared by conftest.py and the emulator's own checks."""

from __future__ import annotations

import os
import sys

import tracejit as tj


def devices_under_test() -> list[str]:
    """TRACEJIT_TEST_DEVICE (comma-separated), else cpu, and cuda where it is usable."""
    named = os.environ.get("TRACEJIT_TEST_DEVICE")
    if named:
        return [name.strip() for name in named.split(",") if name.strip()]
    return ["cpu", "cuda"] if tj.devices.cuda_available() else ["cpu"]


TEST_DEVICES = devices_under_test()
# Whether `cupy` is tests/cuda_emulator's stand-in (put on the path by the root conftest.py).
EMULATED = tj.devices.cuda_available() and bool(getattr(sys.modules.get("cupy"), "EMULATED", False))


def device_id(name: str) -> str:
    return "cuda-emulator" if name == "cuda" and EMULATED else name

"""The CUDA backend's kernels run on the CPU in CI: the GPU test files under the emulator.

`tests/cuda_emulator` stands in for CuPy: NVRTC becomes g++, kernels run with every CUDA
thread as a coroutine (shuffles, `__syncthreads` and shared memory as on the GPU), cuBLAS is
NumPy's matmul. So the launcher, the memory plan and every generated kernel are checked
against the NumPy reference interpreter on machines without a GPU. The same files run on a
real GPU in `benchmarks/gpu_check.sh`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The CUDA test files and every test that takes the `device` fixture.
CUDA_TESTS = [
    "tests/_emulator_selftest.py",
    "tests/test_backend_cuda_gpu.py",
    "tests/test_backend_cuda.py",
    "tests/test_cuda_graphs.py",
    "tests/test_tnp_reductions.py::test_reductions_compile_for_the_test_device",
    "tests/test_tnp_creation_linalg.py::test_creation_and_products_compile_for_the_test_device",
    "tests/test_passes_numerics.py::test_naive_log_softmax_of_large_logits_is_finite",
    "tests/test_debug.py::test_debug_nans_on_the_test_device",
    "tests/test_tnp_shape.py::test_compiled_layout_matches_numpy",
    "tests/test_device_grads.py",
    # the device tests of test_numerics_ieee.py (its cpu-only ones run in the normal suite)
    "tests/test_numerics_ieee.py::test_no_contraction_of_multiply_add",
    "tests/test_numerics_ieee.py::test_every_nan_pattern_stays_nan",
    "tests/test_numerics_ieee.py::test_softmax_of_a_row_with_nan_is_nan",
    "tests/test_numerics_ieee.py::test_float_floor_division_and_remainder_follow_numpy",
    "tests/test_numerics_ieee.py::test_zero_and_negative_zero_literals_stay_distinct",
    "tests/test_numerics_ieee.py::test_sigmoid_and_log_sigmoid_are_accurate_for_large_negative_x",
    "tests/test_numerics_ieee.py::test_sigmoid_gradients_are_finite_and_match_finite_differences",
    "tests/test_numerics_ieee.py::test_power_special_cases_match_numpy_at_every_position",
    "tests/test_numerics_ieee.py::test_math_functions_do_not_depend_on_the_elements_position",
    "tests/test_numerics_ieee.py::test_compiled_gradient_of_max_of_cos_is_a_one_hot",
    "tests/test_numerics_ieee.py::test_division_by_a_row_sum_is_a_division",
    "tests/test_numerics_ieee.py::test_negative_zero_survives_adds_and_scatters",
    "tests/test_numerics_ieee.py::test_float32_sums_and_means_are_correctly_rounded",
    "tests/test_numerics_ieee.py::test_signed_integer_overflow_wraps_as_numpy",
    "tests/test_fuzz.py",  # the forward fuzzer; its gradient half runs on cpu only in CI
    "tests/test_lax_compiled.py::test_loops_on_the_test_device",
    "tests/test_tnp_surface.py::test_compiled_matches_numpy",
    "tests/test_tnp_first_hour.py",
    "tests/test_vmap.py::test_batched_programs_compile_for_the_test_device",
    "tests/test_transforms_extra.py::test_debug_print_prints_runtime_values_inside_jit",
    "tests/test_random_samplers.py::test_same_key_same_numbers_under_jit",
    "tests/test_jvp_while.py::test_jvp_through_while_loop_with_a_data_dependent_trip_count",
    "tests/test_registry.py::test_new_elementwise_primitive_is_one_entry",
    "tests/test_registry.py::test_new_elementwise_primitive_differentiates",
]


@pytest.mark.skipif(shutil.which("g++") is None, reason="the CUDA emulator compiles with g++")
def test_cuda_test_files_pass_in_the_emulator(tmp_path):
    env = dict(
        os.environ,
        TRACEJIT_CUDA_EMULATOR="1",
        TRACEJIT_TEST_DEVICE="cuda",
        TRACEJIT_CACHE_DIR=str(tmp_path),
    )
    cmd = [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", *CUDA_TESTS]
    done = subprocess.run(
        cmd, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    report = done.stdout[-8000:] + done.stderr[-2000:]
    assert done.returncode == 0, report
    assert "needs CuPy and a CUDA GPU" not in done.stdout, report  # they ran, not skipped
    passed = int(re.search(r"(\d+) passed", done.stdout).group(1))
    assert passed >= 65, report

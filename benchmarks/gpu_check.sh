#!/usr/bin/env bash
# The prepared GPU check (issue 6): install, GPU tests, GPU benchmarks, then the whole suite.
# Runs in about 6 minutes on one H100/H200 with 16 cores and no network (FUZZ_S=0 skips the
# fuzz step, SUITE_BUDGET=0 the whole suite, BENCH=0 the benchmarks; EXTRA_TESTS="paths" runs
# those tests on cuda too, PROBE=0 skips benchmarks/gpu_probe.py, SWEEP=1 adds issue 12's
# sizes, `gpu_bench.py --only sweep`: about 80 s on an H100). Results (test logs,
# gpu_bench.json) go to $OUT when set, else benchmarks/results/.
#
#   bash benchmarks/gpu_check.sh            # from the repository root
#
# If pytest/hypothesis are missing on that machine, put their wheels in benchmarks/wheels/
# (pip download --only-binary=:all: --python-version 3.12 -d benchmarks/wheels pytest hypothesis
#  pytest-xdist execnet)
# and the runtime dependencies it may lack (platformdirs, scipy-openblas32, ml_dtypes,
# optree and its typing-extensions; filelock for a cache test: pip download --only-binary=:all: --python-version 3.12 ...)
# and they are installed from there.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${OUT:-benchmarks/results}"
mkdir -p "$out"
t0=$SECONDS
step() { echo; echo "== $1 ($((SECONDS - t0)) s)"; }

step "machine"
# that machine's python may be called python3 only
command -v python >/dev/null || { mkdir -p /tmp/pybin && ln -sf "$(command -v python3)" /tmp/pybin/python && export PATH="/tmp/pybin:$PATH"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
python -c "import sys, numpy, cupy; print(sys.version.split()[0], 'numpy', numpy.__version__,
'cupy', cupy.__version__, 'cuda runtime', cupy.cuda.runtime.runtimeGetVersion())"

step "install (no network)"
python -c "import scikit_build_core, pybind11; print('scikit-build-core', scikit_build_core.__version__)" || true
if [ -d benchmarks/wheels ]; then  # pure-Python runtime deps the offline machine may lack
  python -m pip install --no-index --find-links benchmarks/wheels -q filelock platformdirs scipy-openblas32 ml_dtypes optree typing-extensions 2>&1 | tail -2
fi
python -m pip install --no-build-isolation --no-deps -e . -q 2>&1 | grep -v -i "warning" | tail -15
if ! python -c "import tracejit._core" 2>/dev/null; then
  # pip could not build (e.g. its build backend is not importable there): build the module
  # with CMake directly and import the package from the source tree.
  echo "pip install failed; building tracejit._core with CMake"
  cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$(command -v python)" \
    -Dpybind11_DIR="$(python -m pybind11 --cmakedir)" -DSKBUILD_PROJECT_VERSION=0.1.0 >/dev/null &&
    cmake --build build/gpu >/dev/null && cp build/gpu/_core*.so tracejit/
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
python -c "import tracejit, tracejit._core; print('tracejit imports, C++ runtime built')" ||
  echo "INSTALL FAILED: the CPU backend will be unavailable"
if ! python -c "import pytest, hypothesis, xdist" 2>/dev/null && [ -d benchmarks/wheels ]; then
  python -m pip install --no-index --find-links benchmarks/wheels -q pytest hypothesis \
    pytest-xdist 2>&1 | tail -2
fi
have_pytest=1
# pyproject's addopts has `-n auto`, so pytest needs pytest-xdist
python -c "import pytest, hypothesis, xdist" 2>/dev/null ||
  { have_pytest=0; echo "NO pytest/hypothesis/pytest-xdist: tests skipped"; }

export HYPOTHESIS_PROFILE=ci TRACEJIT_TEST_DEVICE=cuda
TRACEJIT_CACHE_DIR="$(mktemp -d)"
export TRACEJIT_CACHE_DIR
pytest_args=(-q -rs -p no:cacheprovider -n "${SUITE_WORKERS:-8}")

if [ "$have_pytest" = 1 ]; then
  step "GPU tests: the CUDA backend and every device-fixture test on cuda"
  # tests/gpu, and in tests/backend the CUDA backend's file and every `device` test ([cuda])
  timeout 240 python -m pytest "${pytest_args[@]}" tests/gpu tests/backend -k cuda \
    >"$out/gpu_tests.txt" 2>&1
  echo "exit $?"; tail -n 40 "$out/gpu_tests.txt"
fi

if [ "$have_pytest" = 1 ] && [ -n "${EXTRA_TESTS:-}" ]; then
  step "more tests on cuda: $EXTRA_TESTS"
  # shellcheck disable=SC2086  # a list of paths
  timeout 180 python -m pytest "${pytest_args[@]}" $EXTRA_TESTS >"$out/extra_tests.txt" 2>&1
  echo "exit $?"; tail -n 30 "$out/extra_tests.txt"
fi

if [ "${BENCH:-1}" != 0 ]; then
  step "GPU benchmarks"
  timeout 230 python benchmarks/gpu_bench.py --json "$out/gpu_bench.json" --budget 180 \
    >"$out/gpu_bench.txt" 2>&1
  echo "exit $?"; tail -n 30 "$out/gpu_bench.txt"
fi

if [ "${SWEEP:-0}" = 1 ]; then  # issue 12's sizes (n = 1024..4096): a few minutes more
  step "GPU benchmark sweep (gpu_bench.py --only sweep)"
  timeout 300 python benchmarks/gpu_bench.py --only sweep --json "$out/gpu_sweep.json" \
    --budget 240 >"$out/gpu_sweep.txt" 2>&1
  echo "exit $?"; grep -v "Warning\|warn" "$out/gpu_sweep.txt" | tail -n 25
fi

if [ "${PROBE:-1}" = 1 ]; then
  step "probes (benchmarks/gpu_probe.py)"
  timeout 150 python benchmarks/gpu_probe.py >"$out/gpu_probe.txt" 2>&1
  echo "exit $?"; cat "$out/gpu_probe.txt"
fi

if [ "$have_pytest" = 1 ] && [ "${FUZZ_S:-60}" != 0 ]; then
  # the differential fuzzer on the card: the emulator runs kernels through g++, so what only
  # NVRTC rejects or only ptxas miscompiles shows here (the eighth session found both)
  step "fuzz on the card (${FUZZ_S:-60} s, 8 forward + 4 gradient processes)"
  for k in 1 2 3 4 5 6 7 8; do
    FUZZ_DUMP_EVERY=5 OMP_NUM_THREADS=1 timeout "${FUZZ_S:-60}" python tests/_fuzz_campaign.py \
      forward 100000 cuda "/tmp/tj_ff$k" >/dev/null 2>&1 &
  done
  for k in 1 2 3 4; do
    FUZZ_DUMP_EVERY=5 OMP_NUM_THREADS=1 timeout "${FUZZ_S:-60}" python tests/_fuzz_campaign.py \
      gradient 100000 cuda "/tmp/tj_fg$k" >/dev/null 2>&1 &
  done
  wait
  cat /tmp/tj_ff*.log >"$out/fuzz_forward.log" 2>/dev/null
  cat /tmp/tj_fg*.log >"$out/fuzz_gradient.log" 2>/dev/null
  for kind in forward gradient; do
    echo "$kind: $(grep -c '=== MISMATCH' "$out/fuzz_$kind.log" 2>/dev/null) mismatches," \
      "$(grep -c '=== ERROR' "$out/fuzz_$kind.log" 2>/dev/null) errors"
  done
  cat /tmp/tj_f[fg]*.json 2>/dev/null | grep -o '"[a-z ]*programs on cuda": [0-9]*' | sort | uniq -c
fi

if [ "$have_pytest" = 1 ] && [ "${SUITE_BUDGET:-470}" != 0 ]; then
  left=$((${SUITE_BUDGET:-470} - (SECONDS - t0)))
  [ "$left" -lt 30 ] && left=30  # timeout 0 would mean no limit
  step "whole suite with TRACEJIT_TEST_DEVICE=cuda (timeout ${left} s)"
  timeout "$left" python -m pytest "${pytest_args[@]}" >"$out/suite.txt" 2>&1
  code=$?
  tail -n 25 "$out/suite.txt"
  [ "$code" = 124 ] && echo "suite: TIMED OUT after ${left} s (partial results above)"
  echo "suite exit $code"
fi
step "done"

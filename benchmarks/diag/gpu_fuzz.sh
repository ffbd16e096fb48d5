#!/usr/bin/env bash
# One device call: a fuzz campaign on the card (forward and gradient programs, NVRTC rejections
# recorded as errors), the tests the eighth session fixed, and W1/W2. Carry benchmarks/wheels.
command -v python >/dev/null || { mkdir -p /tmp/pybin && ln -sf "$(command -v python3)" /tmp/pybin/python && export PATH="/tmp/pybin:$PATH"; }
nvidia-smi --query-gpu=name --format=csv,noheader
python -m pip install --no-index --find-links benchmarks/wheels -q filelock platformdirs scipy-openblas32 2>&1 | tail -2
python -m pip install --no-build-isolation --no-deps -e . -q 2>&1 | grep -v -i warning | tail -5
export TRACEJIT_CACHE_DIR=$(mktemp -d) PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 FUZZ_DUMP_EVERY=5
for k in 1 2 3 4 5 6 7 8; do
  timeout "${FUZZ_S:-75}" python tests/_fuzz_campaign.py forward 100000 cuda /tmp/ff$k >/dev/null 2>&1 &
done
for k in 1 2 3 4; do
  timeout "${FUZZ_S:-75}" python tests/_fuzz_campaign.py gradient 100000 cuda /tmp/fg$k >/dev/null 2>&1 &
done
TRACEJIT_TEST_DEVICE=cuda timeout 70 python -m pytest -q -p no:cacheprovider -n 3 tests/backend/test_pow_scalar_exponent.py tests/backend/test_complex.py tests/backend/test_linalg_complex.py 2>&1 | tail -8
wait
cat /tmp/ff*.log > "$OUT/fuzz_forward.log" 2>/dev/null
cat /tmp/fg*.log > "$OUT/fuzz_gradient.log" 2>/dev/null
cat /tmp/ff*.json /tmp/fg*.json > "$OUT/fuzz.json" 2>/dev/null
echo "forward: $(grep -c '=== MISMATCH' "$OUT/fuzz_forward.log") mismatches, $(grep -c '=== ERROR' "$OUT/fuzz_forward.log") errors"
echo "gradient: $(grep -c '=== MISMATCH' "$OUT/fuzz_gradient.log") mismatches, $(grep -c '=== ERROR' "$OUT/fuzz_gradient.log") errors"
grep -h '"batches"\|programs on cuda' /tmp/ff*.json /tmp/fg*.json | tr -d ' ' | paste -sd' '
timeout 60 python benchmarks/gpu_bench.py --only w1,w2 --json "$OUT/w12.json" --budget 40 2>&1 | grep -v -i warn | tail -6

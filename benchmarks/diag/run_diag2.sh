#!/usr/bin/env bash
# one device call: install, k14 compiled in variants, then a fuzz campaign on the card
command -v python >/dev/null || { mkdir -p /tmp/pybin && ln -sf "$(command -v python3)" /tmp/pybin/python && export PATH="/tmp/pybin:$PATH"; }
python -m pip install --no-index --find-links benchmarks/wheels -q filelock platformdirs scipy-openblas32 2>&1 | tail -2
python -m pip install --no-build-isolation --no-deps -e . -q 2>&1 | grep -v -i warning | tail -5
export TRACEJIT_CACHE_DIR=$(mktemp -d) PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 FUZZ_DUMP_EVERY=5
timeout 60 python benchmarks/diag/k14_variants.py 2>&1 | grep -v Warning
echo "== fuzz on the card (${FUZZ_S:-110} s, 6 forward + 6 gradient processes)"
for k in 1 2 3 4 5 6; do
  timeout "${FUZZ_S:-110}" python tests/_fuzz_campaign.py forward 100000 cuda /tmp/ff$k >/dev/null 2>&1 &
  timeout "${FUZZ_S:-110}" python tests/_fuzz_campaign.py gradient 100000 cuda /tmp/fg$k >/dev/null 2>&1 &
done
wait
cat /tmp/ff*.log > "$OUT/fuzz_forward.log" 2>/dev/null
cat /tmp/fg*.log > "$OUT/fuzz_gradient.log" 2>/dev/null
for f in /tmp/ff*.json /tmp/fg*.json; do [ -f "$f" ] && echo "$f $(tr -d '\n ' < "$f" | head -c 300)"; done
echo "forward mismatches: $(grep -c '=== MISMATCH' "$OUT/fuzz_forward.log" 2>/dev/null), errors: $(grep -c '=== ERROR' "$OUT/fuzz_forward.log" 2>/dev/null)"
echo "gradient mismatches: $(grep -c '=== MISMATCH' "$OUT/fuzz_gradient.log" 2>/dev/null), errors: $(grep -c '=== ERROR' "$OUT/fuzz_gradient.log" 2>/dev/null)"

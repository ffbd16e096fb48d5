#!/usr/bin/env bash
# one device call: install, the var-gradient diagnosis, memcheck, the failing tests
command -v python >/dev/null || { mkdir -p /tmp/pybin && ln -sf "$(command -v python3)" /tmp/pybin/python && export PATH="/tmp/pybin:$PATH"; }
python -m pip install --no-index --find-links benchmarks/wheels -q filelock platformdirs scipy-openblas32 2>&1 | tail -2
python -m pip install --no-build-isolation --no-deps -e . -q 2>&1 | grep -v -i warning | tail -5
export TRACEJIT_CACHE_DIR=$(mktemp -d) PYTHONUNBUFFERED=1
python -c "
import numpy as np
h = np.array([[4, 1+1j], [1-1j, 3]])
u, l = np.linalg.cholesky(h, upper=True), np.linalg.cholesky(h)
print(np.__version__, repr(u), repr(np.conj(l).T), np.array_equal(u, np.conj(l).T), np.signbit(u.imag))"
timeout 120 python benchmarks/diag/var_grad_gpu.py 2>&1 | grep -v Warning
echo "== memcheck"
timeout 70 compute-sanitizer --tool memcheck --print-limit 20 python -c "
import sys; sys.path[:0]=['tests','tests/backend']
import numpy as np, tracejit as tj, tracejit.numpy as tnp
from test_complex import LOSSES, _pair
z=_pair(np.complex128,(5,),seed=9)
got=tj.jit(lambda z: {n: tj.grad(lambda z, fn=fn: fn(tnp, z))(z) for n, fn in LOSSES.items()}, device='cuda')(z)
print(tj.device_get(got['var']))" 2>&1 | tail -30
echo "== tests"
TRACEJIT_TEST_DEVICE=cuda timeout 90 python -m pytest -q -p no:cacheprovider -n 4 tests/backend/test_pow_scalar_exponent.py tests/backend/test_linalg_complex.py tests/backend/test_complex.py "$@" 2>&1 | tail -30

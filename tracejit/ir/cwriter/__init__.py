"""The C-family kernel writer shared by the C++ (CPU) and CUDA backends.

- `dialect`: how a backend writes C: builtins, special values, libm names, parameters, the
  qualifiers of kernels and helpers, loop counter types, and a parallel loop over units.
- `emit`: the one expression emitter (a loop body's statements, in a dialect).
- `reduce`: reduction semantics (accumulator types, identities, NaN-propagating max/min,
  first-index argmax/argmin, the TwoSum step of compensated float64 sums).
- `library`: the C helpers every generated unit may call (index clamping, NumPy's wrapping
  add, argmax across threads, Threefry), written once with the backend's `TJ_FN`.
- `fast_tanh`: the inline float32 tanh both backends compile (the same bits on cpu and cuda).

The backends keep only what differs: their loop and thread structure (row, column and split
reductions in C++; thread groups with shuffles and shared memory in CUDA), and how they launch.
"""

// The CUDA emulator's device runtime: generated CUDA C compiled by g++ for the host.
//
// Included (g++ -include) ahead of a tracejit CUDA source. Every CUDA thread of a block is a
// coroutine (ucontext) on its own small stack; blocks run one after another. A thread runs
// until it reaches a barrier: __syncthreads waits for every live thread of the block, a warp
// shuffle (and __syncwarp) waits for the lanes its mask names. So shuffles and shared memory
// behave as on the GPU, and a kernel that waits on an exited lane, or never reaches a barrier
// the others wait at, is reported (an error) instead of hanging. Odd blocks schedule their
// threads in reverse order, so a result that depends on an unsynchronized order differs
// between blocks. Memory accesses are plain host loads and stores: the emulator checks what
// the kernels compute, not how fast.
#pragma once
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <cmath>
#include <cstdint>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
// Blocks run one at a time on one host thread, so one static array per kernel is the block's.
#define __shared__ static thread_local

struct tjemu_dim3 {
  unsigned x, y, z;
};
typedef tjemu_dim3 dim3;
typedef tjemu_dim3 uint3;

namespace tjemu {

constexpr int kMaxThreads = 1024;
constexpr size_t kStack = 128 * 1024;
enum State { RUNNABLE, AT_WARP, AT_BLOCK, DONE };

struct Thread {
  ucontext_t ctx;
  uint3 idx;
  int linear;
  State state;
  unsigned mask;  // the lanes a warp barrier waits for
};

struct Launch {
  uint3 block_idx, block_dim, grid_dim;
  ucontext_t sched;
  Thread threads[kMaxThreads];
  char* stacks = nullptr;
  int n = 0, live = 0, at_block = 0;
  int at_warp[kMaxThreads / 32];
  uint64_t slot[kMaxThreads];  // one value per lane for shuffles
  Thread* cur = nullptr;
  void (*body)(const uint64_t*) = nullptr;
  const uint64_t* args = nullptr;
  char error[512];
  bool failed = false;
};

inline thread_local Launch* L = nullptr;

inline void fail(const char* what) {
  if (!L->failed) {
    snprintf(L->error, sizeof L->error, "%s (block %u,%u,%u thread %u,%u,%u)", what,
             L->block_idx.x, L->block_idx.y, L->block_idx.z, L->cur->idx.x, L->cur->idx.y,
             L->cur->idx.z);
    L->failed = true;
  }
}

inline void yield() { swapcontext(&L->cur->ctx, &L->sched); }

inline void release_block() {
  for (int i = 0; i < L->n; ++i)
    if (L->threads[i].state == AT_BLOCK) L->threads[i].state = RUNNABLE;
  L->at_block = 0;
}

inline int warp_size(int warp) {
  int rest = L->n - warp * 32;
  return rest < 32 ? rest : 32;
}

// The lanes of `warp` named by `mask` that exist; fails if one of them has exited.
inline unsigned warp_members(int warp, unsigned mask) {
  int size = warp_size(warp);
  unsigned exist = size == 32 ? 0xffffffffu : ((1u << size) - 1u);
  unsigned want = mask & exist;
  for (int lane = 0; lane < size; ++lane)
    if ((want >> lane & 1u) && L->threads[warp * 32 + lane].state == DONE)
      fail("a warp-synchronous operation names a lane that has exited");
  return want;
}

inline void try_release_warp(int warp, unsigned want) {
  int arrived = 0;
  for (int lane = 0; lane < warp_size(warp); ++lane) {
    Thread& t = L->threads[warp * 32 + lane];
    if ((want >> lane & 1u) && t.state == AT_WARP && t.mask == L->cur->mask) ++arrived;
  }
  if (arrived == __builtin_popcount(want)) {
    for (int lane = 0; lane < warp_size(warp); ++lane) {
      Thread& t = L->threads[warp * 32 + lane];
      if ((want >> lane & 1u) && t.state == AT_WARP) t.state = RUNNABLE;
    }
  }
}

inline void warp_barrier(unsigned mask) {
  Thread& t = *L->cur;
  int warp = t.linear / 32;
  unsigned want = warp_members(warp, mask);
  if (!(want >> (t.linear % 32) & 1u)) fail("a warp-synchronous operation's mask leaves out the calling lane");
  t.state = AT_WARP;
  t.mask = mask;
  try_release_warp(warp, want);
  while (t.state != RUNNABLE && !L->failed) yield();
  t.state = RUNNABLE;
}

inline void block_barrier() {
  Thread& t = *L->cur;
  t.state = AT_BLOCK;
  if (++L->at_block == L->live) release_block();
  while (t.state != RUNNABLE && !L->failed) yield();
  t.state = RUNNABLE;
}

inline void entry() {
  L->body(L->args);
  Thread& t = *L->cur;
  t.state = DONE;
  --L->live;
  if (L->at_block > 0 && L->at_block == L->live) release_block();
  // setcontext back to the scheduler: uc_link does the same, stated here for clarity.
  setcontext(&L->sched);
}

template <class T>
inline T exchange(T v, unsigned mask, int src_lane, bool own) {
  Thread& t = *L->cur;
  int warp = t.linear / 32, lane = t.linear % 32;
  uint64_t bits = 0;
  memcpy(&bits, &v, sizeof(T));
  L->slot[t.linear] = bits;
  warp_barrier(mask);
  T out = v;
  if (!own) {
    if (src_lane >= warp_size(warp) || !(mask >> src_lane & 1u))
      fail("a shuffle reads a lane outside its mask");
    memcpy(&out, &L->slot[warp * 32 + src_lane], sizeof(T));
  }
  (void)lane;
  warp_barrier(mask);  // nobody overwrites a slot before every lane has read
  return out;
}

// The workspace a launch runs in (one per host thread, from cupy/_module.py, shared by every
// kernel library): the Launch record, then kMaxThreads stacks with a guard page under each.
constexpr size_t kRecord = 4 << 20;
constexpr size_t kWorkspace = kRecord + kStack * kMaxThreads;
static_assert(sizeof(Launch) <= kRecord, "the launch record outgrew its workspace slot");

// Runs `body` over the grid; returns 0, or 1 with the reason in `error`.
inline int run(void (*body)(const uint64_t*), const uint64_t* args, const unsigned* grid,
               const unsigned* block, char* workspace, char* error, size_t error_len) {
  Launch* state = reinterpret_cast<Launch*>(workspace);
  state->stacks = workspace + kRecord;
  L = state;
  L->failed = false;
  L->body = body;
  L->args = args;
  L->grid_dim = {grid[0], grid[1], grid[2]};
  L->block_dim = {block[0], block[1], block[2]};
  long n = (long)block[0] * block[1] * block[2];
  if (n <= 0 || n > kMaxThreads) {
    snprintf(error, error_len, "block of %ld threads: CUDA allows 1 to %d", n, kMaxThreads);
    return 1;
  }
  L->n = (int)n;
  for (unsigned bz = 0; bz < grid[2] && !L->failed; ++bz)
    for (unsigned by = 0; by < grid[1] && !L->failed; ++by)
      for (unsigned bx = 0; bx < grid[0] && !L->failed; ++bx) {
        L->block_idx = {bx, by, bz};
        L->live = L->n;
        L->at_block = 0;
        for (int i = 0; i < L->n; ++i) {
          Thread& t = L->threads[i];
          t.linear = i;
          t.idx = {(unsigned)(i % block[0]), (unsigned)(i / block[0] % block[1]),
                   (unsigned)(i / (block[0] * block[1]))};
          t.state = RUNNABLE;
          getcontext(&t.ctx);
          t.ctx.uc_stack.ss_sp = L->stacks + i * kStack + 4096;  // above the guard page
          t.ctx.uc_stack.ss_size = kStack - 4096;
          t.ctx.uc_link = &L->sched;
          makecontext(&t.ctx, entry, 0);
        }
        // Odd blocks run their threads last to first: a kernel whose result depends on
        // the order threads run in between barriers (a race) gives different answers.
        // TJEMU_REVERSE=1 runs every block's threads last to first (block 0's too).
        static const bool all_reverse = getenv("TJEMU_REVERSE") && getenv("TJEMU_REVERSE")[0] == '1';
        const bool reverse = all_reverse || ((bz * grid[1] + by) * grid[0] + bx) % 2 == 1;
        while (L->live > 0 && !L->failed) {
          bool ran = false;
          for (int k = 0; k < L->n && !L->failed; ++k) {
            Thread& t = L->threads[reverse ? L->n - 1 - k : k];
            if (t.state != RUNNABLE) continue;
            L->cur = &t;
            ran = true;
            swapcontext(&L->sched, &t.ctx);
          }
          if (!ran && !L->failed) {
            L->cur = &L->threads[0];
            fail(L->at_block > 0 ? "deadlock: threads wait at __syncthreads while others wait at a warp barrier"
                                 : "deadlock: every live thread waits at a warp barrier that cannot complete");
          }
        }
      }
  if (L->failed) {
    snprintf(error, error_len, "%s", L->error);
    return 1;
  }
  return 0;
}

template <class... A, size_t... I>
inline void call(void (*f)(A...), const uint64_t* args, std::index_sequence<I...>) {
  f(((A)(uintptr_t)args[I])...);
}

}  // namespace tjemu

#define threadIdx (tjemu::L->cur->idx)
#define blockIdx (tjemu::L->block_idx)
#define blockDim (tjemu::L->block_dim)
#define gridDim (tjemu::L->grid_dim)

static inline void __syncthreads() { tjemu::block_barrier(); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { tjemu::warp_barrier(mask); }

template <class T>
static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  int lane = tjemu::L->cur->linear % 32;
  int src = lane ^ lane_mask;
  return tjemu::exchange(v, mask, src, src / width > lane / width);
}
template <class T>
static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  int lane = tjemu::L->cur->linear % 32;
  int src = lane + (int)delta;
  return tjemu::exchange(v, mask, src, src >= (lane / width + 1) * width);
}
template <class T>
static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  int lane = tjemu::L->cur->linear % 32;
  int src = lane - (int)delta;
  return tjemu::exchange(v, mask, src, src < (lane / width) * width);
}
template <class T>
static inline T __shfl_sync(unsigned mask, T v, int src_lane, int width = 32) {
  int lane = tjemu::L->cur->linear % 32;
  return tjemu::exchange(v, mask, (lane / width) * width + src_lane % width, false);
}

template <class To, class From>
static inline To tjemu_bits(From x) {
  To y;
  memcpy(&y, &x, sizeof y);
  return y;
}
static inline float __int_as_float(int x) { return tjemu_bits<float>(x); }
static inline int __float_as_int(float x) { return tjemu_bits<int>(x); }
static inline float __uint_as_float(unsigned x) { return tjemu_bits<float>(x); }
static inline unsigned __float_as_uint(float x) { return tjemu_bits<unsigned>(x); }
static inline double __longlong_as_double(long long x) { return tjemu_bits<double>(x); }
static inline long long __double_as_longlong(double x) { return tjemu_bits<long long>(x); }
static inline unsigned __umulhi(unsigned a, unsigned b) {
  return (unsigned)(((unsigned long long)a * b) >> 32);
}
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
template <class T>
static inline T __ldg(const T* p) {
  return *p;
}

// Dynamic shared memory (`extern __shared__ T name[];`, which cupy/cuda/nvrtc.py rewrites to
// `T* name = (T*)tjemu::dynamic_shared();`): the launch's buffer of `shared_mem` bytes, set by
// cupy/_module.py before each launch, shared by the blocks (they run one after another).
namespace tjemu {
inline thread_local char* dyn_shared = nullptr;
inline void* dynamic_shared() { return dyn_shared; }
}  // namespace tjemu
extern "C" __attribute__((visibility("default"))) void tjemu_set_dynamic_shared(char* p) {
  tjemu::dyn_shared = p;
}

// One host entry point per kernel: tjemu_<name>(grid[3], block[3], args, workspace, error, len).
extern "C" __attribute__((visibility("default"))) size_t tjemu_workspace_bytes() {
  return tjemu::kWorkspace;
}
extern "C" __attribute__((visibility("default"))) size_t tjemu_record_bytes() {
  return tjemu::kRecord;
}
extern "C" __attribute__((visibility("default"))) size_t tjemu_stack_bytes() {
  return tjemu::kStack;
}
#define TJEMU_ENTRY(name)                                                                  \
  extern "C" __attribute__((visibility("default"))) int tjemu_##name(                      \
      const unsigned* grid, const unsigned* block, const uint64_t* args, char* workspace,  \
      char* error, size_t error_len) {                                                     \
    return tjemu::run(                                                                     \
        [](const uint64_t* a) {                                                            \
          tjemu::call(name, a, std::make_index_sequence<tjemu_arity(name)>());             \
        },                                                                                 \
        args, grid, block, workspace, error, error_len);                                   \
  }

// Which parameters are `const T* __restrict__` (r), written (w), other const pointers (c):
// RawKernel checks at each launch that no restrict parameter aliases a written one.
#define TJEMU_SIGNATURE(name, kinds) \
  extern "C" __attribute__((visibility("default"))) const char tjemu_sig_##name[] = kinds;

template <class... A>
constexpr size_t tjemu_arity_of(void (*)(A...)) {
  return sizeof...(A);
}
#define tjemu_arity(f) tjemu_arity_of(f)

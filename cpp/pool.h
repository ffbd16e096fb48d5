// The thread pool that generated kernels run their parallel loops on.
//
// Why not OpenMP: libgomp's parallel regions end in a barrier that waits for every thread of
// the team, and its idle workers spin. On a machine with other work running, a worker that
// was not scheduled held every loop until its next time slice (a 1.4 ms kernel took 40 ms
// with two threads next to a busy process; see benchmarks/RESULTS.md). Here the caller takes
// blocks itself and returns once every *started* block is done: a worker that did not wake
// up in time takes no block, so a parallel loop is never much slower than the same loop on
// the calling thread. Idle workers spin for a few microseconds (back-to-back kernels of one
// call find them awake), then sleep on a condition variable (no busy-waiting against other
// processes); so does a caller waiting for a worker's last block.
//
// A worker can still be descheduled while it holds a block (another process wants the core),
// and the caller then waits for it, up to a time slice. So the pool measures every split
// loop: time split / the time the caller alone would have taken at the pace of its own blocks,
// averaged per loop (block function). While that average is above 1, the loop runs on the
// caller alone, trying a split again after 1, 2, 4, ... 256 runs (benchmarks/contention.py
// measures it next to a busy process).
//
// And when other runnable threads already fill every core (Linux's count of running tasks
// in /proc/loadavg, read at most every 50 ms, less this process's awake threads), no loop is
// split: a worker would only queue behind them, and the caller would wait for it.
// TRACEJIT_POOL_ADAPT=0 turns both off (every loop big enough is split: tests of the split
// path on a loaded machine, and measuring the pool itself).

#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "abi.h"  // TjPool: what generated code receives through `tj_set_pool`

namespace tracejit {

using BlockFn = void (*)(void* arg, int64_t block);

class Pool {
 public:
  explicit Pool(int threads);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // fn(arg, b) for every b in [0, nblocks), on the caller and the workers.
  void run(int64_t nblocks, BlockFn fn, void* arg);

 private:
  void start();
  void work();
  bool claim_and_run(uint64_t job, BlockFn fn, void* arg, int64_t nblocks);
  void wait_done(int64_t nblocks);

  // What the pool learned about one loop (block function); see the comment at the top.
  struct Record {
    BlockFn fn = nullptr;
    int32_t serial_left = 0;  // runs still to do on the caller alone
    int32_t backoff = 0;      // the length of the last such run of runs
    float ratio = 0.5f;       // average time split / time alone (a win until measured)
  };
  Record& record(BlockFn fn);
  bool crowded();  // other runnable tasks fill every core (see the top); busy_'s holder only
  static void learn(Record& rec, int64_t nblocks, int64_t mine, double own_s, double total_s);

  const int threads_;
  const bool adapt_;  // the adaptive fallbacks above (TRACEJIT_POOL_ADAPT=0: off)
  std::vector<std::thread> workers_;
  std::mutex mu_;  // guards the job fields and `sleepers_`
  std::condition_variable wake_;
  std::mutex busy_;  // one job at a time; a concurrent caller runs its loop alone
  uint64_t job_ = 0;
  BlockFn fn_ = nullptr;
  void* arg_ = nullptr;
  int64_t nblocks_ = 0;
  std::atomic<int> sleepers_{0};
  bool stop_ = false;
  std::atomic<uint64_t> posted_{0};
  std::atomic<uint64_t> next_{0};  // (job << 32) | next block index
  std::atomic<int64_t> done_{0};
  std::atomic<bool> caller_waiting_{false};
  std::condition_variable finished_;  // the caller's wait for the last started block
  Record records_[64];                 // by a hash of the function; only busy_'s holder
  int64_t crowded_checked_ns_ = -1;    // when crowded() last read /proc/loadavg
  bool crowded_ = false;
};

// The process-wide pool descriptor handed to every loaded library.
const TjPool* shared_pool();

}  // namespace tracejit

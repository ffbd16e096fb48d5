#include "pool.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

namespace tracejit {

namespace {

// Idle workers poll for the next job this many times (~20 us) before sleeping: the kernels of
// one call follow each other within microseconds.
constexpr int kSpinPolls = 2000;

// The longest run of caller-only loops after repeated losses (then one split is tried again).
constexpr int32_t kMaxBackoff = 256;
// Each split's time ratio enters the loop's average with this weight, capped (one preempted
// worker can cost a time slice, many times the loop): a stall outweighs several 2x wins.
constexpr double kAverageWeight = 0.125;
constexpr double kMaxRatio = 8.0;
// How often the pool reads the machine's count of running tasks.
constexpr int64_t kCrowdCheckNs = 50'000'000;

// The running-task count of /proc/loadavg ("0.50 0.40 0.30 3/456 789": 3), or -1.
int running_tasks() {
  const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[128];
  const ssize_t n = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  if (n <= 0) return -1;
  text[n] = 0;
  int fields = 0;
  for (char* p = text; *p; ++p) {
    if (*p == ' ' && ++fields == 3) return std::atoi(p + 1);
  }
  return -1;
}

thread_local bool in_job = false;  // nested loops (a block that loops in parallel) run inline

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

int default_threads() {
  // OMP_NUM_THREADS keeps working as the thread count (benchmarks and users set it).
  for (const char* var : {"TRACEJIT_NUM_THREADS", "OMP_NUM_THREADS"}) {
    const char* text = std::getenv(var);
    if (text && *text) {
      int n = std::atoi(text);
      if (n >= 1) return n;
    }
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n >= 1) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

Pool* the_pool = nullptr;

void run_shared(int64_t nblocks, BlockFn fn, void* arg) {
  if (!the_pool) {
    static std::mutex creating;
    std::lock_guard<std::mutex> lock(creating);
    if (!the_pool) the_pool = new Pool(default_threads());  // lives until the process ends
  }
  the_pool->run(nblocks, fn, arg);
}

TjPool descriptor{&run_shared, 1};

// A forked child has none of the parent's threads: it starts a pool of its own.
void after_fork_in_child() { the_pool = nullptr; }

bool adapt_from_env() {
  const char* text = std::getenv("TRACEJIT_POOL_ADAPT");
  return !(text && std::string(text) == "0");
}

}  // namespace

Pool::Pool(int threads) : threads_(threads < 1 ? 1 : threads), adapt_(adapt_from_env()) {}

Pool::~Pool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void Pool::start() {
  for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { work(); });
}

bool Pool::claim_and_run(uint64_t job, BlockFn fn, void* arg, int64_t nblocks) {
  uint64_t cur = next_.load(std::memory_order_acquire);
  for (;;) {
    if ((cur >> 32) != (job & 0xffffffffu)) return false;  // a later job: not ours
    const int64_t b = static_cast<int64_t>(cur & 0xffffffffu);
    if (b >= nblocks) return false;
    if (next_.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel)) {
      fn(arg, b);
      // seq_cst here and in wait_done: the caller's store of caller_waiting_ then load of done_
      // and this add then load cannot both miss the other (or the caller would never wake)
      if (done_.fetch_add(1) + 1 == nblocks && caller_waiting_.load()) {
        std::lock_guard<std::mutex> lock(mu_);  // the caller checks done_ under mu_ too
        finished_.notify_one();
      }
      return true;
    }
  }
}

void Pool::run(int64_t nblocks, BlockFn fn, void* arg) {
  if (nblocks <= 0) return;
  std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
  Record* rec = nullptr;
  bool serial = threads_ < 2 || nblocks == 1 || in_job || !busy.owns_lock();
  if (!serial && adapt_ && crowded()) serial = true;
  if (!serial) {
    rec = &record(fn);
    if (adapt_ && rec->serial_left > 0) {
      --rec->serial_left;
      serial = true;
    }
  }
  if (serial) {
    for (int64_t b = 0; b < nblocks; ++b) fn(arg, b);
    return;
  }
  if (workers_.empty()) start();
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  uint64_t job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job = ++job_;
    fn_ = fn;
    arg_ = arg;
    nblocks_ = nblocks;
    done_.store(0, std::memory_order_relaxed);
    next_.store((job & 0xffffffffu) << 32, std::memory_order_release);
    posted_.store(job, std::memory_order_release);
  }
  if (sleepers_ > 0) wake_.notify_all();  // a stale read only delays a worker: it polls on
  in_job = true;
  int64_t mine = 0;
  while (claim_and_run(job, fn, arg, nblocks)) ++mine;
  in_job = false;
  const auto t1 = clock::now();
  wait_done(nblocks);  // every block is claimed; wait for those workers are still running
  const auto t2 = clock::now();
  learn(*rec, nblocks, mine, std::chrono::duration<double>(t1 - t0).count(),
        std::chrono::duration<double>(t2 - t0).count());
}

void Pool::wait_done(int64_t nblocks) {
  for (int i = 0; i < kSpinPolls; ++i) {
    if (done_.load(std::memory_order_acquire) >= nblocks) return;
    relax();
  }
  std::unique_lock<std::mutex> lock(mu_);
  caller_waiting_.store(true);
  finished_.wait(lock, [&] { return done_.load() >= nblocks; });
  caller_waiting_.store(false);
}

bool Pool::crowded() {
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  if (crowded_checked_ns_ >= 0 && now - crowded_checked_ns_ < kCrowdCheckNs) return crowded_;
  crowded_checked_ns_ = now;
  const int running = running_tasks();
  // Ours among them: the caller, and workers not asleep (spinning after the last loop).
  const int awake = static_cast<int>(workers_.size()) - sleepers_.load();
  const int others = running - 1 - std::max(awake, 0);
  crowded_ = running >= 0 && others >= get_nprocs();
  return crowded_;
}

Pool::Record& Pool::record(BlockFn fn) {
  const auto bits = reinterpret_cast<uintptr_t>(fn);
  Record& rec = records_[(bits >> 4 ^ bits >> 10) % (sizeof(records_) / sizeof(records_[0]))];
  if (rec.fn != fn) rec = Record{fn};  // a collision forgets the other loop's history
  return rec;
}

void Pool::learn(Record& rec, int64_t nblocks, int64_t mine, double own_s, double total_s) {
  // The caller ran `mine` blocks in `own_s`: at that pace it would have run the whole loop in
  // own_s * nblocks / mine. When the workers took no block (asleep, or not scheduled in
  // time), the split cost the wake-up and nothing else (a ratio just above 1).
  if (mine <= 0 || own_s <= 0.0) return;
  const double alone_s = own_s * static_cast<double>(nblocks) / static_cast<double>(mine);
  const double ratio = std::min(total_s / alone_s, kMaxRatio);
  rec.ratio += static_cast<float>((ratio - rec.ratio) * kAverageWeight);
  if (rec.ratio > 1.0f) {
    rec.backoff = std::min(kMaxBackoff, rec.backoff > 0 ? 2 * rec.backoff : 1);
    rec.serial_left = rec.backoff;
  } else {
    rec.backoff = 0;
  }
}

void Pool::work() {
  in_job = true;  // a block that loops in parallel runs that loop inline
  uint64_t seen = 0;
  for (;;) {
    uint64_t job = posted_.load(std::memory_order_acquire);
    for (int i = 0; job == seen && i < kSpinPolls; ++i) {
      relax();
      job = posted_.load(std::memory_order_acquire);
    }
    BlockFn fn;
    void* arg;
    int64_t nblocks;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (job == seen) {
        ++sleepers_;
        wake_.wait(lock, [&] { return stop_ || job_ != seen; });
        --sleepers_;
      }
      if (stop_) return;
      job = job_;
      fn = fn_;
      arg = arg_;
      nblocks = nblocks_;
    }
    seen = job;
    while (claim_and_run(job, fn, arg, nblocks)) {
    }
  }
}

const TjPool* shared_pool() {
  static bool once = [] {
    descriptor.threads = default_threads();
    pthread_atfork(nullptr, nullptr, &after_fork_in_child);
    return true;
  }();
  (void)once;
  return &descriptor;
}

}  // namespace tracejit

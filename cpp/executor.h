// The static executor of the CPU backend: runs a generated library's `tj_run` in one call.
//
// A generated library (backend_cpu/codegen.py) exports
//   int tj_run(void* const* in, void* const* out, void* const* consts, char* arena,
//              const TjContext* ctx);
// which runs every step of a schedule. The executor loads it (dlopen), checks and converts
// the inputs, allocates fresh output arrays (or writes into donated input buffers), takes an
// arena from a pool (one per concurrent call, so two threads can call the same function),
// releases the GIL for the whole run, and turns failures into tracejit.errors exceptions.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "abi.h"  // TjContext, shared with generated code

namespace tracejit {

using RunFn = int (*)(void* const*, void* const*, void* const*, char*, const TjContext*);

struct ArraySpec {
  std::vector<int64_t> shape;
  pybind11::dtype dtype;
};

class Executor {
 public:
  Executor(const std::string& library, std::vector<ArraySpec> inputs,
           std::vector<ArraySpec> outputs, std::vector<pybind11::array> consts,
           int64_t arena_bytes, uintptr_t sgemm, uintptr_t dgemm, pybind11::object fallback,
           pybind11::object out_type, uintptr_t mpi);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // `outs`: None, or one entry per output: None (a fresh array) or an array to write it
  // into (a donated input's buffer).
  pybind11::list run(const pybind11::sequence& args, const pybind11::object& outs);
  // run, timing each top-level step of tj_run (for tj.profile): (outputs, 2 * nsteps ints)
  pybind11::tuple run_profiled(const pybind11::sequence& args, int64_t nsteps,
                               const pybind11::object& outs);
  int64_t arena_bytes() const { return arena_bytes_; }

  // Called by generated code (GIL not held) to run a NumPy fallback step.
  int call_fallback(int64_t step, void* const* ptrs);

 private:
  pybind11::list run_with(const pybind11::sequence& args, const pybind11::object& outs,
                          int64_t* step_ns);
  struct FreeDeleter {
    void operator()(char* p) const;
  };
  using Arena = std::unique_ptr<char, FreeDeleter>;

  pybind11::array check_input(size_t i, pybind11::handle arg) const;
  pybind11::array check_output(size_t i, pybind11::handle out) const;
  pybind11::array new_output(size_t i) const;
  Arena take_arena();
  void give_arena(Arena arena);

  void* handle_ = nullptr;
  RunFn run_ = nullptr;
  std::vector<ArraySpec> inputs_;
  std::vector<ArraySpec> outputs_;
  std::vector<pybind11::array> consts_;
  std::vector<void*> const_ptrs_;
  int64_t arena_bytes_;
  void* sgemm_;
  void* dgemm_;
  TjMpi* mpi_;  // the collectives' MPI context (abi.h), or null
  pybind11::object fallback_;
  pybind11::object out_type_;  // None (np.ndarray) or the ndarray subclass of fresh outputs
  std::mutex pool_mutex_;
  std::vector<Arena> pool_;
};

void register_executor(pybind11::module_& module);

}  // namespace tracejit

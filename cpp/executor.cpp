#include "executor.h"

#include <dlfcn.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <exception>
#include <string>
#include <utility>

#include "errors.h"
#include "pool.h"

namespace py = pybind11;

namespace tracejit {
namespace {

// Arena blocks start on a cache line, as the memory plan (ir/memory.py ALIGN) assumes.
constexpr size_t kArenaAlign = 64;

struct CallState {
  Executor* executor;
  std::exception_ptr error;
};

int fallback_trampoline(void* self, int64_t step, void* const* ptrs) {
  auto* state = static_cast<CallState*>(self);
  try {
    return state->executor->call_fallback(step, ptrs);
  } catch (...) {
    state->error = std::current_exception();
    return 1;
  }
}

// std::to_string, not an ostringstream: iostreams go through the std::locale facet tables,
// which break when _core carries its own (statically linked) libstdc++ next to the process's
// libstdc++.so (CMakeLists.txt says how that is kept apart; this keeps it off error paths).
std::string shape_str(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    out += std::to_string(shape[i]);
    out += shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : "");
  }
  return out + ")";
}

bool same_dtype(const py::dtype& a, const py::dtype& b) {
  return a.kind() == b.kind() && a.itemsize() == b.itemsize() &&
         (a.byteorder() == b.byteorder() || a.itemsize() == 1 || a.byteorder() == '=' ||
          a.byteorder() == '|');
}

// A library built with -fopenmp starts its OpenMP runtime's worker threads at its first
// parallel region, and they stay parked inside that runtime (spinning, then asleep) for the
// life of the process. The runtime is a dependency of the library, so the dlclose of the last
// library that needs it unmaps it under those threads, which then crash in unmapped code,
// in whatever the process runs next. So the runtime is pinned as soon as a library brings it
// in: the reference taken here is never released, on purpose.
void pin_openmp_runtime(void* library) {
  // Exported by every OpenMP runtime (libgomp, libomp, libiomp5). Looked up in the library's
  // own dependency scope: a library that needs no runtime (no parallel loop) finds none.
  void* symbol = dlsym(library, "omp_get_num_threads");
  Dl_info info{};
  if (!symbol || !dladdr(symbol, &info) || !info.dli_fname) return;
  // NOLOAD: only the runtime already loaded for this library; NODELETE: never unmap it.
  dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

}  // namespace

void Executor::FreeDeleter::operator()(char* p) const { std::free(p); }

Executor::Executor(const std::string& library, std::vector<ArraySpec> inputs,
                   std::vector<ArraySpec> outputs, std::vector<py::array> consts,
                   int64_t arena_bytes, uintptr_t sgemm, uintptr_t dgemm, py::object fallback,
                   py::object out_type, uintptr_t mpi)
    : inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      consts_(std::move(consts)),
      arena_bytes_(arena_bytes),
      sgemm_(reinterpret_cast<void*>(sgemm)),
      dgemm_(reinterpret_cast<void*>(dgemm)),
      mpi_(reinterpret_cast<TjMpi*>(mpi)),
      fallback_(std::move(fallback)),
      out_type_(std::move(out_type)) {
  handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = dlerror();
    throw CompileError("cannot load compiled library " + library + ": " + (why ? why : "?"));
  }
  run_ = reinterpret_cast<RunFn>(dlsym(handle_, "tj_run"));
  if (!run_) {
    dlclose(handle_);
    handle_ = nullptr;
    throw CompileError("compiled library " + library + " has no tj_run symbol");
  }
  pin_openmp_runtime(handle_);
  // Libraries with parallel loops run them on the shared pool (pool.h); one without the
  // symbol (or a runtime that never calls it) runs every loop on the calling thread.
  if (auto set_pool = reinterpret_cast<void (*)(const void*)>(dlsym(handle_, "tj_set_pool"))) {
    set_pool(shared_pool());
  }
  for (auto& c : consts_) {
    const_ptrs_.push_back(const_cast<void*>(c.data()));
  }
}

Executor::~Executor() {
  if (handle_) dlclose(handle_);
}

py::array Executor::check_input(size_t i, py::handle arg) const {
  const ArraySpec& spec = inputs_[i];
  if (!py::isinstance<py::array>(arg)) {
    throw ArgumentError("argument " + std::to_string(i) + " is not a NumPy array");
  }
  auto arr = py::reinterpret_borrow<py::array>(arg);
  if (!same_dtype(arr.dtype(), spec.dtype)) {
    throw ArgumentError("argument " + std::to_string(i) + " has dtype " +
                     std::string(py::str(arr.dtype())) + ", the compiled function expects " +
                     // py::handle: py::str(const dtype&) is ambiguous in pybind11 2.12/2.13.
                     std::string(py::str(py::handle(spec.dtype))));
  }
  bool shape_ok = static_cast<size_t>(arr.ndim()) == spec.shape.size();
  for (size_t d = 0; shape_ok && d < spec.shape.size(); ++d) {
    shape_ok = arr.shape(static_cast<py::ssize_t>(d)) == spec.shape[d];
  }
  if (!shape_ok) {
    std::vector<int64_t> got(arr.shape(), arr.shape() + arr.ndim());
    throw ShapeError("argument " + std::to_string(i) + " has shape " + shape_str(got) +
                     ", the compiled function expects " + shape_str(spec.shape));
  }
  const int flags = py::array::c_style;
  bool aligned = reinterpret_cast<uintptr_t>(arr.data()) % arr.dtype().itemsize() == 0;
  if ((arr.flags() & flags) && aligned && arr.dtype().byteorder() != '>') {
    return arr;
  }
  // Strided, misaligned or byte-swapped data is copied, never misread.
  return py::array(py::module_::import("numpy").attr("ascontiguousarray")(arr, spec.dtype));
}

Executor::Arena Executor::take_arena() {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!pool_.empty()) {
      Arena a = std::move(pool_.back());
      pool_.pop_back();
      return a;
    }
  }
  if (arena_bytes_ == 0) return Arena(nullptr);
  size_t size = (static_cast<size_t>(arena_bytes_) + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
  char* p = static_cast<char*>(std::aligned_alloc(kArenaAlign, size));
  if (!p) throw std::bad_alloc();
  return Arena(p);
}

void Executor::give_arena(Arena arena) {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  pool_.push_back(std::move(arena));
}

int Executor::call_fallback(int64_t step, void* const* ptrs) {
  py::gil_scoped_acquire gil;
  py::list addresses;
  // The Python side knows how many pointers the step has; pass a generous view of them.
  py::object count = fallback_.attr("pointer_count")(step);
  int64_t n = count.cast<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    addresses.append(reinterpret_cast<uintptr_t>(ptrs[i]));
  }
  fallback_(step, addresses);
  return 0;
}

py::array Executor::new_output(size_t i) const {
  const ArraySpec& spec = outputs_[i];
  if (out_type_.is_none()) return py::array(spec.dtype, spec.shape);
  // A fresh C-contiguous array created directly as the ndarray subclass `out_type_`.
  auto& api = py::detail::npy_api::get();
  std::vector<Py_intptr_t> dims(spec.shape.begin(), spec.shape.end());
  py::dtype descr = spec.dtype;
  PyObject* obj = api.PyArray_NewFromDescr_(
      reinterpret_cast<PyTypeObject*>(out_type_.ptr()), descr.release().ptr(),
      static_cast<int>(dims.size()), dims.data(), nullptr, nullptr, 0, nullptr);
  if (!obj) throw py::error_already_set();
  return py::reinterpret_steal<py::array>(obj);
}

py::array Executor::check_output(size_t i, py::handle out) const {
  const ArraySpec& spec = outputs_[i];
  const std::string which = "donated buffer for output " + std::to_string(i);
  if (!py::isinstance<py::array>(out)) throw ArgumentError(which + " is not a NumPy array");
  auto arr = py::reinterpret_borrow<py::array>(out);
  bool ok = same_dtype(arr.dtype(), spec.dtype) &&
            static_cast<size_t>(arr.ndim()) == spec.shape.size() &&
            (arr.flags() & py::array::c_style) && arr.writeable() &&
            reinterpret_cast<uintptr_t>(arr.data()) % arr.dtype().itemsize() == 0 &&
            arr.dtype().byteorder() != '>';
  for (size_t d = 0; ok && d < spec.shape.size(); ++d) {
    ok = arr.shape(static_cast<py::ssize_t>(d)) == spec.shape[d];
  }
  if (!ok) {
    throw ShapeError(which + " is not a writeable C-contiguous array of the output's shape " +
                     shape_str(spec.shape) + " and dtype");
  }
  return arr;
}

py::list Executor::run(const py::sequence& args, const py::object& outs) {
  return run_with(args, outs, nullptr);
}

py::tuple Executor::run_profiled(const py::sequence& args, int64_t nsteps, const py::object& outs) {
  std::vector<int64_t> times(static_cast<size_t>(2 * nsteps), 0);
  py::list results = run_with(args, outs, times.data());
  return py::make_tuple(results, times);
}

py::list Executor::run_with(const py::sequence& args, const py::object& outs, int64_t* step_ns) {
  if (static_cast<size_t>(py::len(args)) != inputs_.size()) {
    throw ArgumentError("the compiled function takes " + std::to_string(inputs_.size()) +
                     " arrays, got " + std::to_string(py::len(args)));
  }
  std::vector<py::array> keep;
  std::vector<void*> in_ptrs(inputs_.size());
  keep.reserve(inputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    keep.push_back(check_input(i, args[i]));
    in_ptrs[i] = const_cast<void*>(keep.back().data());
  }
  const bool donated = !outs.is_none();
  if (donated && static_cast<size_t>(py::len(outs)) != outputs_.size()) {
    throw ArgumentError("the compiled function has " + std::to_string(outputs_.size()) +
                     " outputs, got " + std::to_string(py::len(outs)) + " output buffers");
  }
  py::list results;
  std::vector<void*> out_ptrs(outputs_.size());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    // A donated input's buffer (chosen by ir/donation.py) or a fresh array.
    py::object given = donated ? py::object(outs[py::int_(i)]) : py::object(py::none());
    py::array out = given.is_none() ? new_output(i) : check_output(i, given);
    out_ptrs[i] = out.mutable_data();
    results.append(out);
  }
  Arena arena = take_arena();
  CallState state{this, nullptr};
  TjContext ctx{sgemm_, dgemm_, &fallback_trampoline, &state, step_ns, mpi_};
  int rc;
  {
    py::gil_scoped_release release;
    try {
      rc = run_(in_ptrs.data(), out_ptrs.data(), const_ptrs_.data(), arena.get(), &ctx);
    } catch (...) {
      state.error = std::current_exception();
      rc = -1;
    }
  }
  give_arena(std::move(arena));
  if (state.error) std::rethrow_exception(state.error);
  if (rc != 0) throw TracejitError("compiled function failed with code " + std::to_string(rc));
  return results;
}

void register_executor(py::module_& m) {
  py::class_<Executor>(m, "Executor",
                       "Runs a compiled schedule (a tj_run library) in one call, GIL released.")
      .def(py::init([](const std::string& library, const py::list& inputs, const py::list& outputs,
                       std::vector<py::array> consts, int64_t arena_bytes, uintptr_t sgemm,
                       uintptr_t dgemm, py::object fallback, py::object out_type,
                       uintptr_t mpi) {
             auto specs = [](const py::list& items) {
               std::vector<ArraySpec> out;
               for (auto item : items) {
                 auto pair = item.cast<py::tuple>();
                 out.push_back({pair[0].cast<std::vector<int64_t>>(),
                                py::dtype::from_args(pair[1])});
               }
               return out;
             };
             return std::make_unique<Executor>(library, specs(inputs), specs(outputs),
                                               std::move(consts), arena_bytes, sgemm, dgemm,
                                               std::move(fallback), std::move(out_type), mpi);
           }),
           py::arg("library"), py::arg("inputs"), py::arg("outputs"), py::arg("consts"),
           py::arg("arena_bytes"), py::arg("sgemm") = 0, py::arg("dgemm") = 0,
           py::arg("fallback") = py::none(), py::arg("out_type") = py::none(), py::arg("mpi") = 0)
      .def("__call__", &Executor::run, py::arg("args"), py::arg("outs") = py::none())
      .def("run_profiled", &Executor::run_profiled, py::arg("args"), py::arg("nsteps"),
           py::arg("outs") = py::none(),
           "Run, and return (outputs, [start_ns, duration_ns] per top-level step).")
      .def_property_readonly("arena_bytes", &Executor::arena_bytes);
}

}  // namespace tracejit

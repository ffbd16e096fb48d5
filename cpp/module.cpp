// tracejit._core: the compiled runtime of tracejit's CPU backend.
#include <pybind11/pybind11.h>

#include <new>
#include <stdexcept>
#include <string>

#include "errors.h"
#include "executor.h"

namespace py = pybind11;

#ifndef TRACEJIT_VERSION
#define TRACEJIT_VERSION "0+unknown"
#endif
#ifndef TRACEJIT_ABI_SHA256
#define TRACEJIT_ABI_SHA256 ""
#endif
#ifndef TRACEJIT_BUILD_TYPE
#define TRACEJIT_BUILD_TYPE ""
#endif

namespace {

const char* compiler_id() {
#if defined(__clang__)
  return "Clang";
#elif defined(__GNUC__)
  return "GNU";
#elif defined(_MSC_VER)
  return "MSVC";
#else
  return "unknown";
#endif
}

std::string compiler_version() {
#if defined(__VERSION__)
  return __VERSION__;
#elif defined(_MSC_FULL_VER)
  return std::to_string(_MSC_FULL_VER);
#else
  return "unknown";
#endif
}

py::dict build_info() {
  py::dict info;
  info["version"] = TRACEJIT_VERSION;
  info["compiler_id"] = compiler_id();
  info["compiler_version"] = compiler_version();
  info["cplusplus"] = static_cast<long>(__cplusplus);
  info["build_type"] = TRACEJIT_BUILD_TYPE;
  info["pybind11_version"] = PYBIND11_TOSTRING(PYBIND11_VERSION_MAJOR) "." PYBIND11_TOSTRING(
      PYBIND11_VERSION_MINOR) "." PYBIND11_TOSTRING(PYBIND11_VERSION_PATCH);
#if defined(NDEBUG)
  info["assertions"] = false;
#else
  info["assertions"] = true;
#endif
  return info;
}

// Lets tests check that every C++ exception arrives as the right Python class.
[[noreturn]] void raise_for_test(const std::string& kind, const std::string& message) {
  if (kind == "shape") throw tracejit::ShapeError(message);
  if (kind == "unsupported") throw tracejit::UnsupportedError(message);
  if (kind == "compile") throw tracejit::CompileError(message);
  if (kind == "device") throw tracejit::DeviceError(message);
  if (kind == "cache") throw tracejit::CacheError(message);
  if (kind == "argument") throw tracejit::ArgumentError(message);
  if (kind == "concretization") throw tracejit::ConcretizationError(message);
  if (kind == "base") throw tracejit::TracejitError(message);
  if (kind == "bad_alloc") throw std::bad_alloc();
  if (kind == "runtime") throw std::runtime_error(message);
  throw std::invalid_argument("_raise_for_test: unknown kind '" + kind + "'");
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "tracejit's compiled runtime (pybind11).";
  tracejit::register_exception_translator(m);
  tracejit::register_executor(m);

  m.def("version", [] { return TRACEJIT_VERSION; }, "The tracejit version this module was built as.");
  m.def("abi_sha256", [] { return TRACEJIT_ABI_SHA256; },
        "SHA-256 of the cpp/abi.h text this module was built with (the code generator checks it).");
  m.def("build_info", &build_info,
        "How this module was built: compiler_id, compiler_version, cplusplus, build_type, "
        "pybind11_version, assertions, version.");
  m.def("_raise_for_test", &raise_for_test, py::arg("kind"), py::arg("message"),
        "Test only: throw the C++ exception named by kind (shape, unsupported, compile, device, "
        "cache, concretization, base, bad_alloc, runtime).");
}

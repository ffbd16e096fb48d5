// The C++ side of tracejit.errors: one exception class per Python class, same names, same
// hierarchy. C++ code throws these; the translator registered by
// `register_exception_translator` (errors.cpp) turns each into its Python class, so Python
// callers catch `tracejit.errors.ShapeError` whichever language raised it.
//
// This header needs only the standard library, so generated kernels can include it too.
#pragma once

#include <stdexcept>

// Exceptions may be thrown in one shared object (a generated kernel library) and caught in
// another (_core); their type_info must then be visible, although pybind11 builds _core with
// hidden visibility.
#if defined(_WIN32)
#define TRACEJIT_EXCEPTION_EXPORT
#else
#define TRACEJIT_EXCEPTION_EXPORT __attribute__((visibility("default")))
#endif

namespace pybind11 {
class module_;
}  // namespace pybind11

namespace tracejit {

// Base class of every error tracejit raises on purpose (Python: TracejitError).
class TRACEJIT_EXCEPTION_EXPORT TracejitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Operand shapes do not fit the operation (Python: ShapeError, also a ValueError).
class TRACEJIT_EXCEPTION_EXPORT ShapeError : public TracejitError {
 public:
  using TracejitError::TracejitError;
};

// An operation or argument tracejit does not support (Python: UnsupportedError).
class TRACEJIT_EXCEPTION_EXPORT UnsupportedError : public TracejitError {
 public:
  using TracejitError::TracejitError;
};

// The backend compiler or loader failed (Python: CompileError).
class TRACEJIT_EXCEPTION_EXPORT CompileError : public TracejitError {
 public:
  using TracejitError::TracejitError;
};

// A device is unavailable or arrays from different devices were mixed (Python: DeviceError).
class TRACEJIT_EXCEPTION_EXPORT DeviceError : public TracejitError {
 public:
  using TracejitError::TracejitError;
};

// The persistent compile cache could not be used (Python: CacheError).
class TRACEJIT_EXCEPTION_EXPORT CacheError : public TracejitError {
 public:
  using TracejitError::TracejitError;
};

// A compiled function was called with what it cannot take: a non-array or an array of
// another dtype (Python: ArgumentError, also a TypeError and a ValueError).
class TRACEJIT_EXCEPTION_EXPORT ArgumentError : public TracejitError {
 public:
  using TracejitError::TracejitError;
};

// A concrete value was needed where only a traced one exists (Python: ConcretizationError).
class TRACEJIT_EXCEPTION_EXPORT ConcretizationError : public TracejitError {
 public:
  using TracejitError::TracejitError;
};

// Installs the one translator from the classes above (and std::bad_alloc) to Python
// exceptions. Call once, from the module's init. Other std::exception types fall through to
// pybind11's default translation (std::invalid_argument -> ValueError, ...).
void register_exception_translator(pybind11::module_& module);

}  // namespace tracejit

// The one place where C++ exceptions become Python exceptions.
#include "errors.h"

#include <pybind11/pybind11.h>

#include <cstring>
#include <exception>
#include <new>

namespace py = pybind11;

namespace tracejit {
namespace {

// Python's classes live in tracejit.errors, which imports nothing from tracejit, so importing
// it here cannot cycle. It is looked up at each translation rather than cached in a static:
// exceptions are off the hot path, the lookup is one sys.modules hit, and no Python object
// then outlives the interpreter or goes stale under importlib.reload.
void set_python_error(const char* class_name, const std::exception& error) {
  const char* what = error.what();
  // C++ messages are bytes; a stray invalid byte must not hide the whole message.
  py::object message = py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "replace"));
  if (!message) {
    throw py::error_already_set();
  }
  py::object python_class;
  try {
    python_class = py::module_::import("tracejit.errors").attr(class_name);
  } catch (py::error_already_set& import_error) {
    // Without tracejit.errors, still say what failed, chained to why the class is missing.
    py::raise_from(import_error, PyExc_RuntimeError, what);
    return;
  }
  PyErr_SetObject(python_class.ptr(), message.ptr());
}

void translate(std::exception_ptr pending) {
  if (!pending) {
    return;
  }
  // Most derived first: every tracejit class is also a TracejitError.
  try {
    std::rethrow_exception(pending);
  } catch (const ShapeError& e) {
    set_python_error("ShapeError", e);
  } catch (const UnsupportedError& e) {
    set_python_error("UnsupportedError", e);
  } catch (const CompileError& e) {
    set_python_error("CompileError", e);
  } catch (const DeviceError& e) {
    set_python_error("DeviceError", e);
  } catch (const CacheError& e) {
    set_python_error("CacheError", e);
  } catch (const ArgumentError& e) {
    set_python_error("ArgumentError", e);
  } catch (const ConcretizationError& e) {
    set_python_error("ConcretizationError", e);
  } catch (const TracejitError& e) {
    set_python_error("TracejitError", e);
  } catch (const std::bad_alloc& e) {
    PyErr_SetString(PyExc_MemoryError, e.what());
  }
  // Anything else propagates out of this translator to pybind11's default one.
}

}  // namespace

void register_exception_translator(py::module_& /*module*/) {
  py::register_exception_translator(&translate);
}

}  // namespace tracejit

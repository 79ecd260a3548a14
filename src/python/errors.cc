// The package's exception classes: infercost.Error and one subclass per engine
// status code, each also deriving from the built-in class the code has always
// raised, made once when the module is imported (register_errors).
#include <nanobind/nanobind.h>

#include <array>
#include <string>

#include "python/py_support.h"

namespace nb = nanobind;

namespace infercost::python {

namespace {

struct ErrorClass {
  StatusCode code;
  const char* name;  // in the infercost package
  PyObject* builtin;
  const char* doc;           // register_errors() adds its last sentence: the built-in base, the code
  PyObject* type = nullptr;  // made by register_errors(); a reference held for good
};

// Every engine code but kOk and kCancelled (a stop on request, not a failure:
// KeyboardInterrupt, which `except Exception` does not catch).
std::array<ErrorClass, 9>& error_classes() {
  static std::array<ErrorClass, 9> classes = {{
      {StatusCode::kInvalidArgument, "InvalidArgumentError", PyExc_ValueError,
       "Bad usage the engine refuses: a flag's value (threads=-1, on_error=\"ignore\"), a path, a "
       "combination of options."},
      {StatusCode::kCorruption, "CorruptInputError", PyExc_ValueError,
       "Malformed input data: a bad row of an input file (the message names the file and line), a broken "
       "config.json or weights file."},
      {StatusCode::kNotFound, "NotFoundError", PyExc_FileNotFoundError,
       "Something that should exist does not: a model directory, an input file, a tensor, a column, a key."},
      {StatusCode::kIOError, "InputOutputError", PyExc_OSError,
       "The operating system refused a read or a write (the message says what and why: \"Not a "
       "directory\", a full disk...)."},
      {StatusCode::kUnsupported, "UnsupportedError", PyExc_RuntimeError,
       "Well-formed but not something the engine runs: a model family, a weights format, a precision "
       "this device lacks."},
      {StatusCode::kResourceExhausted, "ResourceExhaustedError", PyExc_RuntimeError,
       "Out of memory on the host or on a device, even after the engine split the batch."},
      {StatusCode::kUnavailable, "UnavailableError", PyExc_RuntimeError,
       "A device or library this machine lacks (no GPU, no CUDA driver), or a device that failed during "
       "the call."},
      {StatusCode::kInternal, "InternalError", PyExc_RuntimeError,
       "A bug in infercost: a broken invariant, reported rather than aborted (please report it with the "
       "message)."},
      {StatusCode::kNonFinite, "NonFiniteError", PyExc_RuntimeError,
       "The model's outputs are not finite numbers (NaN or infinity), naming the rows; on_error=\"skip\" "
       "gives them null outputs instead."},
  }};
  return classes;
}

PyObject* error_base = nullptr;  // infercost.Error, once registered

// A new exception class infercost.<name> of `bases`, whose status_code
// defaults to `code` (raise_status sets the instance's own).
PyObject* new_error_class(const char* name, const char* doc, PyObject* bases, std::string_view code) {
  nb::dict attrs;
  attrs["status_code"] = nb::str(code.data(), code.size());
  const std::string qualified = std::string("infercost.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, attrs.ptr());
  if (type == nullptr) throw nb::python_error();
  return type;
}

}  // namespace

void register_errors(nb::module_& m) {
  if (error_base == nullptr) {
    error_base = new_error_class(
        "Error",
        "The base class of the errors infercost raises for a failed engine call. Each subclass also "
        "derives from the built-in class the failure raised before it existed (ValueError, "
        "FileNotFoundError, OSError, RuntimeError); str() is the engine's message, status_code its "
        "code's name (e.g. \"Corrupt input\").",
        PyExc_Exception, "Unknown");
    for (ErrorClass& c : error_classes()) {
      nb::object bases = nb::make_tuple(nb::handle(error_base), nb::handle(c.builtin));
      // The doc's last sentence from the table: the built-in base and the code's name.
      const std::string builtin = reinterpret_cast<PyTypeObject*>(c.builtin)->tp_name;
      const std::string doc =
          std::string(c.doc) +
          (std::string("AEIOU").find(builtin[0]) == std::string::npos ? " Also a " : " Also an ") + builtin +
          "; status_code \"" + std::string(status_code_name(c.code)) + "\".";
      c.type = new_error_class(c.name, doc.c_str(), bases.ptr(), status_code_name(c.code));
    }
  }
  m.attr("Error") = nb::handle(error_base);
  for (const ErrorClass& c : error_classes()) m.attr(c.name) = nb::handle(c.type);
}

PyObject* exception_type_for(StatusCode code) {
  if (code == StatusCode::kCancelled) return PyExc_KeyboardInterrupt;
  for (const ErrorClass& c : error_classes()) {
    if (c.code == code) return c.type != nullptr ? c.type : c.builtin;  // built-in before registration
  }
  return exception_type_for(StatusCode::kInternal);  // a code without a class of its own
}

}  // namespace infercost::python

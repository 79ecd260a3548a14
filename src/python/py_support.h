// What the native module's functions share: Status -> Python exception, and
// Python objects -> TextColumn. Every function here needs the GIL.
#pragma once

#include <nanobind/nanobind.h>

#include <atomic>
#include <functional>

#include "infercost/status.h"
#include "python/arrow_texts.h"

namespace infercost::python {

// The exception classes (src/python/errors.cc), made once and set on `m` (the
// native module; the package exports them): infercost.Error, and one subclass
// per engine code, which also derives from the built-in class that code raised
// before the classes existed:
//   kInvalidArgument   InvalidArgumentError(Error, ValueError)
//   kCorruption        CorruptInputError(Error, ValueError)
//   kNotFound          NotFoundError(Error, FileNotFoundError)
//   kIOError           InputOutputError(Error, OSError)
//   kUnsupported       UnsupportedError(Error, RuntimeError)
//   kResourceExhausted ResourceExhaustedError(Error, RuntimeError)
//   kUnavailable       UnavailableError(Error, RuntimeError)
//   kInternal          InternalError(Error, RuntimeError)
//   kNonFinite         NonFiniteError(Error, RuntimeError)
// kCancelled (a stop on request, not a failure) stays KeyboardInterrupt, so that
// `except Exception` and `except infercost.Error` never swallow a Ctrl-C.
void register_errors(nanobind::module_& m);

// The class raise_status raises for `code` (the table above; the built-in
// class before register_errors()).
PyObject* exception_type_for(StatusCode code);

// Raises exception_type_for(status.code()) with the status's message and a
// `status_code` attribute (status_code_name(), e.g. "Corrupt input").
[[noreturn]] void raise_status(const Status& status);

// The texts of `obj` as views, without copying any text:
//   - an object with __arrow_c_stream__ or __arrow_c_array__ (pyarrow arrays and
//     chunked arrays, polars, nanoarrow, ...): the Arrow buffers themselves;
//   - a list or tuple of str / None (None, NaN and pandas.NA are null): each
//     str's UTF-8 form (CPython keeps it inside the str);
//   - an object with tolist() (a 1-D numpy array, a pandas Series without an
//     Arrow export): its tolist(), then as a list.
// The column keeps every buffer alive (references to the str objects, the
// moved-out Arrow arrays) until it is destroyed, which must be with the GIL
// held. TypeError for anything else, for a bare str or bytes, and for a
// non-string Arrow array (naming its format); ValueError for malformed
// Arrow data or a str that has no UTF-8 form (lone surrogates).
TextColumn read_texts(nanobind::handle obj);

// Runs `body` on a thread of its own with the GIL released, while the calling
// thread (which holds the GIL on entry and on return) looks every 50 ms for a
// Python signal. When a handler raises (Ctrl-C's KeyboardInterrupt), `stop` is
// set to SIGINT, so that the engine call inside `body` stops at its next step;
// once `body` has returned, the handler's exception is raised. Other Python
// threads run meanwhile. `body` must not need the GIL; an exception it throws
// ends the wait and is rethrown here (after the handler's, which wins).
void run_watching_signals(std::atomic<int>& stop, const std::function<void()>& body);

}  // namespace infercost::python

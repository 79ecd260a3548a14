// What the native module's functions share: Status -> Python exception, and
// Python objects -> TextColumn. Every function here needs the GIL.
#pragma once

#include <nanobind/nanobind.h>

#include <atomic>
#include <functional>

#include "infercost/core/status.h"
#include "python/arrow_texts.h"

namespace infercost::python {

// Raises the Python exception for `status` (not OK), with its message and a
// `status_code` attribute (status_code_name(), e.g. "Corruption"):
//   kInvalidArgument, kCorruption             -> ValueError
//   kNotFound                                 -> FileNotFoundError
//   kIOError                                  -> OSError
//   kCancelled                                -> KeyboardInterrupt
//   kUnsupported, kResourceExhausted,
//   kUnavailable, kInternal                   -> RuntimeError
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

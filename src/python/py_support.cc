#include "python/py_support.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "engine/settings.h"

namespace nb = nanobind;

namespace infercost::python {

namespace {

// How often the waiting thread looks for a Python signal (Ctrl-C) while the
// engine runs without the GIL.
constexpr auto kSignalPoll = std::chrono::milliseconds(50);

// A reference the column drops when it is destroyed (with the GIL held).
std::shared_ptr<void> keep_reference(PyObject* obj) {
  Py_INCREF(obj);
  return std::shared_ptr<void>(obj, [](void* p) { Py_DECREF(static_cast<PyObject*>(p)); });
}

// A TypeError or ValueError from a read: raised with the text "texts: ...".
[[noreturn]] void raise_read_error(const Status& status) {
  if (status.code() == StatusCode::kUnsupported) throw nb::type_error(status.message().c_str());
  raise_status(status.with_context("texts"));
}

// Moves the Arrow struct out of a PyCapsule of `name` (the PyCapsule
// interface's names: "arrow_schema", "arrow_array", "arrow_array_stream").
template <typename T>
T* capsule_pointer(nb::handle capsule, const char* name) {
  void* p = PyCapsule_GetPointer(capsule.ptr(), name);
  if (p == nullptr) throw nb::python_error();
  return static_cast<T*>(p);
}

bool is_missing(PyObject* item) {
  if (item == Py_None) return true;
  if (PyFloat_Check(item)) return std::isnan(PyFloat_AS_DOUBLE(item));  // pandas' NaN for a missing value
  return std::string_view(Py_TYPE(item)->tp_name) == "NAType";          // pandas.NA
}

void append_sequence(nb::handle obj, TextColumn& out) {
  // A tuple of the items: the column holds it, so no item is freed while it
  // lives, even if someone changes the list meanwhile.
  nb::object items = nb::steal(PySequence_Tuple(obj.ptr()));
  if (!items.is_valid()) throw nb::python_error();
  const Py_ssize_t n = PyTuple_GET_SIZE(items.ptr());
  out.texts.reserve(out.texts.size() + static_cast<size_t>(n));
  out.is_null.reserve(out.is_null.size() + static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyTuple_GET_ITEM(items.ptr(), i);
    if (PyUnicode_Check(item)) {
      Py_ssize_t size = 0;
      const char* utf8 = PyUnicode_AsUTF8AndSize(item, &size);
      if (utf8 == nullptr) {
        PyErr_Clear();
        raise_status(
            invalid_argument(fmt::format("texts[{}]: a str with no UTF-8 form (a lone surrogate?)", i)));
      }
      out.texts.emplace_back(utf8, static_cast<size_t>(size));
      out.is_null.push_back(0);
    } else if (is_missing(item)) {
      out.texts.emplace_back();
      out.is_null.push_back(1);
    } else {
      throw nb::type_error(
          fmt::format("texts[{}]: expected str or None, got {}", i, Py_TYPE(item)->tp_name).c_str());
    }
  }
  out.owners.push_back(keep_reference(items.ptr()));
}

}  // namespace

void raise_status(const Status& status) {
  PyObject* type = exception_type_for(status.code());
  // The engine names settings as "{max_length}"; Python spells them as its keywords.
  const std::string message = engine::spell_settings(status.message(), engine::Spelling::kName);
  nb::object exc = nb::steal(PyObject_CallFunction(type, "s", message.c_str()));
  if (!exc.is_valid()) throw nb::python_error();
  const std::string_view code = status_code_name(status.code());
  nb::setattr(exc, "status_code", nb::str(code.data(), code.size()));
  PyErr_SetObject(type, exc.ptr());
  throw nb::python_error();
}

TextColumn read_texts(nb::handle obj) {
  TextColumn out;
  if (PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr())) {
    throw nb::type_error("texts: a single str or bytes is not a column of texts (pass [text])");
  }
  if (nb::hasattr(obj, "__arrow_c_stream__")) {
    nb::object capsule = obj.attr("__arrow_c_stream__")();
    auto* stream = capsule_pointer<ArrowArrayStream>(capsule, "arrow_array_stream");
    if (Status s = append_arrow_stream(stream, out); !s.ok()) raise_read_error(s);
    return out;
  }
  if (nb::hasattr(obj, "__arrow_c_array__")) {
    nb::object pair = obj.attr("__arrow_c_array__")();
    if (!nb::isinstance<nb::tuple>(pair) || nb::len(pair) != 2) {
      throw nb::type_error("texts: __arrow_c_array__() must return a (schema, array) pair of capsules");
    }
    nb::handle schema_capsule = PyTuple_GET_ITEM(pair.ptr(), 0);
    nb::handle array_capsule = PyTuple_GET_ITEM(pair.ptr(), 1);
    std::shared_ptr<ArrowSchema> schema =
        own_schema(capsule_pointer<ArrowSchema>(schema_capsule, "arrow_schema"));
    auto* array = capsule_pointer<ArrowArray>(array_capsule, "arrow_array");
    if (Status s = append_arrow_array(*schema, array, out); !s.ok()) raise_read_error(s);
    return out;
  }
  if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
    append_sequence(obj, out);
    return out;
  }
  if (nb::hasattr(obj, "tolist") && nb::hasattr(obj, "ndim")) {
    if (nb::cast<int>(obj.attr("ndim")) != 1) {
      throw nb::type_error("texts: expected a 1-D array of str");
    }
    append_sequence(obj.attr("tolist")(), out);
    return out;
  }
  throw nb::type_error(
      fmt::format("texts: expected a list of str, a numpy array or pandas Series of str, or an Arrow string "
                  "array (an object with __arrow_c_stream__ or __arrow_c_array__), got {}",
                  Py_TYPE(obj.ptr())->tp_name)
          .c_str());
}

void run_watching_signals(std::atomic<int>& stop, const std::function<void()>& body) {
  std::optional<nb::python_error> raised;
  std::exception_ptr thrown;
  {
    nb::gil_scoped_release release;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::thread worker([&] {
      try {
        body();
      } catch (...) {
        thrown = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      done = true;
      cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu);
    while (!cv.wait_for(lock, kSignalPoll, [&] { return done; })) {
      if (raised) continue;
      lock.unlock();
      {
        nb::gil_scoped_acquire acquire;
        if (PyErr_CheckSignals() != 0) {
          raised.emplace();  // takes the handler's exception
          stop.store(SIGINT);
        }
      }
      lock.lock();
    }
    lock.unlock();
    worker.join();
  }
  if (raised) throw *raised;
  if (thrown) std::rethrow_exception(thrown);
}

}  // namespace infercost::python

#include "infercost/status.h"

#include <cstdio>
#include <cstdlib>

#include "core/enum_names.h"

namespace infercost {

std::string_view status_code_name(StatusCode code) {
  static constexpr const char* kNames[] = {"OK",
                                           "Invalid argument",
                                           "Not found",
                                           "I/O error",
                                           "Corrupt input",
                                           "Unsupported",
                                           "Resource exhausted",
                                           "Internal error",
                                           "Unavailable",
                                           "Stopped",
                                           "Not a finite number"};
  return enum_name(code, kNames, "Unknown");
}

Status Status::with_context(std::string_view context) const {
  if (ok()) return *this;
  std::string msg(context);
  msg += ": ";
  msg += message_;
  return Status(code_, std::move(msg));
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  std::string out(status_code_name(code_));
  out += ": ";
  out += message_;
  return out;
}

// The constructor of each error code: one line each, in StatusCode's order.
#define INFERCOST_STATUS_MAKER(function, code) \
  Status function(std::string m) {             \
    return {StatusCode::code, std::move(m)};   \
  }
INFERCOST_STATUS_MAKER(invalid_argument, kInvalidArgument)
INFERCOST_STATUS_MAKER(not_found, kNotFound)
INFERCOST_STATUS_MAKER(io_error, kIOError)
INFERCOST_STATUS_MAKER(corruption, kCorruption)
INFERCOST_STATUS_MAKER(unsupported, kUnsupported)
INFERCOST_STATUS_MAKER(resource_exhausted, kResourceExhausted)
INFERCOST_STATUS_MAKER(internal_error, kInternal)
INFERCOST_STATUS_MAKER(unavailable, kUnavailable)
INFERCOST_STATUS_MAKER(cancelled, kCancelled)
INFERCOST_STATUS_MAKER(non_finite, kNonFinite)
#undef INFERCOST_STATUS_MAKER

namespace detail {
void value_of_error(const Status& status) {
  std::fprintf(stderr, "infercost: value() of an error result: %s\n", status.to_string().c_str());
  std::abort();
}

void check_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "infercost: check failed: %s at %s:%d\n", expr, file, line);
  std::abort();
}
}  // namespace detail

}  // namespace infercost

#include "infercost/core/status.h"

#include <cstdio>
#include <cstdlib>

namespace infercost {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "Invalid argument";
    case StatusCode::kNotFound: return "Not found";
    case StatusCode::kIOError: return "I/O error";
    case StatusCode::kCorruption: return "Corrupt input";
    case StatusCode::kUnsupported: return "Unsupported";
    case StatusCode::kResourceExhausted: return "Resource exhausted";
    case StatusCode::kInternal: return "Internal error";
    case StatusCode::kUnavailable: return "Unavailable";
    case StatusCode::kCancelled: return "Stopped";
    case StatusCode::kNonFinite: return "Not a finite number";
  }
  return "Unknown";
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

Status invalid_argument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
Status not_found(std::string m) {
  return {StatusCode::kNotFound, std::move(m)};
}
Status io_error(std::string m) {
  return {StatusCode::kIOError, std::move(m)};
}
Status corruption(std::string m) {
  return {StatusCode::kCorruption, std::move(m)};
}
Status unsupported(std::string m) {
  return {StatusCode::kUnsupported, std::move(m)};
}
Status resource_exhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
Status internal_error(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}

Status unavailable(std::string m) {
  return {StatusCode::kUnavailable, std::move(m)};
}
Status cancelled(std::string m) {
  return {StatusCode::kCancelled, std::move(m)};
}
Status non_finite(std::string m) {
  return {StatusCode::kNonFinite, std::move(m)};
}

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

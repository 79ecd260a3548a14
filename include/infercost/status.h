// Status and Result<T>: how errors cross module seams in infercost.
//
// A Status is cheap when OK (no allocation) and otherwise carries a code and a
// message. Result<T> holds either a value or a non-OK Status. Functions at a
// seam return one of the two; exceptions never cross a seam.
//
// Messages read outermost context first: "tweets.jsonl: line 12: column
// 'full_text' is missing". Add context once per layer with with_context().
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace infercost {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // bad usage: a flag, a path, an option value
  kNotFound,           // a file, tensor, column or key that should exist
  kIOError,            // the OS refused a read or write
  kCorruption,         // input data is malformed (bad JSON, bad header)
  kUnsupported,        // well-formed but not something we run (a model family, a precision on this device)
  kResourceExhausted,  // out of memory on host or device
  kInternal,           // a bug: a broken invariant reported, not aborted
  kUnavailable,        // a device or library this machine lacks (no GPU, no driver), or a device that failed
  kCancelled,          // stopped on request (a signal) before the work was done
  kNonFinite,          // a model output that is not a finite number (NaN, infinity)
};

std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "context: message", keeping the code. No-op on an OK status.
  Status with_context(std::string_view context) const;
  // "Corruption: tweets.jsonl: line 3: ..." for humans.
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status invalid_argument(std::string message);
Status not_found(std::string message);
Status io_error(std::string message);
Status corruption(std::string message);
Status unsupported(std::string message);
Status resource_exhausted(std::string message);
Status internal_error(std::string message);
Status unavailable(std::string message);
Status non_finite(std::string message);
Status cancelled(std::string message);

namespace detail {
// Prints "infercost: value() of an error result: <status>" and aborts.
[[noreturn]] void value_of_error(const Status& status);
}  // namespace detail

// Either a T or a non-OK Status. Accessing value() of an error aborts, in
// every build, printing the status (check ok() first, or use the macros below).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit on purpose
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = internal_error("Result constructed from an OK status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & {
    if (!ok()) detail::value_of_error(status_);
    return *value_;
  }
  const T& value() const& {
    if (!ok()) detail::value_of_error(status_);
    return *value_;
  }
  T&& value() && {
    if (!ok()) detail::value_of_error(status_);
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace infercost

#define INFERCOST_CONCAT_IMPL(a, b) a##b
#define INFERCOST_CONCAT(a, b) INFERCOST_CONCAT_IMPL(a, b)

// Returns the Status from the enclosing function if `expr` is not OK.
#define INFERCOST_RETURN_IF_ERROR(expr)            \
  do {                                             \
    ::infercost::Status _infercost_st = (expr);    \
    if (!_infercost_st.ok()) return _infercost_st; \
  } while (0)

// `lhs = value of rexpr` or return its Status. lhs may declare: auto x.
#define INFERCOST_ASSIGN_OR_RETURN(lhs, rexpr)                   \
  auto INFERCOST_CONCAT(_infercost_res_, __LINE__) = (rexpr);    \
  if (!INFERCOST_CONCAT(_infercost_res_, __LINE__).ok())         \
    return INFERCOST_CONCAT(_infercost_res_, __LINE__).status(); \
  lhs = std::move(INFERCOST_CONCAT(_infercost_res_, __LINE__)).value()

// Cheap invariant checks that stay in release builds; abort with file:line.
#define INFERCOST_CHECK(cond)                                                  \
  do {                                                                         \
    if (!(cond)) ::infercost::detail::check_failed(#cond, __FILE__, __LINE__); \
  } while (0)

namespace infercost::detail {
[[noreturn]] void check_failed(const char* expr, const char* file, int line);
}

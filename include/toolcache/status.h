// Status and Result<T>: how the request path reports failure without
// exceptions.
//
// A Status is either OK or carries a code and a human-readable message that
// names what went wrong and, where possible, how to fix it. Result<T> holds a
// T or a non-OK Status. Both are [[nodiscard]]: a dropped error is a compile
// error under -Werror.
//
// Thread-safety: values; copy freely.
//
// Example:
//   Result<std::string> r = CanonicalizeJson(text);
//   if (!r.ok()) return r.status();
//   Use(*r);
#ifndef TOOLCACHE_STATUS_H_
#define TOOLCACHE_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace toolcache {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller's input is malformed (bad JSON, bad flag)
  kNotFound,            // a named thing does not exist
  kFailedPrecondition,  // the system is not in a state to do this
  kResourceExhausted,   // a size or depth limit was exceeded
  kUnavailable,         // a peer (upstream, store) is down; retrying may help
  kInternal,            // a bug: an invariant did not hold
  kDeadlineExceeded,    // a peer did not answer in time (added with stores)
  kDataLoss,            // stored data is unreadable or corrupt
};

// Returns "OK", "INVALID_ARGUMENT", ... for logs and JSON error bodies.
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: <message>", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string msg) {
  return Status(StatusCode::kInvalidArgument, std::move(msg));
}
inline Status NotFound(std::string msg) {
  return Status(StatusCode::kNotFound, std::move(msg));
}
inline Status FailedPrecondition(std::string msg) {
  return Status(StatusCode::kFailedPrecondition, std::move(msg));
}
inline Status ResourceExhausted(std::string msg) {
  return Status(StatusCode::kResourceExhausted, std::move(msg));
}
inline Status Unavailable(std::string msg) {
  return Status(StatusCode::kUnavailable, std::move(msg));
}
inline Status Internal(std::string msg) {
  return Status(StatusCode::kInternal, std::move(msg));
}
inline Status DeadlineExceeded(std::string msg) {
  return Status(StatusCode::kDeadlineExceeded, std::move(msg));
}
inline Status DataLoss(std::string msg) {
  return Status(StatusCode::kDataLoss, std::move(msg));
}

// Holds either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "Result built from an OK status holds no value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T&& operator*() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace toolcache

#endif  // TOOLCACHE_STATUS_H_

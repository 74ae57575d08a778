// Errors as values: Status says what failed, with context; Result<T> carries a
// value or a Status. Only main turns a Status into an exit code.
// Thread safety: immutable values, safe to share once built.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace gpuscope {

class Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,  // bad flag, field name, file content
    kNotFound,         // missing file, GPU, library
    kUnavailable,      // driver not loaded, GPU lost, hung call
    kNotSupported,     // the device or driver lacks the feature
    kInternal,
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return Status(Code::kInvalidArgument, std::move(m));
  }
  static Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
  static Status Unavailable(std::string m) { return Status(Code::kUnavailable, std::move(m)); }
  static Status NotSupported(std::string m) { return Status(Code::kNotSupported, std::move(m)); }
  static Status Internal(std::string m) { return Status(Code::kInternal, std::move(m)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes context: Status::NotFound("x").Context("reading y") -> "reading y: x".
  Status Context(const std::string& what) const {
    Status out = *this;
    if (!ok()) out.message_ = what + ": " + message_;
    return out;
  }

  // The code of the layer that failed (an nvmlReturn_t for NVML calls), kept
  // through Context() so callers can tell GPU_IS_LOST from NOT_SUPPORTED.
  Status WithDetail(int detail) const {
    Status out = *this;
    out.detail_ = detail;
    return out;
  }
  std::optional<int> detail() const { return detail_; }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kOk;
  std::string message_;
  std::optional<int> detail_;
};

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace gpuscope

// Returns early from a function returning Status or Result<T>.
#define GPUSCOPE_RETURN_IF_ERROR(expr)   \
  do {                                   \
    ::gpuscope::Status status_ = (expr); \
    if (!status_.ok()) return status_;   \
  } while (0)

// Errors as values: Status says what failed, with context; Result<T> carries a
// value or a Status. Only main turns a Status into an exit code.
// Contracts: both are [[nodiscard]]; a Result holds a value or a failed
// Status, never an OK one; value(), * and -> on a failed Result abort with the
// error's message, in every build type (a bug, never undefined behaviour).
// Thread safety: immutable values, safe to share once built.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace gpuscope {

class [[nodiscard]] Status {
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

namespace status_internal {
// Prints "gpuscope: <what>: <status message>" to stderr and aborts. Kept out
// of line and cold, so each check costs one branch at its call site.
[[noreturn, gnu::cold, gnu::noinline]] inline void Die(const char* what, const Status& status) {
  std::fprintf(stderr, "gpuscope: %s: %s\n", what,
               status.ok() ? "(OK status)" : status.message().c_str());
  std::abort();
}
}  // namespace status_internal

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  // An OK status carries no value: building a Result from one is a bug.
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) status_internal::Die("Result built from an OK Status", status_);
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return Checked(); }
  const T& value() const& { return Checked(); }
  T&& value() && { return std::move(Checked()); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &Checked(); }
  T& operator*() { return Checked(); }
  const T& operator*() const { return Checked(); }

 private:
  T& Checked() {
    if (!value_) status_internal::Die("value() of a failed Result", status_);
    return *value_;
  }
  const T& Checked() const {
    if (!value_) status_internal::Die("value() of a failed Result", status_);
    return *value_;
  }

  std::optional<T> value_;
  Status status_;
};

}  // namespace gpuscope

#define GPUSCOPE_STATUS_CONCAT_INNER_(a, b) a##b
#define GPUSCOPE_STATUS_CONCAT_(a, b) GPUSCOPE_STATUS_CONCAT_INNER_(a, b)

// Returns early from a function returning Status or Result<T>. The local's
// name carries the line number, so it shadows no member or outer variable.
#define GPUSCOPE_RETURN_IF_ERROR(expr) \
  GPUSCOPE_RETURN_IF_ERROR_IMPL_(GPUSCOPE_STATUS_CONCAT_(gpuscope_status_line_, __LINE__), expr)
#define GPUSCOPE_RETURN_IF_ERROR_IMPL_(name, expr) \
  do {                                             \
    ::gpuscope::Status name = (expr);              \
    if (!name.ok()) return name;                   \
  } while (0)

#include "base/config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/text.h"

namespace gpuscope::base {
namespace {

// Closes the descriptor on every return path.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string Where(std::string_view text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

std::string_view FileType(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
  return "is not a regular file";
}

Result<std::string> ReadAll(int fd, const std::string& prefix) {
  std::string text;
  char buffer[65536];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Unavailable(prefix + std::strerror(errno));
    if (n == 0) return text;
    if (text.size() + static_cast<std::size_t>(n) > kMaxConfigFileBytes) {
      return Status::InvalidArgument(prefix + "is larger than " +
                                     std::to_string(kMaxConfigFileBytes >> 20) + " MiB");
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

Status CheckText(std::string_view text, const std::string& prefix) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::InvalidArgument(prefix + "is empty");
  }
  if (std::optional<std::size_t> bad = FindInvalidUtf8(text)) {
    return Status::InvalidArgument(prefix + "is not UTF-8 text (invalid byte at " +
                                   Where(text, *bad) + ")");
  }
  if (std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return Status::InvalidArgument(prefix + "has a NUL byte at " + Where(text, nul));
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> ReadConfigFile(const std::string& path, std::string_view what) {
  const std::string prefix = std::string(what) + " " + path + ": ";
  if (path.empty()) return Status::InvalidArgument(std::string(what) + ": empty path");
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat refuses it.
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    const int error = errno;
    std::string message = prefix + std::strerror(error);
    if (error == ENOENT || error == ENOTDIR) return Status::NotFound(message);
    return Status::Unavailable(message);
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return Status::Unavailable(prefix + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return Status::InvalidArgument(prefix + std::string(FileType(st.st_mode)));
  if (static_cast<std::size_t>(st.st_size) > kMaxConfigFileBytes) {
    return Status::InvalidArgument(prefix + "is larger than " +
                                   std::to_string(kMaxConfigFileBytes >> 20) + " MiB");
  }
  Result<std::string> text = ReadAll(fd.get(), prefix);
  if (!text.ok()) return text;
  GPUSCOPE_RETURN_IF_ERROR(CheckText(*text, prefix));
  return text;
}

}  // namespace gpuscope::base

#include "base/config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/text.h"
#include "base/unique_fd.h"

namespace gpuscope::base {
namespace {

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

// "4 MiB", "64 KiB" or "100 bytes", for messages.
std::string SizeText(std::size_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

Status TooLarge(const std::string& prefix, std::size_t max_bytes) {
  return Status::InvalidArgument(prefix + "is larger than " + SizeText(max_bytes));
}

// Reads to the end, failing as soon as more than `max_bytes` arrive.
Result<std::string> ReadAll(int fd, const std::string& prefix, std::size_t max_bytes) {
  std::string text;
  char buffer[65536];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Unavailable(prefix + std::strerror(errno));
    if (n == 0) return text;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) return TooLarge(prefix, max_bytes);
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

Result<std::string> ReadRegularFile(const std::string& path, std::string_view what,
                                    std::size_t max_bytes) {
  const std::string prefix = std::string(what) + " " + path + ": ";
  if (path.empty()) return Status::InvalidArgument(std::string(what) + ": empty path");
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat refuses it.
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
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
  if (static_cast<std::size_t>(st.st_size) > max_bytes) return TooLarge(prefix, max_bytes);
  return ReadAll(fd.get(), prefix, max_bytes);
}

Result<std::string> ReadConfigFile(const std::string& path, std::string_view what) {
  Result<std::string> text = ReadRegularFile(path, what, kMaxConfigFileBytes);
  if (!text.ok()) return text;
  GPUSCOPE_RETURN_IF_ERROR(CheckText(*text, std::string(what) + " " + path + ": "));
  return text;
}

}  // namespace gpuscope::base

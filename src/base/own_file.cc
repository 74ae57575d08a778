#include "base/own_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/unique_fd.h"

namespace gpuscope::base {
namespace {

Status Refused(const std::string& path, const std::string& why) {
  return Status::NotFound("cannot write " + path + ": " + why);
}

// The directory `dir` (as written in `path`), walked one component at a time
// so that a symbolic link of another user's is refused rather than followed.
Result<int> OpenDirectory(const std::string& path, const std::string& dir) {
  UniqueFd at(open(dir.starts_with('/') ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (at.get() < 0) return Refused(path, std::strerror(errno));
  std::size_t begin = 0;
  while (begin < dir.size()) {
    std::size_t end = dir.find('/', begin);
    if (end == std::string::npos) end = dir.size();
    const std::string part = dir.substr(begin, end - begin);
    begin = end + 1;
    if (part.empty() || part == ".") continue;
    struct stat st {};
    if (fstatat(at.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return Refused(path, part + ": " + std::strerror(errno));
    }
    if (S_ISLNK(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0) {
      return Refused(path, part + " is a symbolic link of another user's (uid " +
                               std::to_string(st.st_uid) + ")");
    }
    const int next = openat(at.get(), part.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (next < 0) return Refused(path, part + ": " + std::strerror(errno));
    at.reset(next);
  }
  return at.release();
}

}  // namespace

Result<int> OpenOwnFile(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") return Refused(path, "not a file name");
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  Result<int> dir_fd = OpenDirectory(path, dir);
  if (!dir_fd.ok()) return dir_fd.status();
  UniqueFd at(*dir_fd);
  // O_NONBLOCK: a FIFO planted there must not hang the open.
  UniqueFd fd(openat(at.get(), name.c_str(),
                     O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644));
  if (fd.get() < 0) {
    return Refused(path, errno == ELOOP ? "it is a symbolic link" : std::strerror(errno));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return Refused(path, std::strerror(errno));
  // The null device (character device 1:3, root's: nobody else can make one) takes output
  // away, as `nvidia-smi -f /dev/null` does; it is not truncated.
  if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3) && st.st_uid == 0) {
    if (fcntl(fd.get(), F_SETFL, 0) != 0) return Refused(path, std::strerror(errno));
    return fd.release();
  }
  if (!S_ISREG(st.st_mode)) return Refused(path, "not a regular file");
  if (st.st_uid != geteuid()) {
    return Refused(path, "it belongs to another user (uid " + std::to_string(st.st_uid) + ")");
  }
  if (st.st_nlink != 1) return Refused(path, "it has other hard links");
  if (ftruncate(fd.get(), 0) != 0) return Refused(path, std::strerror(errno));
  if (fcntl(fd.get(), F_SETFL, 0) != 0) return Refused(path, std::strerror(errno));
  return fd.release();
}

Status WriteOwnFile(const std::string& path, std::string_view text) {
  Result<int> opened = OpenOwnFile(path);
  if (!opened.ok()) return opened.status();
  UniqueFd fd(*opened);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Internal("write " + path + " failed: " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  if (close(fd.release()) != 0) {
    return Status::Internal("write " + path + " failed: " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace gpuscope::base

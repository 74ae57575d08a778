#include "cli/top_terminal.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <ostream>

#include "cli/stop.h"

namespace gpuscope::cli {
namespace {

constexpr const char* kEnter = "\x1b[?1049h\x1b[?25l";         // alternate screen, cursor off
constexpr const char* kLeave = "\x1b[0m\x1b[?1049l\x1b[?25h";  // colours off, back, cursor on

}  // namespace

Keys ParseKeys(std::string_view bytes) {
  Keys keys;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c == '\x1b') {
      const bool sequence = i + 2 < bytes.size() && (bytes[i + 1] == '[' || bytes[i + 1] == 'O');
      if (!sequence) {
        keys.quit = true;  // Esc alone
        continue;
      }
      if (bytes[i + 2] == 'A') --keys.move;
      if (bytes[i + 2] == 'B') ++keys.move;
      i += 2;
    } else if (c == 'q' || c == 'Q') {
      keys.quit = true;
    } else if (c == 'k') {
      --keys.move;
    } else if (c == 'j') {
      ++keys.move;
    }
  }
  return keys;
}

TerminalSession::TerminalSession(std::ostream& out, int in_fd) : out_(out), in_fd_(in_fd) {
  if (isatty(in_fd_) == 1 && tcgetattr(in_fd_, &saved_) == 0) {
    struct termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);  // ISIG stays: Ctrl-C still stops
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    raw_ = tcsetattr(in_fd_, TCSANOW, &raw) == 0;
  }
  out_ << kEnter << std::flush;
}

TerminalSession::~TerminalSession() {
  out_ << kLeave << std::flush;
  if (raw_) tcsetattr(in_fd_, TCSANOW, &saved_);
}

Keys TerminalSession::WaitForKeys(std::chrono::milliseconds wait) {
  if (!raw_) {
    SleepUntil(std::chrono::steady_clock::now() + wait);
    return {};
  }
  // Slices short enough that a stop request is seen at once.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (!StopRequested()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    struct pollfd fd {
      in_fd_, POLLIN, 0
    };
    if (poll(&fd, 1, static_cast<int>(std::min<long>(left.count(), 20))) <= 0) continue;
    char buf[64];
    const ssize_t n = read(in_fd_, buf, sizeof(buf));
    if (n <= 0) continue;
    if (Keys keys = ParseKeys(std::string_view(buf, static_cast<std::size_t>(n))); keys.any()) {
      return keys;
    }
  }
  return {};
}

}  // namespace gpuscope::cli

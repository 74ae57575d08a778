// The terminal side of `gpuscope top`, as nvtop and htop users expect it: the
// alternate screen (the shell's screen and scrollback come back untouched on
// exit), a hidden cursor, and keys read one at a time without echo: q, Q and
// Esc quit; j/k and the arrow keys move the selection.
//
// TerminalSession restores everything in its destructor, so a quit key,
// SIGINT and SIGTERM (cli/stop.h's flag ends the loop, then the destructor
// runs) all leave a clean terminal.
//
// Thread safety: one session at a time, on main's thread; ParseKeys is pure.
#pragma once

#include <termios.h>

#include <chrono>
#include <iosfwd>
#include <string_view>

namespace gpuscope::cli {

// What keys read from the terminal ask for.
struct Keys {
  bool quit = false;
  int move = 0;  // selection rows: + down, - up
  bool any() const { return quit || move != 0; }
};

// Parses a burst of bytes read from the terminal: every key counts ("jjk" is
// one row down). q, Q and a lone Esc quit; Esc [ A / Esc O A is the up arrow,
// Esc [ B / Esc O B the down arrow; other bytes are ignored.
Keys ParseKeys(std::string_view bytes);

class TerminalSession {
 public:
  // Enters the alternate screen on `out` and, when `in_fd` is a terminal,
  // turns off its line buffering and echo.
  TerminalSession(std::ostream& out, int in_fd);
  ~TerminalSession();
  TerminalSession(const TerminalSession&) = delete;
  TerminalSession& operator=(const TerminalSession&) = delete;

  // Waits up to `wait` for keys (none when none came or stdin is no
  // terminal; returns early when a stop was requested).
  Keys WaitForKeys(std::chrono::milliseconds wait);

 private:
  std::ostream& out_;
  int in_fd_;
  bool raw_ = false;
  struct termios saved_ {};
};

}  // namespace gpuscope::cli

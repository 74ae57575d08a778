#include "cli/run_child.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

extern char** environ;

namespace gpuscope::cli {
namespace {

// The signals gpuscope passes on to the command's group.
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

sigset_t RunSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (int s : kForwarded) sigaddset(&set, s);
  return set;
}

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// The terminal gpuscope's stdin is, when gpuscope's group is in its
// foreground; -1 otherwise (a pipe, CI, or started in the background).
int ForegroundTerminal() {
  if (!isatty(STDIN_FILENO)) return -1;
  return tcgetpgrp(STDIN_FILENO) == getpgrp() ? STDIN_FILENO : -1;
}

// tcsetpgrp from a background group raises SIGTTOU unless it is blocked.
void SetForeground(pid_t group) {
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  pthread_sigmask(SIG_BLOCK, &ttou, &old);
  tcsetpgrp(STDIN_FILENO, group);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace

Resolved ResolveCommand(const std::string& name, const char* path_env) {
  if (name.empty()) return {"", 127, "'': command not found"};
  if (name.find('/') != std::string::npos) {
    if (IsExecutableFile(name)) return {name, 0, ""};
    if (Exists(name)) return {"", 126, name + ": not an executable file (or permission denied)"};
    return {"", 127, name + ": no such file"};
  }
  // An unset PATH searches the shell's default.
  std::string dirs = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  bool seen = false;
  std::size_t at = 0;
  while (at <= dirs.size()) {
    std::size_t colon = dirs.find(':', at);
    if (colon == std::string::npos) colon = dirs.size();
    std::string dir = dirs.substr(at, colon - at);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return {candidate, 0, ""};
    seen = seen || Exists(candidate);
    at = colon + 1;
  }
  if (seen) return {"", 126, name + ": permission denied (found on PATH, not executable)"};
  return {"", 127, name + ": command not found"};
}

void BlockRunSignals() {
  sigset_t set = RunSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
}

Child::~Child() {
  if (owns_terminal_) TakeTerminal();
}

Status Child::Start(const std::string& path, const std::vector<std::string>& argv) {
  // Everything the child needs is built before fork: between fork and exec a
  // threaded process may only make async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    return Status::Internal(std::string("gpuscope run: pipe: ") + std::strerror(errno));
  }
  const pid_t parent = getpid();
  const int terminal = ForegroundTerminal();
  sigset_t unblocked;
  sigemptyset(&unblocked);
  const pid_t pid = fork();
  if (pid < 0) {
    close(report[0]), close(report[1]);
    return Status::Internal(std::string("gpuscope run: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close(report[0]);
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(128 + SIGKILL);  // gpuscope already died
    if (terminal >= 0) SetForeground(getpgrp());
    pthread_sigmask(SIG_SETMASK, &unblocked, nullptr);
    execve(path.c_str(), args.data(), environ);
    const int error = errno;
    ssize_t ignored = write(report[1], &error, sizeof error);
    (void)ignored;
    _exit(error == ENOENT ? 127 : 126);
  }
  close(report[1]);
  setpgid(pid, pid);  // as the child does: whichever runs first
  pid_ = pid;
  if (terminal >= 0) {
    SetForeground(pid);
    owns_terminal_ = true;
  }
  int error = 0;
  ssize_t n;
  do {
    n = read(report[0], &error, sizeof error);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == sizeof error) {
    // exec failed: the child exits at once with the shell's status.
    int status = 0;
    waitpid(pid, &status, 0);
    pid_ = -1;
    if (owns_terminal_) TakeTerminal();
    return Status::Internal(argv[0] + ": " + std::strerror(error));
  }
  return Status::Ok();
}

void Child::TakeTerminal() {
  SetForeground(getpgrp());
  owns_terminal_ = false;
}

void Child::GiveTerminal() {
  SetForeground(pid_);
  owns_terminal_ = true;
}

Outcome Child::Wait(std::chrono::milliseconds period, const std::function<void()>& tick) {
  const sigset_t set = RunSignals();
  const timespec timeout{static_cast<time_t>(period.count() / 1000),
                         static_cast<long>(period.count() % 1000) * 1000000};
  for (;;) {
    siginfo_t info{};
    const int signal = sigtimedwait(&set, &info, &timeout);
    if (signal < 0) {
      if (tick) tick();
      continue;
    }
    if (signal != SIGCHLD) {
      // The command's whole group, as a terminal does; the command alone if
      // it left its group.
      if (kill(-pid_, signal) != 0) kill(pid_, signal);
      continue;
    }
    // Reap every child that changed: the command, and orphans it left.
    for (;;) {
      int status = 0;
      const pid_t done = waitpid(-1, &status, WNOHANG | WUNTRACED);
      if (done <= 0) break;
      if (done != pid_) continue;  // an orphan reparented to us
      if (WIFSTOPPED(status)) {
        // Ctrl-Z stopped the command: stop with it, and resume it with us.
        const bool had_terminal = owns_terminal_;
        if (had_terminal) TakeTerminal();
        raise(SIGSTOP);
        if (had_terminal) GiveTerminal();
        kill(-pid_, SIGCONT);
        continue;
      }
      if (owns_terminal_) TakeTerminal();
      pid_ = -1;
      if (WIFSIGNALED(status)) return {128 + WTERMSIG(status), WTERMSIG(status)};
      return {WEXITSTATUS(status), 0};
    }
  }
}

}  // namespace gpuscope::cli

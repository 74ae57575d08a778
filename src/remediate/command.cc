#include "remediate/command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

extern char** environ;

namespace gpuscope::remediate {
namespace {

constexpr std::size_t kMaxOutput = 1 << 20;

// Reads `fd` until EOF or the deadline; false on the deadline.
bool ReadUntil(int fd, std::chrono::steady_clock::time_point deadline, std::string& out) {
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return ready == 0 ? false : true;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    if (out.size() < kMaxOutput) out.append(buf, static_cast<std::size_t>(n));
  }
}

// The agent's environment with `env`'s entries in place of those they name.
std::vector<std::string> Environment(const std::vector<std::string>& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('=') + 1);
    const bool replaced = std::any_of(env.begin(), env.end(),
                                      [&](const std::string& x) { return x.starts_with(name); });
    if (!replaced) out.emplace_back(entry);
  }
  out.insert(out.end(), env.begin(), env.end());
  return out;
}

}  // namespace

Result<CommandOutput> RunCommand(const std::vector<std::string>& argv, double timeout_s,
                                 const std::vector<std::string>& env) {
  if (argv.empty()) return Status::InvalidArgument("no program to run");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return Status::Internal(fmt::format("pipe: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  // The agent blocks SIGTERM, SIGINT and SIGHUP in its threads (cli/serve.cc):
  // the child starts with none blocked.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // A group of its own: on the deadline the whole group is killed, so a
  // child the program forked (scontrol's helpers, a wrapper script's
  // command) does not outlive it, one orphan per retry.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> environment = Environment(env);
  std::vector<char*> envp;
  for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    return Status::Unavailable(spawned == ENOENT
                                   ? fmt::format("{}: not found in PATH", argv[0])
                                   : fmt::format("{}: {}", argv[0], std::strerror(spawned)));
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  CommandOutput out;
  const bool finished = ReadUntil(fds[0], deadline, out.output);
  close(fds[0]);
  if (!finished) kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!finished) {
    return Status::Unavailable(
        fmt::format("{} did not finish within {} s (killed)", argv[0], timeout_s));
  }
  if (WIFSIGNALED(status)) {
    return Status::Unavailable(
        fmt::format("{} was killed by signal {}", argv[0], WTERMSIG(status)));
  }
  out.exit_code = WEXITSTATUS(status);
  return out;
}

}  // namespace gpuscope::remediate

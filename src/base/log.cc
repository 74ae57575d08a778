#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <iterator>

namespace gpuscope::log {
namespace {

constexpr std::string_view kNames[] = {"trace", "debug",    "info", "warning",
                                       "error", "critical", "off"};

std::atomic<Level> threshold{Level::kInfo};

}  // namespace

void SetLevel(Level level) { threshold.store(level, std::memory_order_relaxed); }

Level GetLevel() { return threshold.load(std::memory_order_relaxed); }

std::optional<Level> ParseLevel(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kNames); ++i) {
    if (name == kNames[i]) return static_cast<Level>(i);
  }
  if (name == "warn") return Level::kWarn;
  if (name == "err") return Level::kError;
  return std::nullopt;
}

void Write(Level level, fmt::string_view format, fmt::format_args args) try {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  fmt::memory_buffer line;
  fmt::format_to(std::back_inserter(line),
                 "[{}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}] [gpuscope] [{}] ", local.tm_year + 1900,
                 local.tm_mon + 1, local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec, millis,
                 kNames[static_cast<std::size_t>(level)]);
  fmt::vformat_to(std::back_inserter(line), format, args);
  line.push_back('\n');
  std::string_view rest(line.data(), line.size());
  while (!rest.empty()) {  // one write(2); another only for what a short write left
    const ssize_t written = ::write(STDERR_FILENO, rest.data(), rest.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    rest.remove_prefix(static_cast<std::size_t>(written));
  }
} catch (...) {  // out of memory: the line is lost, the caller goes on
}

}  // namespace gpuscope::log

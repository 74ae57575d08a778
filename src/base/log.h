// gpuscope's log: lines on stderr in the format spdlog wrote them, which this replaces (its
// shared library held about 0.5 MB of the agent's resident memory):
//   [2026-12-05 14:03:07.123] [gpuscope] [warning] message
// local time, the level as trace, debug, info, warning, error or critical.
//
// Contracts: a message below the level (default kInfo) is neither formatted nor written. Each
// line goes to stderr in one write(2) (only a short write's rest in a second), so lines of
// several threads never interleave. Logging never throws. Each module (base/module.h) has its own
// copy of the level: whoever loads one hands it the process's level.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string_view>
#include <utility>

namespace gpuscope::log {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kCritical, kOff };

void SetLevel(Level level);
Level GetLevel();

// The level spdlog::level::from_str named so: trace, debug, info, warning or warn, error or
// err, critical, off. nullopt for any other name (from_str answered off).
std::optional<Level> ParseLevel(std::string_view name);

// Formats the message and writes its line; callers have checked the level.
void Write(Level level, fmt::string_view format, fmt::format_args args);

template <typename... Args>
void Log(Level level, fmt::format_string<Args...> format, Args&&... args) {
  if (level < GetLevel()) return;
  Write(level, format, fmt::make_format_args(args...));
}

template <typename... Args>
void Debug(fmt::format_string<Args...> format, Args&&... args) {
  Log(Level::kDebug, format, std::forward<Args>(args)...);
}
template <typename... Args>
void Info(fmt::format_string<Args...> format, Args&&... args) {
  Log(Level::kInfo, format, std::forward<Args>(args)...);
}
template <typename... Args>
void Warn(fmt::format_string<Args...> format, Args&&... args) {
  Log(Level::kWarn, format, std::forward<Args>(args)...);
}
template <typename... Args>
void Error(fmt::format_string<Args...> format, Args&&... args) {
  Log(Level::kError, format, std::forward<Args>(args)...);
}
template <typename... Args>
void Critical(fmt::format_string<Args...> format, Args&&... args) {
  Log(Level::kCritical, format, std::forward<Args>(args)...);
}

}  // namespace gpuscope::log

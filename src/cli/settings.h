// Settings of `gpuscope serve`: one table names every setting once, with its
// command-line flags (dcgm-exporter's where it has one), its GPUSCOPE_*
// environment variable, its YAML key and its default. Flags win over the
// environment, which wins over the YAML file (--config), which wins over the
// defaults. docs/configuration.md is generated from the same table.
//
// Every value is checked once, in ResolveSettings, against its row: numbers
// must be finite and inside [min, max] (durations in seconds), switches
// true/false/1/0/yes/no, text valid UTF-8 without control characters. The
// modules that read Settings afterwards can trust the values.
//
// Thread safety: Settings is a plain value; the table is immutable.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::cli {

enum class SettingType : uint8_t {
  kText,
  kSwitch,    // a flag without a value ("true" when given)
  kInteger,   // whole number
  kNumber,    // finite decimal number
  kDuration,  // "250ms", "10s", "5m", "1h" or bare milliseconds
};

struct SettingDef {
  std::string_view key;         // YAML key and --long flag
  std::string_view short_flag;  // "-a" or empty
  std::string_view env;         // GPUSCOPE_...
  std::string_view default_value;
  SettingType type;
  double min;  // numeric types: inclusive range (durations in seconds)
  double max;
  std::string_view help;

  bool is_switch() const { return type == SettingType::kSwitch; }
};

extern const std::vector<SettingDef> kServeSettings;

// Resolved values, every setting present (defaults filled in).
class Settings {
 public:
  const std::string& Get(std::string_view key) const;
  bool Flag(std::string_view key) const;
  Result<long> Integer(std::string_view key) const;
  // Durations accept "250ms", "10s", "5m", "1h" or bare milliseconds.
  Result<double> Seconds(std::string_view key) const;
  Result<double> Number(std::string_view key) const;
  void Set(std::string_view key, std::string value) {
    values_[std::string(key)] = std::move(value);
  }
  // Where each value came from ("flag", "env", "file", "default"), for logs.
  const std::string& Origin(std::string_view key) const;
  void SetOrigin(std::string_view key, std::string origin) {
    origins_[std::string(key)] = std::move(origin);
  }

 private:
  std::map<std::string, std::string, std::less<>> values_;
  std::map<std::string, std::string, std::less<>> origins_;
};

using EnvLookup = std::function<const char*(const char*)>;

// Resolves settings from arguments (after the subcommand), the environment and
// the YAML text of --config (read by the caller; empty when none).
Result<Settings> ResolveSettings(const std::vector<SettingDef>& table,
                                 std::span<const std::string> args, const EnvLookup& env,
                                 std::string_view yaml_text, std::string_view yaml_name);

// Checks one value against its row; the error names the setting.
Status CheckSetting(const SettingDef& def, std::string_view value);

// A duration in seconds ("250ms", "10s", "5m", "1h", bare ms); finite only.
Result<double> ParseDuration(std::string_view text);

// The range of a numeric row as the docs show it ("100ms..24h", "1..100000").
std::string RangeText(const SettingDef& def);

// The value of --config / GPUSCOPE_CONFIG, looked up before full resolution.
std::string ConfigPath(std::span<const std::string> args, const EnvLookup& env);

// Markdown table of the settings (docs/configuration.md).
std::string SettingsMarkdown(const std::vector<SettingDef>& table);

}  // namespace gpuscope::cli

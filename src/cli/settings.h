// Settings of `gpuscope serve`: one table names every setting once, with its
// command-line flags (dcgm-exporter's where it has one), its GPUSCOPE_*
// environment variable, its YAML key and its default. Flags win over the
// environment, which wins over the YAML file (--config), which wins over the
// defaults. docs/configuration.md is generated from the same table.
//
// Thread safety: Settings is a plain value; the table is immutable.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::cli {

struct SettingDef {
  std::string_view key;         // YAML key and --long flag
  std::string_view short_flag;  // "-a" or empty
  std::string_view env;         // GPUSCOPE_...
  std::string_view default_value;
  bool is_switch;  // a flag without a value ("true" when given)
  std::string_view help;
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

// The value of --config / GPUSCOPE_CONFIG, looked up before full resolution.
std::string ConfigPath(std::span<const std::string> args, const EnvLookup& env);

// Markdown table of the settings (docs/configuration.md).
std::string SettingsMarkdown(const std::vector<SettingDef>& table);

}  // namespace gpuscope::cli

#include "cli/settings.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdlib>

namespace gpuscope::cli {

// clang-format off
const std::vector<SettingDef> kServeSettings = {
  {"config", "", "GPUSCOPE_CONFIG", "", false, "YAML file with any of these settings (keys as below)."},
  {"address", "-a", "GPUSCOPE_ADDRESS", ":9400", false, "Listen address: ':9400', 'host:port', '[::1]:9400'."},
  {"collect-interval", "-c", "GPUSCOPE_COLLECT_INTERVAL", "1000", false,
   "Fast sampling interval in ms (utilization, memory, power, clocks, temperature, GPM); 100 at least."},
  {"slow-interval", "", "GPUSCOPE_SLOW_INTERVAL", "10s", false,
   "Slow sampling interval (ECC, retired pages, remapped rows, limits, NVLink errors, processes)."},
  {"pcie-interval", "", "GPUSCOPE_PCIE_INTERVAL", "5s", false,
   "PCIe throughput interval (a slow NVML call; GPUs with GPM use GPM instead)."},
  {"window", "", "GPUSCOPE_WINDOW", "10m", false, "Trailing window of samples kept in memory for analysis and peaks."},
  {"collectors", "-f", "GPUSCOPE_COLLECTORS", "", false,
   "dcgm-exporter counters CSV; empty: dcgm-exporter's default counters."},
  {"metrics", "", "GPUSCOPE_METRICS", "both", false, "Families to export: dcgm, native or both."},
  {"no-hostname", "-n", "GPUSCOPE_NO_HOSTNAME", "false", true, "Omit the Hostname label (dcgm-exporter -n)."},
  {"hostname", "", "GPUSCOPE_HOSTNAME", "", false,
   "Value of the hostname label; empty: the machine's host name (in Kubernetes, the node name)."},
  {"hostname-label", "", "GPUSCOPE_HOSTNAME_LABEL", "Hostname", false,
   "Name of the hostname label: Hostname, or hostname as dcgm-exporter after 4.8."},
  {"devices", "-d", "GPUSCOPE_DEVICES", "f", false,
   "Devices to watch: f (all), g[:ids] (GPUs), i[:ids] (MIG instances), as dcgm-exporter -d."},
  {"web-config-file", "", "GPUSCOPE_WEB_CONFIG_FILE", "", false,
   "exporter-toolkit web-config YAML: TLS, client certificates, basic auth."},
  {"xid-count-window-size", "-x", "GPUSCOPE_XID_COUNT_WINDOW_SIZE", "300000", false,
   "Window of DCGM_EXP_XID_ERRORS_COUNT in ms."},
  {"max-connections", "", "GPUSCOPE_MAX_CONNECTIONS", "40", false, "Concurrent HTTP connections served."},
  {"request-timeout", "", "GPUSCOPE_REQUEST_TIMEOUT", "10s", false, "Idle HTTP connection timeout."},
  {"stale-after", "", "GPUSCOPE_STALE_AFTER", "0", false,
   "Age after which /health reports sampling as stale; 0: three fast intervals, at least 3 s."},
  {"gpu-hour-price", "", "GPUSCOPE_GPU_HOUR_PRICE", "0", false,
   "Price of one GPU-hour; when set, gpuscope_wasted_cost_total counts idle-held cost."},
  {"kubernetes", "-k", "GPUSCOPE_KUBERNETES", "false", true, "Accepted for dcgm-exporter compatibility; pod labels come later."},
  {"kubernetes-gpu-id-type", "", "GPUSCOPE_KUBERNETES_GPU_ID_TYPE", "uid", false,
   "How kubelet names GPUs: uid or device-name (dcgm-exporter compatibility)."},
  {"nvml-lib", "", "GPUSCOPE_NVML_LIB", "libnvidia-ml.so.1", false, "NVML library to load."},
  {"simulate", "", "GPUSCOPE_SIMULATE", "", false, "Run on the NVML simulator with this scenario (name or path)."},
  {"log-level", "", "GPUSCOPE_LOG_LEVEL", "info", false, "debug, info, warn or error."},
};
// clang-format on

namespace {

const std::string kEmpty;

const SettingDef* FindDef(const std::vector<SettingDef>& table, std::string_view flag) {
  for (const SettingDef& def : table) {
    if (flag == def.short_flag ||
        (flag.size() > 2 && flag.substr(2) == def.key && flag.substr(0, 2) == "--")) {
      return &def;
    }
  }
  return nullptr;
}

Status ApplyArgs(const std::vector<SettingDef>& table, std::span<const std::string> args,
                 Settings& out) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool has_value = false;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    const SettingDef* def = FindDef(table, flag);
    if (def == nullptr) return Status::InvalidArgument("unknown option " + args[i]);
    if (def->is_switch) {
      value = has_value ? value : "true";
    } else if (!has_value) {
      if (i + 1 >= args.size()) return Status::InvalidArgument("option " + flag + " needs a value");
      value = args[++i];
    }
    out.Set(def->key, value);
    out.SetOrigin(def->key, "flag");
  }
  return Status::Ok();
}

Status ApplyYaml(const std::vector<SettingDef>& table, std::string_view text, std::string_view name,
                 Settings& out) {
  if (text.empty()) return Status::Ok();
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(std::string(name) + ":" + std::to_string(e.mark.line + 1) +
                                   ": " + e.msg);
  }
  if (root.IsNull()) return Status::Ok();
  if (!root.IsMap()) return Status::InvalidArgument(std::string(name) + ":1: expected a mapping");
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    const std::string where = std::string(name) + ":" + std::to_string(item.first.Mark().line + 1);
    if (FindDef(table, "--" + key) == nullptr) {
      return Status::InvalidArgument(where + ": unknown setting '" + key + "'");
    }
    if (!item.second.IsScalar()) {
      return Status::InvalidArgument(where + ": '" + key + "' must be a single value");
    }
    out.Set(key, item.second.as<std::string>());
    out.SetOrigin(key, "file");
  }
  return Status::Ok();
}

}  // namespace

const std::string& Settings::Get(std::string_view key) const {
  auto it = values_.find(key);
  return it == values_.end() ? kEmpty : it->second;
}

const std::string& Settings::Origin(std::string_view key) const {
  auto it = origins_.find(key);
  return it == origins_.end() ? kEmpty : it->second;
}

bool Settings::Flag(std::string_view key) const {
  const std::string& v = Get(key);
  return v == "true" || v == "1" || v == "yes";
}

Result<long> Settings::Integer(std::string_view key) const {
  const std::string& v = Get(key);
  long out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size()) {
    return Status::InvalidArgument(std::string(key) + ": '" + v + "' is not an integer");
  }
  return out;
}

Result<double> Settings::Number(std::string_view key) const {
  const std::string& v = Get(key);
  double out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size()) {
    return Status::InvalidArgument(std::string(key) + ": '" + v + "' is not a number");
  }
  return out;
}

Result<double> Settings::Seconds(std::string_view key) const {
  const std::string& v = Get(key);
  double number = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), number);
  const std::string_view unit(end, v.data() + v.size() - end);
  if (ec != std::errc() || number < 0) {
    return Status::InvalidArgument(std::string(key) + ": '" + v + "' is not a duration");
  }
  if (unit.empty() || unit == "ms") return number / 1000;
  if (unit == "s") return number;
  if (unit == "m") return number * 60;
  if (unit == "h") return number * 3600;
  return Status::InvalidArgument(std::string(key) + ": '" + v +
                                 "' is not a duration (use ms, s, m or h)");
}

std::string ConfigPath(std::span<const std::string> args, const EnvLookup& env) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind("--config=", 0) == 0) return args[i].substr(9);
  }
  const char* from_env = env("GPUSCOPE_CONFIG");
  return from_env ? from_env : "";
}

Result<Settings> ResolveSettings(const std::vector<SettingDef>& table,
                                 std::span<const std::string> args, const EnvLookup& env,
                                 std::string_view yaml_text, std::string_view yaml_name) {
  Settings out;
  for (const SettingDef& def : table) {
    out.Set(def.key, std::string(def.default_value));
    out.SetOrigin(def.key, "default");
  }
  GPUSCOPE_RETURN_IF_ERROR(ApplyYaml(table, yaml_text, yaml_name, out));
  for (const SettingDef& def : table) {
    if (const char* value = env(std::string(def.env).c_str()); value != nullptr) {
      out.Set(def.key, value);
      out.SetOrigin(def.key, "env");
    }
  }
  GPUSCOPE_RETURN_IF_ERROR(ApplyArgs(table, args, out));
  return out;
}

std::string SettingsMarkdown(const std::vector<SettingDef>& table) {
  std::string out =
      "| setting (YAML key, --flag) | short | environment | default | meaning |\n"
      "|---|---|---|---|---|\n";
  for (const SettingDef& def : table) {
    out += "| `" + std::string(def.key) + "` | " +
           (def.short_flag.empty() ? "" : "`" + std::string(def.short_flag) + "`") + " | `" +
           std::string(def.env) + "` | " +
           (def.default_value.empty() ? "" : "`" + std::string(def.default_value) + "`") + " | " +
           std::string(def.help) + " |\n";
  }
  return out;
}

}  // namespace gpuscope::cli

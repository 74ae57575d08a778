#include "cli/settings.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "base/text.h"
#include "cli/options.h"

namespace gpuscope::cli {

// clang-format off
using enum SettingType;

// Ranges: durations in seconds. -c reaches 24 h for dcgm-exporter habits
// (-c 30000) and hour-long polls; the window is bounded by memory.
const std::vector<SettingDef> kServeSettings = {
  {"config", "", "GPUSCOPE_CONFIG", "", kText, 0, 0,
   "YAML file with any of these settings (keys as below)."},
  {"address", "-a", "GPUSCOPE_ADDRESS", ":9400", kText, 0, 0,
   "Listen address: ':9400', 'host:port', '[::1]:9400'."},
  {"collect-interval", "-c", "GPUSCOPE_COLLECT_INTERVAL", "1000", kDuration, 0.1, 86400,
   "Fast sampling interval, bare numbers in ms (utilization, memory, power, clocks, temperature, GPM)."},
  {"slow-interval", "", "GPUSCOPE_SLOW_INTERVAL", "10s", kDuration, 0.1, 86400,
   "Slow sampling interval (ECC, retired pages, remapped rows, limits, NVLink errors, processes)."},
  {"pcie-interval", "", "GPUSCOPE_PCIE_INTERVAL", "5s", kDuration, 0.1, 86400,
   "PCIe throughput interval (a slow NVML call; GPUs with GPM use GPM instead)."},
  {"window", "", "GPUSCOPE_WINDOW", "10m", kDuration, 1, 86400,
   "Trailing window of samples kept in memory for analysis and peaks."},
  {"collectors", "-f", "GPUSCOPE_COLLECTORS", "", kText, 0, 0,
   "dcgm-exporter counters CSV; empty: dcgm-exporter's default counters."},
  {"metrics", "", "GPUSCOPE_METRICS", "both", kText, 0, 0,
   "Families to export: dcgm, native or both."},
  {"profile", "", "GPUSCOPE_PROFILE", "lean", kText, 0, 0,
   "Detail on the wire: lean (what the shipped dashboards and rules read, at most 60 series per H100) or full (every series; docs/scaling.md)."},
  {"nvlink-per-link", "", "GPUSCOPE_NVLINK_PER_LINK", "false", kSwitch, 0, 0,
   "Lean profile: per-link NVLink series for every link, not only for links that are down or counted an error."},
  {"no-hostname", "-n", "GPUSCOPE_NO_HOSTNAME", "false", kSwitch, 0, 0,
   "Omit the Hostname label (dcgm-exporter -n)."},
  {"hostname", "", "GPUSCOPE_HOSTNAME", "", kText, 0, 0,
   "Value of the hostname label; empty: the machine's host name (in Kubernetes, the node name)."},
  {"hostname-label", "", "GPUSCOPE_HOSTNAME_LABEL", "Hostname", kText, 0, 0,
   "Name of the hostname label: Hostname, or hostname as dcgm-exporter after 4.8."},
  {"devices", "-d", "GPUSCOPE_DEVICES", "f", kText, 0, 0,
   "Devices to watch: f (all), g[:ids] (GPUs), i[:ids] (MIG instances), as dcgm-exporter -d."},
  {"web-config-file", "", "GPUSCOPE_WEB_CONFIG_FILE", "", kText, 0, 0,
   "exporter-toolkit web-config YAML: TLS, client certificates, basic auth."},
  {"xid-count-window-size", "-x", "GPUSCOPE_XID_COUNT_WINDOW_SIZE", "300000", kInteger, 1000, 86400000,
   "Window of DCGM_EXP_XID_ERRORS_COUNT in ms."},
  {"nvlink-training", "", "GPUSCOPE_NVLINK_TRAINING", "3m", kDuration, 0, 3600,
   "After a driver load, GPU reset or reboot, an NVLink link not up yet trains for this long before it counts as down (one that was up counts at once)."},
  {"max-connections", "", "GPUSCOPE_MAX_CONNECTIONS", "1024", kInteger, 1, 100000,
   "Concurrent HTTP connections served; more wait in the kernel's accept queue."},
  {"max-connections-per-client", "", "GPUSCOPE_MAX_CONNECTIONS_PER_CLIENT", "32", kInteger, 0, 100000,
   "Concurrent HTTP connections from one client address, at most max-connections; more are closed at once. 0: no limit."},
  {"request-timeout", "", "GPUSCOPE_REQUEST_TIMEOUT", "10s", kDuration, 1, 3600,
   "Idle HTTP connection timeout (restarts whenever a byte moves)."},
  {"request-head-timeout", "", "GPUSCOPE_REQUEST_HEAD_TIMEOUT", "5s", kDuration, 0.1, 3600,
   "A request line and headers must arrive within this, however slowly they trickle in."},
  {"stale-after", "", "GPUSCOPE_STALE_AFTER", "0", kDuration, 0, 86400,
   "Age after which a GPU's data counts as stale for /health; 0: three fast intervals, at least 3 s."},
  {"gpu-hour-price", "", "GPUSCOPE_GPU_HOUR_PRICE", "0", kNumber, 0, 1e6,
   "Price of one GPU-hour; when set, gpuscope_wasted_cost_total counts idle-held cost."},
  {"jobs-keep-ended", "", "GPUSCOPE_JOBS_KEEP_ENDED", "24h", kDuration, 0, 31 * 86400,
   "How long /api/v1/jobs keeps a job, pod or workload after it ended (docs/reports.md)."},
  {"jobs-max-ended", "", "GPUSCOPE_JOBS_MAX_ENDED", "1000", kInteger, 0, 1000000,
   "Ended jobs, pods and workloads /api/v1/jobs keeps at most; the oldest go first."},
  {"jobs-max-bytes", "", "GPUSCOPE_JOBS_MAX_BYTES", "16777216", kInteger, 65536, 1073741824,
   "Bytes the job ledger may hold, running and ended holders together (an upper estimate); past it the ended ones that ended first go first."},
  {"kubernetes", "-k", "GPUSCOPE_KUBERNETES", "false", kSwitch, 0, 0,
   "Add pod, namespace and container labels from the kubelet's pod-resources API (docs/attribution.md)."},
  {"kubernetes-gpu-id-type", "", "GPUSCOPE_KUBERNETES_GPU_ID_TYPE", "uid", kText, 0, 0,
   "How kubelet names GPUs: uid or device-name (dcgm-exporter compatibility; both forms are understood)."},
  {"pod-resources-kubelet-socket", "", "GPUSCOPE_POD_RESOURCES_KUBELET_SOCKET",
   "/var/lib/kubelet/pod-resources/kubelet.sock", kText, 0, 0,
   "The kubelet's pod-resources socket (mount its directory, not the socket, to survive kubelet restarts)."},
  {"nvidia-resource-names", "", "GPUSCOPE_NVIDIA_RESOURCE_NAMES", "", kText, 0, 0,
   "More comma-separated resource names that grant GPUs, besides nvidia.com/gpu and nvidia.com/mig-*."},
  {"hpc-job-mapping-dir", "", "GPUSCOPE_HPC_JOB_MAPPING_DIR", "", kText, 0, 0,
   "Directory of per-GPU Slurm job files (dcgm-exporter's format) for the hpc_job label; empty: off."},
  {"attribution-refresh", "", "GPUSCOPE_ATTRIBUTION_REFRESH", "10s", kDuration, 0.1, 3600,
   "How often pod and job attribution is refreshed (also at once when the kubelet restarts)."},
  {"attribution-labels", "", "GPUSCOPE_ATTRIBUTION_LABELS", "series", kText, 0, 0,
   "Where pod, job and workload labels go: series (on every GPU series, as dcgm-exporter) or info (one gpuscope_gpu_holder_info series per holder; a new job adds no GPU series; docs/fleet.md)."},
  {"proc-root", "", "GPUSCOPE_PROC_ROOT", "/proc", kText, 0, 0,
   "Where the host's /proc is: GPU processes' cgroups name their container and Slurm job (mount the host's /proc in a container)."},
  {"container-runtime-socket", "", "GPUSCOPE_CONTAINER_RUNTIME_SOCKET", "", kText, 0, 0,
   "CRI socket (containerd: /run/containerd/containerd.sock) naming the pod of each GPU process's container; empty: off."},
  {"process-series", "", "GPUSCOPE_PROCESS_SERIES", "0", kInteger, 0, 64,
   "Per-process series per GPU or MIG instance: the N using the most memory, the rest summed as pid=\"other\"; 0: none."},
  {"process-names", "", "GPUSCOPE_PROCESS_NAMES", "false", kSwitch, 0, 0,
   "Export process names (process_name label) and use them as the workload of GPUs no pod or job holds (privacy: off)."},
  {"otlp-listen-address", "", "GPUSCOPE_OTLP_LISTEN_ADDRESS", "127.0.0.1:4318", kText, 0, 0,
   "OTLP/HTTP metrics receiver for application KPIs (POST /v1/metrics, docs/app-kpis.md), with the TLS and auth of web-config-file; loopback by default (docs/security.md); empty: off."},
  {"otlp-max-request-bytes", "", "GPUSCOPE_OTLP_MAX_REQUEST_BYTES", "4194304", kInteger, 1024, 268435456,
   "Largest OTLP request body, and largest after gzip inflation; larger ones get 413."},
  {"otlp-max-points-per-second", "", "GPUSCOPE_OTLP_MAX_POINTS_PER_SECOND", "100000", kInteger, 1, 100000000,
   "OTLP data points accepted per second (bursts of one second); more get 429 with Retry-After."},
  {"otlp-max-points-per-request", "", "GPUSCOPE_OTLP_MAX_POINTS_PER_REQUEST", "20000", kInteger, 1, 10000000,
   "OTLP data points in one request at most, counted on the wire before parsing; more get 413."},
  {"otlp-max-elements-per-request", "", "GPUSCOPE_OTLP_MAX_ELEMENTS_PER_REQUEST", "100000", kInteger, 10, 100000000,
   "OTLP messages, repeated values and unknown fields in one request at most (a point is 1, an attribute 2; about 150 bytes each parsed); more get 413."},
  {"otlp-max-series", "", "GPUSCOPE_OTLP_MAX_SERIES", "10000", kInteger, 1, 1000000,
   "Application series kept at most; points of new series beyond it are rejected (partial success)."},
  {"otlp-max-bytes", "", "GPUSCOPE_OTLP_MAX_BYTES", "16777216", kInteger, 65536, 1073741824,
   "Bytes the application series may take (labels, values and buckets as kept and exported, docs/app-kpis.md); points of new series beyond are rejected."},
  {"otlp-sender-share", "", "GPUSCOPE_OTLP_SENDER_SHARE", "0.125", kNumber, 0.01, 1,
   "Part of otlp-max-series and otlp-max-bytes one sender (its peer address; a local one per uid) may take, at least 100 series and 256 KiB; 1: no share."},
  {"otlp-series-expiry", "", "GPUSCOPE_OTLP_SERIES_EXPIRY", "5m", kDuration, 1, 86400,
   "An application series not updated for this long is dropped."},
  {"kpi-mapping-file", "", "GPUSCOPE_KPI_MAPPING_FILE", "", kText, 0, 0,
   "YAML file renaming application metric names to the KPI names of docs/app-kpis.md; empty: built-in names only."},
  {"kpi-regression-window", "", "GPUSCOPE_KPI_REGRESSION_WINDOW", "2m", kDuration, 5, 3600,
   "kpi_regression: an application KPI's mean over this span against its mean over the hour before."},
  {"kpi-regression-threshold", "", "GPUSCOPE_KPI_REGRESSION_THRESHOLD", "0.2", kNumber, 0.01, 10,
   "kpi_regression: the relative rise of a duration KPI that counts (0.2: 20% slower)."},
  {"remediate", "", "GPUSCOPE_REMEDIATE", "", kText, 0, 0,
   "Act on fatal GPU faults (docs/runbooks.md): slurm (drain the node) or kubernetes (node condition GpuHealthy=False); empty: off."},
  {"remediate-dry-run", "", "GPUSCOPE_REMEDIATE_DRY_RUN", "false", kSwitch, 0, 0,
   "Remediation logs and counts what it would do and changes nothing."},
  {"remediate-findings", "", "GPUSCOPE_REMEDIATE_FINDINGS", "default", kText, 0, 0,
   "Comma-separated findings that act (docs/runbooks.md table); default: the fatal ones; add nvlink_down for nodes whose jobs need NVLink, fabric_unusable for GB200 NVL72 racks."},
  {"remediate-resume-after", "", "GPUSCOPE_REMEDIATE_RESUME_AFTER", "10m", kDuration, 1, 604800,
   "Resume a drain gpuscope wrote once the GPUs have been healthy this long."},
  {"remediate-breaker-fraction", "", "GPUSCOPE_REMEDIATE_BREAKER_FRACTION", "0.1", kNumber, 0, 1,
   "Circuit breaker: at most this share of the cluster's nodes drained by gpuscope; past it, only alerts."},
  {"remediate-breaker-min-nodes", "", "GPUSCOPE_REMEDIATE_BREAKER_MIN_NODES", "1", kInteger, 1, 1000000,
   "Circuit breaker: at least this many nodes may be drained by gpuscope, however small the cluster."},
  {"slurm-node", "", "GPUSCOPE_SLURM_NODE", "", kText, 0, 0,
   "Slurm node name to drain with --remediate slurm; empty: the short host name."},
  {"kubernetes-node", "", "GPUSCOPE_KUBERNETES_NODE", "", kText, 0, 0,
   "This Kubernetes node: the one --remediate kubernetes marks, and whose ResourceSlices name DRA-allocated GPUs (-k); empty: $NODE_NAME (set it from the downward API), else the short host name (remediation only)."},
  {"remediate-taint", "", "GPUSCOPE_REMEDIATE_TAINT", "false", kSwitch, 0, 0,
   "With --remediate kubernetes, also add the NoSchedule taint gpuscope.io/gpu-unhealthy (removed on resume)."},
  {"kubernetes-serviceaccount-dir", "", "GPUSCOPE_KUBERNETES_SERVICEACCOUNT_DIR", "/var/run/secrets/kubernetes.io/serviceaccount", kText, 0, 0,
   "Where the pod's service-account token, ca.crt and namespace are (in-cluster config for --remediate kubernetes and for reading ResourceSlices of DRA-allocated GPUs with -k; the breaker's Lease lives in that namespace)."},
  {"nvml-lib", "", "GPUSCOPE_NVML_LIB", "libnvidia-ml.so.1", kText, 0, 0,
   "NVML library to load."},
  {"simulate", "", "GPUSCOPE_SIMULATE", "", kText, 0, 0,
   "Run on the NVML simulator with this scenario (name or path)."},
  {"at", "", "GPUSCOPE_SIM_START_TIME", "", kText, 0, 0,
   "On the simulator, the scenario moment to start from: 0, 90s, 5m (a bare number is seconds); empty: the scenario's start, so its faults happen while the agent runs (one-shot commands default to 5m after the scenario's last change)."},
  {"log-level", "", "GPUSCOPE_LOG_LEVEL", "info", kText, 0, 0,
   "debug, info, warn or error."},
};
// clang-format on

namespace {

const std::string kEmpty;

// A finite number filling all of `text` (from_chars also takes "nan", "inf").
std::optional<double> FiniteNumber(std::string_view text, std::string_view* unit = nullptr) {
  double out = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || end == text.data() || !std::isfinite(out)) return std::nullopt;
  const std::string_view rest(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (unit != nullptr) {
    *unit = rest;
  } else if (!rest.empty()) {
    return std::nullopt;
  }
  return out;
}

std::string Quoted(std::string_view value) {
  return base::Concat({"'", base::Excerpt(value), "'"});
}

// "100ms", "3s", "10m", "24h": the shortest exact unit, for the docs.
std::string DurationText(double seconds) {
  auto whole = [](double v) { return std::fabs(v - std::round(v)) < 1e-9; };
  auto text = [](double v) { return std::to_string(std::llround(v)); };
  if (seconds == 0) return "0";
  if (seconds < 1 || !whole(seconds)) return text(seconds * 1000) + "ms";
  if (whole(seconds / 3600)) return text(seconds / 3600) + "h";
  if (whole(seconds / 60)) return text(seconds / 60) + "m";
  return text(seconds) + "s";
}

std::string NumberText(double value) {
  if (value == std::trunc(value) && std::fabs(value) < 1e15)
    return std::to_string(std::llround(value));
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

// The value of a numeric row in its range unit (seconds for durations).
Result<double> NumericValue(const SettingDef& def, std::string_view value) {
  if (def.type == SettingType::kDuration) return ParseDuration(value);
  if (def.type == SettingType::kInteger) {
    long long whole = 0;  // the same syntax Settings::Integer reads
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), whole);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty()) {
      return Status::InvalidArgument("is not a whole number");
    }
    return static_cast<double>(whole);
  }
  std::optional<double> number = FiniteNumber(value);
  if (!number) return Status::InvalidArgument("is not a finite number");
  return *number;
}

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
    if (def == nullptr) {
      std::vector<std::string> known;
      for (const SettingDef& d : table) {
        known.push_back("--" + std::string(d.key));
        if (!d.short_flag.empty()) known.emplace_back(d.short_flag);
      }
      return Status::InvalidArgument(UnknownOptionMessage(args[i], "serve", known));
    }
    if (def->is_switch()) {
      value = has_value ? value : "true";
    } else if (!has_value) {
      if (i + 1 >= args.size()) {
        return Status::InvalidArgument("Option " + flag +
                                       " needs a value; see gpuscope serve --help.");
      }
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
    const std::string where = std::string(name) + ":" + std::to_string(item.first.Mark().line + 1);
    const std::string key = item.first.IsScalar() ? item.first.Scalar() : "";
    if (FindDef(table, "--" + key) == nullptr) {
      return Status::InvalidArgument(where + ": unknown setting " + Quoted(key));
    }
    if (!item.second.IsScalar()) {
      return Status::InvalidArgument(where + ": '" + key + "' must be a single value");
    }
    out.Set(key, item.second.Scalar());
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
    return Status::InvalidArgument(std::string(key) + ": " + Quoted(v) + " is not an integer");
  }
  return out;
}

Result<double> Settings::Number(std::string_view key) const {
  const std::string& v = Get(key);
  std::optional<double> out = FiniteNumber(v);
  if (!out) {
    return Status::InvalidArgument(std::string(key) + ": " + Quoted(v) + " is not a finite number");
  }
  return *out;
}

Result<double> Settings::Seconds(std::string_view key) const {
  const std::string& v = Get(key);
  Result<double> out = ParseDuration(v);
  if (!out.ok()) {
    return Status::InvalidArgument(std::string(key) + ": " + Quoted(v) + " " +
                                   out.status().message());
  }
  return out;
}

std::string ConfigPath(std::span<const std::string> args, const EnvLookup& env) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind("--config=", 0) == 0) return args[i].substr(9);
  }
  const char* from_env = env("GPUSCOPE_CONFIG");
  return from_env ? from_env : "";
}

Result<double> ParseDuration(std::string_view text) {
  std::string_view unit;
  std::optional<double> number = FiniteNumber(text, &unit);
  if (!number) {
    return Status::InvalidArgument(
        "is not a finite duration (use ms, s, m or h; a bare number is ms)");
  }
  if (*number < 0) return Status::InvalidArgument("is negative");
  if (unit.empty() || unit == "ms") return *number / 1000;
  if (unit == "s") return *number;
  if (unit == "m") return *number * 60;
  if (unit == "h") return *number * 3600;
  return Status::InvalidArgument("is not a duration (use ms, s, m or h; a bare number is ms)");
}

std::string RangeText(const SettingDef& def) {
  switch (def.type) {
    case SettingType::kDuration:
      return DurationText(def.min) + ".." + DurationText(def.max);
    case SettingType::kInteger:
    case SettingType::kNumber:
      return NumberText(def.min) + ".." + NumberText(def.max);
    case SettingType::kSwitch:
      return "true, false";
    case SettingType::kText:
      break;
  }
  return "";
}

Status CheckSetting(const SettingDef& def, std::string_view value) {
  const std::string key(def.key);
  if (def.type == SettingType::kText) {
    std::string problem = base::TextProblem(value);
    if (problem.empty()) return Status::Ok();
    return Status::InvalidArgument(key + ": " + Quoted(value) + " " + problem);
  }
  if (def.type == SettingType::kSwitch) {
    for (std::string_view ok : {"true", "false", "1", "0", "yes", "no"}) {
      if (value == ok) return Status::Ok();
    }
    return Status::InvalidArgument(key + ": " + Quoted(value) + " is not true or false");
  }
  Result<double> number = NumericValue(def, value);
  if (!number.ok()) {
    return Status::InvalidArgument(key + ": " + Quoted(value) + " " + number.status().message());
  }
  if (*number < def.min || *number > def.max) {
    const bool bare_duration = def.type == SettingType::kDuration && FiniteNumber(value);
    return Status::InvalidArgument(key + ": " + Quoted(value) + " is outside the range " +
                                   RangeText(def) +
                                   (bare_duration ? " (a bare number is milliseconds)" : ""));
  }
  return Status::Ok();
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
  for (const SettingDef& def : table) {
    Status status = CheckSetting(def, out.Get(def.key));
    if (status.ok()) continue;
    const std::string& origin = out.Origin(def.key);
    std::string from = origin == "env"    ? "from " + std::string(def.env)
                       : origin == "file" ? "from " + std::string(yaml_name)
                                          : "from " + origin;
    return Status::InvalidArgument(status.message() + " (" + from + ")");
  }
  return out;
}

std::string SettingsMarkdown(const std::vector<SettingDef>& table) {
  std::string out =
      "| setting (YAML key, --flag) | short | environment | default | range | meaning |\n"
      "|---|---|---|---|---|---|\n";
  for (const SettingDef& def : table) {
    auto code = [](std::string_view text) {
      return text.empty() ? std::string() : base::Concat({"`", text, "`"});
    };
    out += base::Concat({"| `", def.key, "` | ", code(def.short_flag), " | `", def.env, "` | ",
                         code(def.default_value), " | ", RangeText(def), " | ", def.help, " |\n"});
  }
  return out;
}

}  // namespace gpuscope::cli

#include "cli/serve_config.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "cli/remediate_config.h"
#include "cli/sim_clock.h"
#include "collect/selection.h"

namespace gpuscope::cli {
namespace {

Status SetIntervals(const Settings& s, serve::AgentOptions& c) {
  // Ranges are checked once, against the settings table (settings.cc).
  Result<double> fast = s.Seconds("collect-interval");
  if (!fast.ok()) return fast.status();
  Result<double> slow = s.Seconds("slow-interval");
  if (!slow.ok()) return slow.status();
  Result<double> pcie = s.Seconds("pcie-interval");
  if (!pcie.ok()) return pcie.status();
  Result<double> window = s.Seconds("window");
  if (!window.ok()) return window.status();
  c.sampler.fast_interval_s = *fast;
  c.sampler.slow_interval_s = std::max(*slow, *fast);
  c.sampler.pcie_interval_s = std::max(*pcie, *fast);
  c.sampler.window_span_s = *window;
  Result<double> stale = s.Seconds("stale-after");
  if (!stale.ok()) return stale.status();
  c.stale_after_s = *stale > 0 ? *stale : std::max(3 * *fast, 3.0);
  // A GPU is judged stale by the health checks on the same horizon.
  c.health.stale_after_seconds = std::max(c.stale_after_s, c.health.stale_after_seconds);
  return Status::Ok();
}

Status SetServer(const Settings& s, serve::AgentOptions& c) {
  c.server.listen_address = s.Get("address");
  c.server.web_config_file = s.Get("web-config-file");
  Result<long> connections = s.Integer("max-connections");
  if (!connections.ok()) return connections.status();
  c.server.max_connections = static_cast<unsigned>(*connections);
  Result<long> per_client = s.Integer("max-connections-per-client");
  if (!per_client.ok()) return per_client.status();
  if (*per_client > *connections) {  // the range in the settings table covers the rest
    return Status::InvalidArgument("max-connections-per-client: " + std::to_string(*per_client) +
                                   " is above max-connections (" + std::to_string(*connections) +
                                   ")");
  }
  c.server.max_connections_per_client = static_cast<unsigned>(*per_client);
  Result<double> timeout = s.Seconds("request-timeout");
  if (!timeout.ok()) return timeout.status();
  c.server.connection_timeout =
      std::chrono::seconds(std::max<long>(1, std::lround(std::ceil(*timeout))));
  Result<double> head = s.Seconds("request-head-timeout");
  if (!head.ok()) return head.status();
  c.server.head_timeout = std::chrono::milliseconds(std::lround(*head * 1000));
  return Status::Ok();
}

Status SetExport(const Settings& s, serve::AgentOptions& c) {
  std::optional<prom::MetricSet> metrics = prom::ParseMetricSet(s.Get("metrics"));
  if (!metrics) {
    return Status::InvalidArgument("metrics: '" + s.Get("metrics") +
                                   "' is not one of dcgm, native, both");
  }
  c.render.metrics = *metrics;
  std::optional<prom::Profile> profile = prom::ParseProfile(s.Get("profile"));
  if (!profile) {
    return Status::InvalidArgument("profile: '" + s.Get("profile") + "' is not lean or full");
  }
  c.render.profile = *profile;
  c.render.nvlink_per_link = s.Flag("nvlink-per-link");
  c.render.no_hostname = s.Flag("no-hostname");
  const std::string& label = s.Get("hostname-label");
  if (label != "Hostname" && label != "hostname") {
    return Status::InvalidArgument("hostname-label: '" + label + "' is not Hostname or hostname");
  }
  c.render.hostname_label = label;
  c.hostname = s.Get("hostname");
  return Status::Ok();
}

Status SetAnalysis(const Settings& s, serve::AgentOptions& c) {
  Result<long> xid_ms = s.Integer("xid-count-window-size");
  if (!xid_ms.ok()) return xid_ms.status();
  c.xid_window_s = static_cast<double>(*xid_ms) / 1000;
  c.health.xid_window_seconds = c.xid_window_s;
  Result<double> training = s.Seconds("nvlink-training");
  if (!training.ok()) return training.status();
  c.health.nvlink_training_seconds = *training;
  Result<double> price = s.Number("gpu-hour-price");
  if (!price.ok()) return price.status();
  if (*price > 0) c.monitor.gpu_hour_price = *price;
  Result<double> keep = s.Seconds("jobs-keep-ended");
  if (!keep.ok()) return keep.status();
  c.jobs.keep_ended_seconds = *keep;
  Result<long> max_ended = s.Integer("jobs-max-ended");
  if (!max_ended.ok()) return max_ended.status();
  c.jobs.max_ended = static_cast<std::size_t>(*max_ended);
  Result<long> max_bytes = s.Integer("jobs-max-bytes");
  if (!max_bytes.ok()) return max_bytes.status();
  c.jobs.max_bytes = static_cast<std::size_t>(*max_bytes);
  return Status::Ok();
}

Status SetAttribution(const Settings& s, serve::AgentOptions& c) {
  attribution::ServiceOptions& a = c.attribution;
  a.kubernetes = s.Flag("kubernetes");
  const std::string& id_type = s.Get("kubernetes-gpu-id-type");
  if (id_type != "uid" && id_type != "device-name") {
    return Status::InvalidArgument("kubernetes-gpu-id-type: '" + id_type +
                                   "' is not uid or device-name");
  }
  a.kubelet.socket = s.Get("pod-resources-kubelet-socket");
  // DRA devices' UUIDs: this node's ResourceSlices, with the pod's service account.
  a.kubelet.resource_slices.node = s.Get("kubernetes-node");
  a.kubelet.resource_slices.api.serviceaccount_dir = s.Get("kubernetes-serviceaccount-dir");
  std::string_view names = s.Get("nvidia-resource-names");
  while (!names.empty()) {
    const std::string_view name = names.substr(0, names.find(','));
    names.remove_prefix(std::min(names.size(), name.size() + 1));
    if (!name.empty()) a.kubelet.extra_resources.emplace_back(name);
  }
  a.hpc_job_dir = s.Get("hpc-job-mapping-dir");
  a.proc_root = s.Get("proc-root");
  a.cri.socket = s.Get("container-runtime-socket");
  a.process_names = s.Flag("process-names");
  c.render.process_names = a.process_names;
  Result<long> process_series = s.Integer("process-series");  // range checked by the table
  if (!process_series.ok()) return process_series.status();
  c.render.process_series = static_cast<unsigned>(*process_series);
  Result<double> refresh = s.Seconds("attribution-refresh");  // range checked by the table
  if (!refresh.ok()) return refresh.status();
  a.refresh_s = *refresh;
  std::optional<prom::AttributionLabels> labels =
      prom::ParseAttributionLabels(s.Get("attribution-labels"));
  if (!labels) {
    return Status::InvalidArgument("attribution-labels: '" + s.Get("attribution-labels") +
                                   "' is not series or info");
  }
  c.render.attribution_labels = *labels;
  return Status::Ok();
}

Status SetOtlp(const Settings& s, serve::AgentOptions& c) {
  c.otlp_listen_address = s.Get("otlp-listen-address");
  c.otlp_address_explicit = s.Origin("otlp-listen-address") != "default";
  Result<long> body = s.Integer("otlp-max-request-bytes");  // ranges checked by the table
  if (!body.ok()) return body.status();
  c.otlp.max_body_bytes = static_cast<std::size_t>(*body);
  Result<long> rate = s.Integer("otlp-max-points-per-second");
  if (!rate.ok()) return rate.status();
  c.otlp.max_points_per_second = static_cast<double>(*rate);
  Result<long> points = s.Integer("otlp-max-points-per-request");
  if (!points.ok()) return points.status();
  c.otlp.limits.max_points = static_cast<uint64_t>(*points);
  Result<long> elements = s.Integer("otlp-max-elements-per-request");
  if (!elements.ok()) return elements.status();
  c.otlp.limits.max_elements = static_cast<uint64_t>(*elements);
  Result<long> series = s.Integer("otlp-max-series");
  if (!series.ok()) return series.status();
  c.otlp_store.max_series = static_cast<std::size_t>(*series);
  Result<long> bytes = s.Integer("otlp-max-bytes");
  if (!bytes.ok()) return bytes.status();
  c.otlp_store.max_bytes = static_cast<std::size_t>(*bytes);
  Result<double> share = s.Number("otlp-sender-share");
  if (!share.ok()) return share.status();
  c.otlp_store.sender_share = *share;
  Result<double> expiry = s.Seconds("otlp-series-expiry");
  if (!expiry.ok()) return expiry.status();
  c.otlp_store.expiry_s = *expiry;
  Result<double> window = s.Seconds("kpi-regression-window");
  if (!window.ok()) return window.status();
  c.kpi_regression.recent_s = *window;
  Result<double> threshold = s.Number("kpi-regression-threshold");
  if (!threshold.ok()) return threshold.status();
  c.kpi_regression.min_change = *threshold;
  return Status::Ok();
}

// The settings only the CLI acts on: files it reads, the NVML choice, logging.
Status SetCliOnly(const Settings& s, ServeConfig& c) {
  c.counters_path = s.Get("collectors");
  c.kpi_mapping_file = s.Get("kpi-mapping-file");
  if (s.Origin("nvml-lib") != "default") c.nvml.nvml_lib = s.Get("nvml-lib");
  c.nvml.simulate = s.Get("simulate");
  // From the environment the simulator reads GPUSCOPE_SIM_START_TIME itself.
  if (!s.Get("at").empty() && s.Origin("at") != "env") {
    Result<double> at = ParseAt(s.Get("at"));
    if (!at.ok()) return at.status();
    c.nvml.at_seconds = *at;
  }
  c.log_level = s.Get("log-level");
  if (c.log_level != "debug" && c.log_level != "info" && c.log_level != "warn" &&
      c.log_level != "error") {
    return Status::InvalidArgument("log-level: '" + c.log_level +
                                   "' is not one of debug, info, warn, error");
  }
  return Status::Ok();
}

}  // namespace

Result<ServeConfig> BuildServeConfig(const Settings& settings) {
  ServeConfig c;
  serve::AgentOptions& a = c.agent;
  GPUSCOPE_RETURN_IF_ERROR(SetIntervals(settings, a));
  GPUSCOPE_RETURN_IF_ERROR(SetServer(settings, a));
  GPUSCOPE_RETURN_IF_ERROR(SetExport(settings, a));
  GPUSCOPE_RETURN_IF_ERROR(SetAnalysis(settings, a));
  Result<collect::DeviceSelection> devices = collect::ParseDcgmDevices(settings.Get("devices"));
  if (!devices.ok()) return devices.status().Context("devices");
  a.sampler.devices = *devices;
  GPUSCOPE_RETURN_IF_ERROR(SetAttribution(settings, a));
  GPUSCOPE_RETURN_IF_ERROR(SetOtlp(settings, a));
  GPUSCOPE_RETURN_IF_ERROR(SetCliOnly(settings, c));
  Result<remediate::RemediationOptions> remediation = BuildRemediation(settings);
  if (!remediation.ok()) return remediation.status();
  a.remediation = std::move(*remediation);
  return c;
}

Result<prom::CounterSet> LoadCounters(const std::string& path) {
  if (path.empty()) return prom::DefaultCounterSet();
  return prom::LoadCountersFile(path);
}

}  // namespace gpuscope::cli

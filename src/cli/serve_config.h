// `gpuscope serve` configuration: turns the resolved settings (settings.h,
// flags > GPUSCOPE_* environment > YAML --config > defaults) into the options
// of every module serve runs: sampler, renderer, HTTP server, health checks,
// diagnosis monitor. BuildServeConfig is a pure function of the settings; the
// counters file is read separately (LoadCounters), so is the web-config (by
// the HTTP server).
//
// Interval rules: -c is the fast tier (>= 100 ms); the slow and PCIe tiers
// never run faster than it (raised to -c when set shorter, e.g. dcgm-exporter's
// habitual -c 30000). --stale-after 0 means three fast intervals, at least 3 s.
//
// Thread safety: plain values and pure functions, except LoadCounters (reads
// a file).
#pragma once

#include <optional>
#include <string>

#include "analysis/monitor.h"
#include "attribution/service.h"
#include "cli/common_options.h"
#include "cli/settings.h"
#include "collect/sampler.h"
#include "export/counters.h"
#include "export/render.h"
#include "gpuscope/status.h"
#include "health/checks.h"
#include "http/server.h"
#include "otlp/receiver.h"
#include "otlp/regression.h"
#include "otlp/store.h"

namespace gpuscope::cli {

struct ServeConfig {
  collect::SamplerOptions sampler;  // nvml_path is filled in by serve (PrepareNvml)
  prom::RenderOptions render;       // counters filled in by LoadCounters
  http::ServerOptions server;
  health::HealthOptions health;
  analysis::MonitorOptions monitor;
  CommonOptions nvml;                       // --nvml-lib / --simulate from any source
  std::string counters_path;                // -f; "" = dcgm-exporter's default counters
  std::string hostname;                     // --hostname; "" = the machine's
  double stale_after_s = 3;                 // /health turns 503 past this cycle age
  double xid_window_s = 300;                // -x in seconds
  attribution::ServiceOptions attribution;  // -k, kubelet socket, HPC directory, refresh
  // Loopback only by default: the receiver takes unauthenticated writes, and the
  // processes it serves (a Slurm job, a bare-host service) share the host's
  // network; docs/security.md says why and how to open it.
  std::string otlp_listen_address = "127.0.0.1:4318";  // "" = no OTLP receiver
  bool otlp_address_explicit = false;                  // set by a flag, the environment or the file
  otlp::ReceiverOptions otlp;                          // limits; conventions from kpi_mapping_file
  otlp::StoreOptions otlp_store;
  otlp::RegressionOptions kpi_regression;
  std::string kpi_mapping_file;  // "" = built-in KPI names only
  std::string log_level = "info";
};

Result<ServeConfig> BuildServeConfig(const Settings& settings);

// The counters file at `path`, or dcgm-exporter's default set when empty.
Result<prom::CounterSet> LoadCounters(const std::string& path);

}  // namespace gpuscope::cli

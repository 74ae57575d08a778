// `gpuscope serve` configuration: turns the resolved settings (settings.h,
// flags > GPUSCOPE_* environment > YAML --config > defaults) into the Agent's
// options (serve/options.h: sampler, renderer, HTTP server, health checks,
// diagnosis monitor, attribution, OTLP receiver) and the few settings only the
// CLI acts on. BuildServeConfig is a pure function of the settings; files are
// read separately: the counters file by LoadCounters, the web-config by the
// HTTP server, the KPI mapping file and the NVML library by serve.cc.
//
// Interval rules: -c is the fast tier (>= 100 ms); the slow and PCIe tiers
// never run faster than it (raised to -c when set shorter, e.g. dcgm-exporter's
// habitual -c 30000). --stale-after 0 means three fast intervals, at least 3 s.
//
// Thread safety: plain values and pure functions, except LoadCounters (reads
// a file).
#pragma once

#include <string>

#include "cli/common_options.h"
#include "cli/settings.h"
#include "export/counters.h"
#include "gpuscope/status.h"
#include "serve/options.h"

namespace gpuscope::cli {

struct ServeConfig {
  // What the Agent runs with; serve fills in what needs files or the process:
  // sampler.nvml_path (PrepareNvml), render.counters (LoadCounters),
  // otlp.conventions (kpi_mapping_file), source and frozen_time.
  serve::AgentOptions agent;
  // --nvml-lib / --simulate from any source, for PrepareNvml; its attribution
  // stays empty (serve's is agent.attribution).
  CommonOptions nvml;
  std::string counters_path;     // -f; "" = dcgm-exporter's default counters
  std::string kpi_mapping_file;  // "" = built-in KPI names only
  std::string log_level = "info";
};

Result<ServeConfig> BuildServeConfig(const Settings& settings);

// The counters file at `path`, or dcgm-exporter's default set when empty.
Result<prom::CounterSet> LoadCounters(const std::string& path);

}  // namespace gpuscope::cli

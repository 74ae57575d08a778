// What `gpuscope serve` runs with: the options of every module the serve
// assembly (agent.h) wires, in one struct. The CLI fills it straight from the
// resolved settings (cli/serve_config.h: flags > GPUSCOPE_* environment >
// YAML --config > defaults) and the Agent takes it as is; the settings table
// (cli/settings.cc) holds the user-facing defaults, the defaults here are what
// a default-constructed value means.
//
// Thread safety: a plain value.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "analysis/monitor.h"
#include "attribution/service.h"
#include "collect/sampler.h"
#include "export/render.h"
#include "health/checks.h"
#include "http/server.h"
#include "jobs/ledger.h"
#include "otlp/receiver.h"
#include "otlp/regression.h"
#include "otlp/store.h"
#include "remediate/setup.h"

namespace gpuscope::serve {

struct AgentOptions {
  collect::SamplerOptions sampler;  // nvml_path: the library to open
  prom::RenderOptions render;       // with the counters set to serve
  http::ServerOptions server;
  health::HealthOptions health;
  analysis::MonitorOptions monitor;
  std::string hostname;       // replaces the snapshot's host name when not empty
  double stale_after_s = 3;   // /health turns 503 past this cycle age
  double xid_window_s = 300;  // the event thread's XID window
  std::string source;         // what is watched, for logs and the web page
  std::string scenario;       // the simulator's scenario ("" off it), for /api/v1/snapshot
  // Pod and job labels (attribution/service.h): the kubelet with -k, the
  // mapping directory when given, Slurm cgroups always.
  attribution::ServiceOptions attribution;
  // The OTLP/HTTP metrics receiver (application KPIs, otlp/receiver.h) on its own listener,
  // with the TLS, client-certificate and basic-auth settings of `server`; empty address: off.
  // A default address that is taken (an OpenTelemetry Collector on :4318) only logs a
  // warning; an address the user set fails Start.
  // Loopback only by default: the receiver takes unauthenticated writes, and the
  // processes it serves (a Slurm job, a bare-host service) share the host's
  // network; docs/security.md says why and how to open it.
  std::string otlp_listen_address = "127.0.0.1:4318";
  bool otlp_address_explicit = false;  // set by a flag, the environment or the file
  otlp::ReceiverOptions otlp;          // limits, and conventions from the KPI mapping file
  otlp::StoreOptions otlp_store;
  otlp::RegressionOptions kpi_regression;       // the kpi_regression finding
  std::size_t kpi_max_metrics_bytes = 1 << 20;  // application families on /metrics (1 MiB)
  // Node remediation (drain in Slurm, condition in Kubernetes); off by default.
  remediate::RemediationOptions remediation;
  // Freezes the clock at this unix time (the simulator's frozen time), so
  // /metrics is byte-identical across runs; durations render as 0.
  std::optional<double> frozen_time;
  // The job ledger behind /api/v1/jobs and `gpuscope report --agent` (jobs/ledger.h).
  jobs::LedgerOptions jobs;
};

}  // namespace gpuscope::serve

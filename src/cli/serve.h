// `gpuscope serve`: the Prometheus exporter, a drop-in for dcgm-exporter on
// :9400. It resolves the settings (settings.h, serve_config.h) and the
// counters file, starts the serve assembly (serve/agent.h: sampler, health,
// diagnosis, rendering, XID event thread, HTTP server), then waits for
// signals in the main thread (sigtimedwait; no work in signal handlers):
//   SIGHUP          re-reads the counters file (-f) and the web-config file;
//                   a bad new file keeps the old one and logs the error; the
//                   listening socket stays open
//   SIGTERM/SIGINT  stops the server, the event thread and the sampler, and
//                   returns Ok
// NVML missing or down at start is not fatal: the sampler retries, and
// /health answers 503 with the reason meanwhile. Configuration errors (bad
// flag, counters file, web-config, address in use) are returned as one
// sentence naming the file and line where there is one.
//
// Determinism: on the simulator with GPUSCOPE_SIM_FROZEN_TIME set, the
// sampler's clock is frozen too (it reads that many seconds as unix time) and
// durations render as 0, so /metrics is byte-identical across runs.
//
// Thread safety: RunServe blocks SIGINT, SIGTERM and SIGHUP in the calling
// thread before starting any other thread; call it from main's thread.
#pragma once

#include <string>

#include "cli/commands.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

Status RunServe(Invocation& inv);

// `gpuscope serve --help`: every setting with flags, environment and default.
std::string ServeUsage();

// docs/configuration.md, generated from the settings table.
std::string ConfigurationDoc();

}  // namespace gpuscope::cli

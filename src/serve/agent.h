// The serve assembly: everything `gpuscope serve` runs, wired in one place.
// An Agent owns the background sampler (collect), whose publish hook feeds the
// Exporter (exporter.h: health step, diagnosis monitor, self-metrics, one
// immutable Cycle per sampling cycle, cycle.h), the XID event thread (health) and the HTTP server
// (http) with the endpoints of endpoints.h. The CLI (src/cli/serve.cc)
// resolves settings and files into AgentOptions (options.h), starts an Agent
// and turns signals into Poll, SetCounters, ReloadWebConfig and Stop.
//
// NVML missing or down at Start is not fatal: the sampler retries, /health
// answers 503 with the reason meanwhile, and Poll starts the event thread
// once a library is open. Start fails only for the server (address in use,
// bad web-config).
//
// Attribution (pod, job) refreshes on its own thread; the sampler's hook hands
// it the inventory when that changes, and each render reads its latest map.
// Application KPIs are joined to GPUs on the KPI join's thread (kpi_join.h):
// the hook only wakes it and renders its last, bounded result.
//
// Thread safety: Start, Poll, SetCounters, ReloadWebConfig and Stop are
// called from one thread (the CLI's main thread); the sampler, event and
// server threads only reach the Exporter, which is thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "analysis/monitor.h"
#include "attribution/service.h"
#include "collect/sampler.h"
#include "export/counters.h"
#include "export/render.h"
#include "gpuscope/status.h"
#include "health/checks.h"
#include "health/events.h"
#include "http/server.h"
#include "nvml/library.h"
#include "otlp/receiver.h"
#include "otlp/store.h"
#include "remediate/remediator.h"
#include "serve/exporter.h"
#include "serve/kpi_join.h"
#include "serve/options.h"
#include "web/api.h"

namespace gpuscope::serve {

class Agent {
 public:
  explicit Agent(AgentOptions options);
  ~Agent();  // Stop()
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Opens NVML (retrying later when it fails), starts the event thread, runs
  // the first cycle, then starts the HTTP server and the sampler's loop.
  Status Start();
  // Starts the event thread once NVML is open, if it has not started yet.
  void Poll();
  // SIGHUP: serve this counters set from now on.
  void SetCounters(prom::CounterSet counters);
  // SIGHUP: re-reads the web-config file; on error the old one stays.
  Status ReloadWebConfig();
  // Stops the server, the event thread and the sampler; idempotent.
  void Stop();

  const Exporter& exporter() const { return *exporter_; }
  uint16_t port() const { return server_->port(); }
  // The OTLP listener's port; 0 when it is off or did not start.
  uint16_t otlp_port() const { return otlp_server_ ? otlp_server_->port() : 0; }

 private:
  // Hands the attribution service the inventory and the processes when they changed.
  void UpdateAttributedDevices(const Snapshot& snapshot);
  Status StartOtlp();
  // Hands the remediation thread the cycle just published.
  void OfferRemediation();

  AgentOptions options_;
  collect::Clock clock_;
  // Destroyed in reverse: the event thread, then the server, the KPI join
  // (it reads the exporter and the store), then the sampler (whose hook uses
  // the exporter and wakes the join), then the exporter.
  std::unique_ptr<Exporter> exporter_;
  std::unique_ptr<collect::Sampler> sampler_;
  std::unique_ptr<http::Server> server_;
  std::unique_ptr<otlp::Store> otlp_store_;            // application series (outlives the receiver)
  std::unique_ptr<otlp::Receiver> otlp_receiver_;      // null when off
  std::unique_ptr<KpiJoin> kpi_join_;                  // application families, off the cycle
  std::unique_ptr<jobs::Ledger> jobs_;                 // per-holder usage, /api/v1/jobs
  std::unique_ptr<http::Server> otlp_server_;          // null when off
  std::unique_ptr<attribution::Service> attribution_;  // null when off
  std::vector<std::string> attributed_devices_;        // device keys it was last given
  std::shared_ptr<const nvml::Library> events_library_;  // outlives events_
  std::unique_ptr<health::EventMonitor> events_;
  // --remediate: fed each cycle's health by the sampler's hook, acts on its own
  // thread (null when off; set in Start before the first cycle).
  std::unique_ptr<remediate::Remediator> remediator_;
  bool events_tried_ = false;
  bool stopped_ = false;
};

}  // namespace gpuscope::serve

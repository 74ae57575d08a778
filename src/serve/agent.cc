#include "serve/agent.h"

#include <utility>

#include "base/log.h"
#include "gpuscope/version.h"
#include "serve/endpoints.h"
#include "serve/jobs_endpoints.h"
#include "serve/web_endpoints.h"

namespace gpuscope::serve {
namespace {

ExporterOptions MakeExporterOptions(const AgentOptions& a) {
  ExporterOptions o;
  o.render = a.render;
  o.health = a.health;
  o.health_families = XidFamilyOptions(a.render.counters);
  o.monitor = a.monitor;
  o.hostname = a.hostname;
  o.stale_after_s = a.stale_after_s;
  o.frozen_clock = a.frozen_time.has_value();
  return o;
}

std::string MetricSetName(prom::MetricSet set) {
  switch (set) {
    case prom::MetricSet::kBoth:
      return "both";
    case prom::MetricSet::kDcgm:
      return "dcgm";
    default:
      return "native";
  }
}

}  // namespace

Agent::Agent(AgentOptions options)
    : options_(std::move(options)),
      clock_(options_.frozen_time ? collect::Clock([t = *options_.frozen_time] { return t; })
                                  : collect::Clock(collect::SystemClock)) {
  exporter_ = std::make_unique<Exporter>(MakeExporterOptions(options_), clock_);
  sampler_ = std::make_unique<collect::Sampler>(options_.sampler, clock_);
  jobs_ = std::make_unique<jobs::Ledger>(options_.jobs);
  // Always on: without -k or a mapping directory it still finds Slurm jobs
  // from the cgroups of the GPUs' processes.
  attribution_ = std::make_unique<attribution::Service>(options_.attribution);
  exporter_->SetAttributionSource([service = attribution_.get()] { return service->Latest(); });
  sampler_->Decorate(
      [exporter = exporter_.get()](Snapshot& snapshot) { exporter->Decorate(snapshot); });
  server_ = std::make_unique<http::Server>(options_.server);
  otlp_store_ = std::make_unique<otlp::Store>(options_.otlp_store);
  kpi_join_ = std::make_unique<KpiJoin>(
      KpiJoinOptions{options_.kpi_regression, options_.kpi_max_metrics_bytes,
                     !options_.otlp_listen_address.empty()},
      *otlp_store_,
      [exporter = exporter_.get()] {
        CyclePtr cycle = exporter->Current();
        return cycle ? KpiJoin::Inputs{cycle->snapshot, cycle->diagnoses} : KpiJoin::Inputs{};
      },
      clock_);
  exporter_->SetKpiSource([join = kpi_join_.get()] { return join->Latest(); });
  // The hook does no work that application data can grow: the join runs on its own thread.
  sampler_->OnPublish([this](const SnapshotPtr& snapshot) {
    UpdateAttributedDevices(*snapshot);
    exporter_->OnSnapshot(snapshot, sampler_->window());
    // O(devices x holders) under the ledger's own lock: cheap enough for the hook.
    if (CyclePtr cycle = exporter_->Current()) jobs_->Observe(*cycle->snapshot, *cycle->diagnoses);
    kpi_join_->Wake();
    if (remediator_) OfferRemediation();
  });
  if (!options_.otlp_listen_address.empty()) {
    otlp_receiver_ = std::make_unique<otlp::Receiver>(options_.otlp, *otlp_store_,
                                                      otlp::Receiver::Clock{}, clock_);
    http::ServerOptions otlp_server = options_.server;
    otlp_server.listen_address = options_.otlp_listen_address;
    otlp_server_ = std::make_unique<http::Server>(otlp_server);
    otlp_receiver_->Register(*otlp_server_);
  }
}

Status Agent::StartOtlp() {
  if (!otlp_server_) return Status::Ok();
  Status started = otlp_server_->Start();
  if (started.ok()) {
    log::Info("OTLP/HTTP metrics receiver on {} (otlp port {}{}), POST {}",
              options_.otlp_listen_address, otlp_server_->port(),
              otlp_server_->tls_enabled() ? ", TLS" : "", otlp::kMetricsPath);
    return started;
  }
  if (options_.otlp_address_explicit) return started.Context("otlp-listen-address");
  log::Warn(
      "OTLP receiver off: {} (set --otlp-listen-address to another address, or to "
      "'' to silence this)",
      started.message());
  otlp_server_.reset();
  return Status::Ok();
}

void Agent::UpdateAttributedDevices(const Snapshot& snapshot) {
  std::vector<std::string> keys;
  keys.reserve(snapshot.gpus.size());
  for (const GpuInfo& gpu : snapshot.gpus) keys.push_back(Attribution::DeviceKey(gpu));
  if (keys != attributed_devices_) {
    attributed_devices_ = std::move(keys);
    attribution_->SetDevices(snapshot.gpus);
  }
  if (!snapshot.slow_cycle) return;  // processes are read on the slow tier
  attribution_->SetProcesses(attribution::ProcessesOf(snapshot), attribution::VmsOf(snapshot));
}

Agent::~Agent() { Stop(); }

void Agent::OfferRemediation() {
  if (CyclePtr cycle = exporter_->Current()) remediator_->Offer({cycle->health, cycle->snapshot});
}

Status Agent::Start() {
  Result<std::unique_ptr<remediate::Remediator>> remediator =
      remediate::MakeRemediator(options_.remediation, clock_);
  if (!remediator.ok()) return remediator.status();
  if ((remediator_ = std::move(*remediator))) {
    exporter_->SetFamilySource([r = remediator_.get()] { return r->Families(); });
    remediator_->Start();
  }
  Status opened = sampler_->Open();
  if (!opened.ok()) log::Warn("NVML not available yet (retrying): {}", opened.message());
  Poll();
  SnapshotPtr first = sampler_->SampleOnce();
  RegisterEndpoints(*server_, *exporter_);
  RegisterWebEndpoints(
      *server_, *exporter_, sampler_->window(),
      {std::string(Version()), options_.source, MetricSetName(options_.render.metrics),
       options_.sampler.fast_interval_s, options_.sampler.window_span_s,
       options_.render.process_names, options_.scenario, options_.sampler.read_processes,
       options_.monitor.diagnose.min_span_seconds});
  const attribution::ServiceOptions& a = options_.attribution;
  RegisterJobsEndpoints(*server_, *jobs_,
                        {.kubelet = a.kubernetes,
                         .container_runtime = !a.cri.socket.empty(),
                         .hpc_job_mapping_dir = !a.hpc_job_dir.empty(),
                         .process_names = a.process_names});
  GPUSCOPE_RETURN_IF_ERROR(server_->Start());
  GPUSCOPE_RETURN_IF_ERROR(StartOtlp());
  if (otlp_server_) kpi_join_->Start();  // no receiver: nothing to join
  sampler_->Start();
  log::Info("gpuscope {} ({}) serving /metrics on {} (port {}{}), {} GPUs from {}{}", Version(),
            GitCommit(), options_.server.listen_address, server_->port(),
            server_->tls_enabled() ? ", TLS" : "", first->gpus.size(), options_.source,
            options_.frozen_time ? ", clock frozen" : "");
  return Status::Ok();
}

void Agent::Poll() {
  if (events_tried_) return;
  std::shared_ptr<const nvml::Library> library = sampler_->library();
  if (!library) return;
  events_tried_ = true;
  health::EventMonitor::Options options;
  options.xid_window_seconds = options_.xid_window_s;
  options.clock = clock_;
  auto monitor = health::EventMonitor::Start(*library, options);
  if (!monitor.ok()) {
    log::Info("XID/ECC events not watched: {}", monitor.status().message());
    return;
  }
  events_library_ = std::move(library);
  events_ = std::move(*monitor);
  exporter_->SetEventSource([monitor = events_.get()] { return monitor->State(); });
}

void Agent::SetCounters(prom::CounterSet counters) { exporter_->SetCounters(std::move(counters)); }

Status Agent::ReloadWebConfig() {
  GPUSCOPE_RETURN_IF_ERROR(server_->Reload());
  return otlp_server_ ? otlp_server_->Reload() : Status::Ok();
}

void Agent::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (otlp_server_) otlp_server_->Stop();
  server_->Stop();
  attribution_->Stop();
  if (events_) events_->Stop();
  sampler_->Stop();
  kpi_join_->Stop();
  if (remediator_) remediator_->Stop();
}

}  // namespace gpuscope::serve

#include "serve/exporter.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "export/builtin_families.h"
#include "gpuscope/version.h"

namespace gpuscope::serve {
namespace {

prom::Family SingleValue(const prom::BuiltinFamily& def, double value) {
  prom::Family family = prom::MakeFamily(def);
  family.samples.push_back({-1, {}, value});
  return family;
}

// gpu, and on MIG instances gpu_instance and compute_instance.
prom::Labels DeviceLabels(const GpuInfo& info) {
  prom::Labels labels = {{"gpu", std::to_string(info.index)}};
  if (info.is_mig()) {
    labels.emplace_back("gpu_instance", std::to_string(*info.gpu_instance_id));
    labels.emplace_back("compute_instance", std::to_string(info.compute_instance_id.value_or(0)));
  }
  return labels;
}

prom::Family CollectorUp(const Snapshot& snapshot) {
  prom::Family family = prom::MakeFamily(prom::kCollectorUp);
  for (std::size_t i = 0; i < snapshot.gpus.size(); ++i) {
    const bool up = snapshot.samples[i].state == GpuState::kOk;
    family.samples.push_back({-1, DeviceLabels(snapshot.gpus[i]), up ? 1.0 : 0.0});
  }
  return family;
}

prom::Family CallErrors(const Snapshot& snapshot) {
  prom::Family family = prom::MakeFamily(prom::kNvmlCallErrors);
  for (std::size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    for (const auto& [key, count] : snapshot.samples[i].call_errors) {
      prom::Labels labels = DeviceLabels(snapshot.gpus[i]);
      labels.emplace_back("call", key.first);
      labels.emplace_back("code", key.second);
      family.samples.push_back({-1, std::move(labels), static_cast<double>(count)});
    }
  }
  return family;
}

prom::Family AttributionUp(const Attribution& attribution) {
  prom::Family family = prom::MakeFamily(prom::kAttributionUp);
  for (const AttributionSource& source : attribution.sources) {
    family.samples.push_back({-1, {{"source", source.name}}, source.up ? 1.0 : 0.0});
  }
  return family;
}

prom::Family AttributionConflicts(const Attribution& attribution) {
  prom::Family family = prom::MakeFamily(prom::kAttributionConflicts);
  for (const AttributionSource& source : attribution.sources) {
    family.samples.push_back(
        {-1, {{"source", source.name}}, static_cast<double>(source.conflicts_total)});
  }
  return family;
}

prom::Family AttributionFailures(const Attribution& attribution) {
  prom::Family family = prom::MakeFamily(prom::kAttributionFailures);
  for (const AttributionSource& source : attribution.sources) {
    if (!source.failures) continue;
    family.samples.push_back(
        {-1, {{"source", source.name}}, static_cast<double>(*source.failures)});
  }
  return family;
}

}  // namespace

std::vector<prom::Family> SelfFamilies(const Snapshot& snapshot, ScrapeCounts scrapes,
                                       bool frozen_clock, const health::EventState* events) {
  std::vector<prom::Family> out;
  prom::Family build = prom::MakeFamily(prom::kBuildInfo);
  build.samples.push_back(
      {-1, {{"version", std::string(Version())}, {"commit", std::string(GitCommit())}}, 1});
  out.push_back(std::move(build));
  out.push_back(SingleValue(prom::kNvmlUp, snapshot.nvml_up ? 1 : 0));
  prom::Family up = CollectorUp(snapshot);
  if (!up.samples.empty()) out.push_back(std::move(up));
  prom::Family errors = CallErrors(snapshot);
  if (!errors.samples.empty()) out.push_back(std::move(errors));
  out.push_back(SingleValue(prom::kCollectDuration, frozen_clock ? 0 : snapshot.collect_seconds));
  out.push_back(SingleValue(prom::kLastCollect, snapshot.timestamp));
  out.push_back(SingleValue(prom::kCollectOverruns,
                            frozen_clock ? 0 : static_cast<double>(snapshot.overruns_total)));
  out.push_back(SingleValue(prom::kScrapes, static_cast<double>(scrapes.all)));
  out.push_back(SingleValue(prom::kScrapesGzip, static_cast<double>(scrapes.gzip)));
  if (events != nullptr) {
    out.push_back(SingleValue(prom::kEventsUp, events->running && events->last_wait_ok ? 1 : 0));
    out.push_back(SingleValue(prom::kEventErrors, static_cast<double>(events->wait_errors)));
  }
  return out;
}

health::FamilyOptions XidFamilyOptions(const prom::CounterSet& counters) {
  auto type = [](const prom::CounterEntry& e) {
    return e.type == prom::CounterType::kCounter ? prom::FamilyType::kCounter
                                                 : prom::FamilyType::kGauge;
  };
  health::FamilyOptions options;
  if (const prom::CounterEntry* entry = counters.Find("DCGM_EXP_XID_ERRORS_COUNT")) {
    options.xid_count_window = true;
    options.xid_count_type = type(*entry);
    if (!entry->help.empty()) options.xid_count_help = entry->help;
  }
  if (const prom::CounterEntry* entry = counters.Find("DCGM_EXP_GPU_HEALTH_STATUS")) {
    options.health_status = true;
    options.health_status_type = type(*entry);
    if (!entry->help.empty()) options.health_status_help = entry->help;
  }
  return options;
}

namespace {

void ForgetNames(std::vector<ProcessHolding>& processes) {
  for (ProcessHolding& p : processes) p.name.clear();
}

}  // namespace

struct Exporter::State {
  ExporterOptions options;
  std::shared_ptr<BodyRenderer> renderer;
  health::HealthState health_state;
  analysis::DiagnosisMonitor monitor;
  EventSource events;
  AttributionSource attribution;
  KpiSource kpis;
  FamilySource more_families;
  std::optional<health::EventState> event_state;  // with an event source: its last state
  health::EventState cycle_events;                // what Decorate applied to this cycle
  // The monitor's latest diagnoses and what the cycles show of them (without
  // process names unless --process-names): copied only when they change.
  std::shared_ptr<const std::vector<analysis::GpuDiagnosis>> diagnoses_seen, diagnoses;
  std::shared_ptr<const KpiResult> kpi_result;  // the last cycle's

  explicit State(ExporterOptions o)
      : options(std::move(o)),
        renderer(std::make_shared<BodyRenderer>(options.render)),
        monitor(options.monitor) {}

  // The monitor's latest, as the cycles show it.
  std::shared_ptr<const std::vector<analysis::GpuDiagnosis>> Diagnoses() {
    std::shared_ptr<const std::vector<analysis::GpuDiagnosis>> latest = monitor.Latest();
    if (latest == diagnoses_seen) return diagnoses;
    diagnoses_seen = latest;
    if (options.render.process_names) return diagnoses = latest;
    auto shown = std::make_shared<std::vector<analysis::GpuDiagnosis>>(*latest);
    for (analysis::GpuDiagnosis& d : *shown) ForgetNames(d.processes);
    return diagnoses = std::move(shown);
  }
};

Exporter::Exporter(ExporterOptions options, collect::Clock clock)
    : clock_(clock ? std::move(clock) : collect::Clock(collect::SystemClock)),
      state_(std::make_unique<State>(std::move(options))),
      stale_after_s_(state_->options.stale_after_s) {}

Exporter::~Exporter() = default;

void Exporter::Decorate(Snapshot& snapshot) {
  std::lock_guard lock(mu_);
  State& s = *state_;
  if (!s.options.hostname.empty()) snapshot.system.hostname = s.options.hostname;
  if (s.attribution) snapshot.attribution = s.attribution();
  // XIDs reach the snapshot here (health::ApplyEvents); OnSnapshot judges
  // the cycle with the same event state.
  s.cycle_events = s.events ? s.events() : health::EventState{};
  if (s.events) s.event_state = s.cycle_events;
  health::ApplyEvents(s.cycle_events, snapshot);
}

void Exporter::OnSnapshot(const SnapshotPtr& snapshot, const Window& window) {
  std::lock_guard lock(mu_);
  State& s = *state_;
  health::HealthReport report =
      health::Evaluate(*snapshot, s.cycle_events, s.health_state, clock_(), s.options.health);
  if (!s.options.render.process_names) {
    for (health::GpuHealth& gpu : report.gpus) ForgetNames(gpu.processes);
  }
  s.monitor.Update(*snapshot, window);
  if (s.kpis) s.kpi_result = s.kpis();

  PublishLocked(snapshot, std::make_shared<const health::HealthReport>(std::move(report)),
                s.Diagnoses());
}

void Exporter::PublishLocked(SnapshotPtr snapshot,
                             std::shared_ptr<const health::HealthReport> health,
                             std::shared_ptr<const std::vector<analysis::GpuDiagnosis>> diagnoses) {
  State& s = *state_;
  static const auto kNoKpis = std::make_shared<const std::vector<web::KpiReading>>();
  auto cycle = std::make_shared<Cycle>(s.renderer);
  cycle->snapshot = std::move(snapshot);
  cycle->health = std::move(health);
  cycle->diagnoses = std::move(diagnoses);
  cycle->kpis = s.kpi_result ? std::shared_ptr<const std::vector<web::KpiReading>>(
                                   s.kpi_result, &s.kpi_result->kpis)
                             : kNoKpis;
  cycle->families = Families(*cycle);
  s.renderer->Observe(*cycle->snapshot, cycle->families);
  current_.store(std::move(cycle));
}

std::vector<prom::Family> Exporter::Families(const Cycle& cycle) const {
  const State& s = *state_;
  std::vector<prom::Family> out =
      SelfFamilies(*cycle.snapshot, {scrapes(), gzip_scrapes()}, s.options.frozen_clock,
                   s.event_state ? &*s.event_state : nullptr);
  const Attribution* attribution = cycle.snapshot->attribution.get();
  if (attribution && !attribution->sources.empty()) {
    out.push_back(AttributionUp(*attribution));
    out.push_back(AttributionConflicts(*attribution));
  }
  if (attribution) {
    prom::Family failures = AttributionFailures(*attribution);
    if (!failures.samples.empty()) out.push_back(std::move(failures));
  }
  for (auto& family : health::ToFamilies(*cycle.health, s.options.health_families)) {
    out.push_back(std::move(family));
  }
  for (auto& family : s.monitor.Families()) out.push_back(std::move(family));
  if (const KpiResult* kpis = s.kpi_result.get()) {
    out.insert(out.end(), kpis->families.begin(), kpis->families.end());
  }
  if (s.more_families) {
    for (auto& family : s.more_families()) out.push_back(std::move(family));
  }
  return out;
}

HealthVerdict Exporter::Health() const {
  CyclePtr cycle = current_.load();
  if (!cycle) return {false, "no sampling cycle has completed yet"};
  const SnapshotPtr& snapshot = cycle->snapshot;
  if (!snapshot->nvml_up) {
    return {false, "NVML is down: " +
                       (snapshot->nvml_error.empty() ? "no reason given" : snapshot->nvml_error)};
  }
  const double now = clock_();
  const double age = now - snapshot->timestamp;
  if (age > stale_after_s_) {
    return {false, fmt::format("the last sampling cycle finished {:.1f} s ago (limit {:.1f} s)",
                               age, stale_after_s_)};
  }
  return GpuFreshness(*snapshot, now, stale_after_s_);
}

HealthVerdict GpuFreshness(const Snapshot& snapshot, double now, double stale_after_s) {
  if (snapshot.samples.empty()) return {false, "no GPU is watched"};
  std::size_t lost = 0, stale = 0;
  double oldest = 0;
  for (const GpuSample& sample : snapshot.samples) {
    if (sample.state == GpuState::kLost) {
      ++lost;
      continue;
    }
    const double age = now - sample.sampled_at;
    if (age <= stale_after_s) return {true, "OK"};
    ++stale;
    oldest = std::max(oldest, age);
  }
  if (stale == 0) return {false, fmt::format("all {} GPUs are lost", lost)};
  return {false, fmt::format("no GPU has fresh data: {} stale (last read up to {:.1f} s ago, "
                             "limit {:.1f} s), {} lost",
                             stale, oldest, stale_after_s, lost)};
}

void Exporter::SetCounters(prom::CounterSet counters) {
  std::lock_guard lock(mu_);
  State& s = *state_;
  s.options.health_families = XidFamilyOptions(counters);
  s.options.render.counters = std::move(counters);
  s.renderer = std::make_shared<BodyRenderer>(s.options.render);
  // The last cycle again, with the new counters' families and renderer.
  if (CyclePtr last = current_.load()) {
    PublishLocked(last->snapshot, last->health, last->diagnoses);
  }
}

void Exporter::SetEventSource(EventSource source) {
  std::lock_guard lock(mu_);
  state_->events = std::move(source);
}

void Exporter::SetAttributionSource(AttributionSource source) {
  std::lock_guard lock(mu_);
  state_->attribution = std::move(source);
}

void Exporter::SetKpiSource(KpiSource source) {
  std::lock_guard lock(mu_);
  state_->kpis = std::move(source);
}

void Exporter::SetFamilySource(FamilySource source) {
  std::lock_guard lock(mu_);
  state_->more_families = std::move(source);
}

}  // namespace gpuscope::serve

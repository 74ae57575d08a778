// Readers for the batched field values, their fallbacks, per-link NVLink
// counters and processes.
#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <utility>
#include <vector>

#include "collect/process_shares.h"
#include "collect/readers.h"
#include "nvml/field_ids.h"

namespace gpuscope::collect {
namespace {

using enum Metric;
using nvml::EccKind;
using nvml::EccScope;

bool FieldBatched(const MetricDef& def) {
  return def.read.field.id != 0 &&
         (def.source == Source::kFieldValue || def.source == Source::kNvLinkThroughput);
}

// The metric is due, missing, and its field id was refused: use the fallback.
bool NeedsFallback(ReadContext& ctx, Metric m) {
  return ctx.Due(m) && !ctx.Has(m) && !ctx.caps().FieldAllowed(Def(m).read.field.id);
}

template <typename T, typename Fn>
void Fallback(ReadContext& ctx, Metric m, std::string_view call, Fn&& fn) {
  if (!NeedsFallback(ctx, m)) return;
  if (auto v = ctx.Try<T>(call, std::forward<Fn>(fn))) ctx.Set(m, static_cast<double>(*v));
}

void NoteField(ReadContext& ctx, unsigned field_id, const Status& status) {
  if (status.code() == Status::Code::kNotSupported) {
    ctx.caps().RefuseField(field_id);
    return;
  }
  ctx.Note("nvmlDeviceGetFieldValues/" + std::to_string(field_id), status);
}

// Per link: state and four error counters.
NvLinkLink ReadLink(ReadContext& ctx, unsigned link) {
  static constexpr std::array<std::pair<nvml::NvLinkCounter, const char*>, 4> kCounters = {{
      {nvml::NvLinkCounter::kReplay, "nvmlDeviceGetNvLinkErrorCounter/replay"},
      {nvml::NvLinkCounter::kRecovery, "nvmlDeviceGetNvLinkErrorCounter/recovery"},
      {nvml::NvLinkCounter::kCrcFlit, "nvmlDeviceGetNvLinkErrorCounter/crc_flit"},
      {nvml::NvLinkCounter::kCrcData, "nvmlDeviceGetNvLinkErrorCounter/crc_data"},
  }};
  const nvml::Device& d = ctx.device();
  NvLinkLink out;
  out.link = link;
  out.active = ctx.Try<bool>("nvmlDeviceGetNvLinkState", [&] { return d.NvLinkState(link); })
                   .value_or(false);
  std::array<std::optional<uint64_t>*, 4> slots = {&out.replay, &out.recovery, &out.crc_flit,
                                                   &out.crc_data};
  for (std::size_t i = 0; i < kCounters.size(); ++i) {
    *slots[i] = ctx.Try<uint64_t>(kCounters[i].second,
                                  [&] { return d.NvLinkErrorCounter(link, kCounters[i].first); });
  }
  return out;
}

// A field id that older branches gave another meaning is asked only of a
// driver whose branch defines it (an unparsable version: not asked).
bool DriverDefines(const ReadContext& ctx, const FieldRead& field) {
  if (field.min_driver == 0) return true;
  const std::string& version = ctx.library().driver_version();
  unsigned major = 0;
  std::from_chars(version.data(), version.data() + version.size(), major);
  return major >= field.min_driver;
}

}  // namespace

void ReadFieldValues(ReadContext& ctx) {
  std::vector<Metric> metrics;
  std::vector<nvml::FieldRequest> requests;
  for (const MetricDef& def : kCatalog) {
    if (!FieldBatched(def) || !ctx.Due(def.id) || !ctx.caps().FieldAllowed(def.read.field.id))
      continue;
    if (!DriverDefines(ctx, def.read.field)) continue;
    metrics.push_back(def.id);
    requests.push_back(
        {def.read.field.id, def.read.field.all_links ? nvml::kFieldScopeAllLinks : 0u});
  }
  if (requests.empty() || !ctx.Allows("nvmlDeviceGetFieldValues")) return;
  ctx.CountCall();
  const std::vector<Result<nvml::FieldValue>> values = ctx.device().FieldValues(requests);
  bool any = false;
  for (std::size_t i = 0; i < values.size() && i < metrics.size(); ++i) {
    if (values[i].ok()) {
      ctx.Set(metrics[i], Convert(values[i]->AsDouble(), Def(metrics[i]).read.field.to_stored));
      any = true;
    } else {
      NoteField(ctx, requests[i].field_id, values[i].status());
    }
  }
  if (any) ++ctx.reading().ok_calls;
}

void ReadNvLinkBandwidth(ReadContext& ctx) {
  if (ctx.Has(kNvLinkTxBytes) && ctx.Has(kNvLinkRxBytes) && ctx.Due(kNvLinkBandwidthTotal)) {
    ctx.Set(kNvLinkBandwidthTotal,
            ctx.reading().sample.Get(kNvLinkTxBytes) + ctx.reading().sample.Get(kNvLinkRxBytes));
  }
}

void ReadFieldFallbacks(ReadContext& ctx) {
  ReadEnergyFallback(ctx);
  ReadEcc(ctx);
  ReadRemapped(ctx);
  ReadRetired(ctx);
  ReadPcieReplayFallback(ctx);
}

void ReadEnergyFallback(ReadContext& ctx) {
  if (!NeedsFallback(ctx, kEnergyConsumption)) return;
  Fallback<uint64_t>(ctx, kEnergyConsumption, "nvmlDeviceGetTotalEnergyConsumption",
                     [&] { return ctx.device().TotalEnergyMillijoules(); });
  // Neither counter exists: the sampler integrates power instead.
  if (!ctx.caps().Allows("nvmlDeviceGetTotalEnergyConsumption")) {
    ctx.reading().energy_counter = false;
  }
}

void ReadEcc(ReadContext& ctx) {
  const nvml::Device& d = ctx.device();
  if (NeedsFallback(ctx, kEccMode) || NeedsFallback(ctx, kEccModePending)) {
    if (auto mode =
            ctx.Try<nvml::EccModeInfo>("nvmlDeviceGetEccMode", [&] { return d.EccMode(); })) {
      ctx.Set(kEccMode, mode->current ? 1 : 0);
      ctx.Set(kEccModePending, mode->pending ? 1 : 0);
    }
  }
  static constexpr std::array<std::tuple<Metric, EccKind, EccScope>, 4> kTotals = {{
      {kEccSbeVolatile, EccKind::kCorrected, EccScope::kVolatile},
      {kEccDbeVolatile, EccKind::kUncorrected, EccScope::kVolatile},
      {kEccSbeAggregate, EccKind::kCorrected, EccScope::kAggregate},
      {kEccDbeAggregate, EccKind::kUncorrected, EccScope::kAggregate},
  }};
  // The lambda captures plain copies: clang 14 cannot capture structured bindings.
  for (const auto& [metric, kind_binding, scope_binding] : kTotals) {
    const EccKind kind = kind_binding;
    const EccScope scope = scope_binding;
    Fallback<uint64_t>(ctx, metric, "nvmlDeviceGetTotalEccErrors",
                       [&] { return d.TotalEccErrors(kind, scope); });
  }
}

void ReadRemapped(ReadContext& ctx) {
  if (!NeedsFallback(ctx, kRemappedCorrectable) && !NeedsFallback(ctx, kRemappedUncorrectable) &&
      !NeedsFallback(ctx, kRemappedPending) && !NeedsFallback(ctx, kRemappedFailure)) {
    return;
  }
  auto rows = ctx.Try<nvml::RemappedRowsInfo>("nvmlDeviceGetRemappedRows",
                                              [&] { return ctx.device().RemappedRows(); });
  if (!rows) return;
  ctx.Set(kRemappedCorrectable, rows->correctable);
  ctx.Set(kRemappedUncorrectable, rows->uncorrectable);
  ctx.Set(kRemappedPending, rows->pending ? 1 : 0);
  ctx.Set(kRemappedFailure, rows->failure ? 1 : 0);
}

void ReadRetired(ReadContext& ctx) {
  const nvml::Device& d = ctx.device();
  Fallback<uint32_t>(ctx, kRetiredSbe, "nvmlDeviceGetRetiredPages/sbe",
                     [&] { return d.RetiredPagesCount(nvml::PageRetireCause::kMultipleSbe); });
  Fallback<uint32_t>(ctx, kRetiredDbe, "nvmlDeviceGetRetiredPages/dbe",
                     [&] { return d.RetiredPagesCount(nvml::PageRetireCause::kDbe); });
  Fallback<bool>(ctx, kRetiredPending, "nvmlDeviceGetRetiredPagesPendingStatus",
                 [&] { return d.RetiredPagesPending(); });
}

void ReadPcieReplayFallback(ReadContext& ctx) {
  Fallback<uint32_t>(ctx, kPcieReplays, "nvmlDeviceGetPcieReplayCounter",
                     [&] { return ctx.device().PcieReplayCounter(); });
}

void ReadNvLinkLinks(ReadContext& ctx, unsigned links) {
  if (links == 0 || !ctx.Allows("nvmlDeviceGetNvLinkState")) return;
  std::vector<NvLinkLink> out;
  for (unsigned link = 0; link < links && !ctx.lost(); ++link) out.push_back(ReadLink(ctx, link));
  if (ctx.lost()) return;
  ctx.reading().sample.nvlink = std::move(out);
  ctx.reading().nvlink_read = true;
}

namespace {

// Adds one NVML process list to `out`, merging a pid already listed.
void MergeProcessList(const std::vector<nvml::Process>& list, ProcessKind kind,
                      std::vector<ProcessInfo>& out) {
  for (const nvml::Process& p : list) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const ProcessInfo& known) { return known.pid == p.pid; });
    if (it == out.end()) {
      ProcessInfo info;
      info.pid = p.pid;
      info.kinds = 0;
      info.gpu_instance_id = p.gpu_instance_id;
      info.compute_instance_id = p.compute_instance_id;
      it = out.insert(out.end(), std::move(info));
    }
    it->kinds |= kind;
    // Both lists give the process's whole footprint: keep the larger.
    if (p.used_memory_bytes &&
        (!it->used_memory_bytes || *p.used_memory_bytes > *it->used_memory_bytes)) {
      it->used_memory_bytes = p.used_memory_bytes;
    }
  }
}

// The mean SM and memory utilization of each process over the samples NVML
// took since the last read, and its share of the GPU's SM time (0 for a
// process without samples: it did not run). Samples of a pid no longer
// listed (it exited since) are nobody's: no holder is charged for them.
void ReadProcessUtilization(ReadContext& ctx, ProcessState& state,
                            std::vector<ProcessInfo>& processes) {
  if (processes.empty()) return;
  auto samples = ctx.Try<std::vector<nvml::ProcessUtilizationSample>>(
      "nvmlDeviceGetProcessUtilization",
      [&] { return ctx.device().ProcessUtilization(state.last_seen_us); });
  if (!samples) return;
  const std::map<uint32_t, double> shares = ProcessSmShares(*samples);
  for (ProcessInfo& p : processes) {
    const auto share = shares.find(p.pid);
    p.sm_share = share == shares.end() ? 0.0 : share->second;
  }
  ctx.reading().sample.process_sm_measured = true;
  for (ProcessInfo& p : processes) {
    double sm = 0, memory = 0;
    unsigned n = 0;
    for (const nvml::ProcessUtilizationSample& s : *samples) {
      if (s.pid != p.pid) continue;
      sm += s.sm_percent;
      memory += s.memory_percent;
      ++n;
    }
    if (n == 0) continue;
    p.sm_utilization = std::clamp(sm / n / 100.0, 0.0, 1.0);
    p.memory_utilization = std::clamp(memory / n / 100.0, 0.0, 1.0);
  }
  for (const nvml::ProcessUtilizationSample& s : *samples) {
    state.last_seen_us = std::max<uint64_t>(state.last_seen_us, s.timestamp_us);
  }
}

}  // namespace

void ReadProcesses(ReadContext& ctx, ProcessState& state) {
  const nvml::Device& d = ctx.device();
  auto compute = ctx.Try<std::vector<nvml::Process>>("nvmlDeviceGetComputeRunningProcesses",
                                                     [&] { return d.ComputeProcesses(); });
  if (!compute) return;  // the list that says who runs here: without it, nothing is known
  std::vector<ProcessInfo> out;
  MergeProcessList(*compute, kComputeProcess, out);
  if (auto graphics = ctx.Try<std::vector<nvml::Process>>("nvmlDeviceGetGraphicsRunningProcesses",
                                                          [&] { return d.GraphicsProcesses(); })) {
    MergeProcessList(*graphics, kGraphicsProcess, out);
  }
  if (auto mps = ctx.Try<std::vector<nvml::Process>>("nvmlDeviceGetMPSComputeRunningProcesses",
                                                     [&] { return d.MpsComputeProcesses(); })) {
    MergeProcessList(*mps, kMpsProcess, out);
  }
  if (ctx.lost()) return;
  for (ProcessInfo& info : out) {
    info.name = ctx.Try<std::string>("nvmlSystemGetProcessName",
                                     [&] { return ctx.library().ProcessName(info.pid); })
                    .value_or("");
  }
  ReadProcessUtilization(ctx, state, out);
  ctx.reading().sample.processes = std::move(out);
  ctx.reading().processes_read = true;
}

}  // namespace gpuscope::collect

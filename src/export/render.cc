#include "export/render.h"

#include <algorithm>
#include <atomic>
#include <charconv>

#include "export/render_internal.h"
#include "export/xid_messages.h"

namespace gpuscope::prom {
namespace {

void AppendUnsigned(uint64_t value, std::string& out) {
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, end);
}

// name{prefix[,fixed][,err_code,err_msg]} value
void AppendSeries(std::string& out, std::string_view name, std::string_view prefix,
                  std::string_view fixed, double value, bool integer, bool xid_labels = false) {
  out.append(name);
  out.append(prefix);
  if (!fixed.empty()) {
    out.push_back(',');
    out.append(fixed);
  }
  if (xid_labels) {  // dcgm-exporter's attributes of the last XID
    const auto code = static_cast<int64_t>(value);
    AppendLabel("err_code", std::to_string(code), false, &out);
    AppendLabel("err_msg", XidErrorMessage(code), false, &out);
  }
  out.append("} ");
  integer ? AppendInteger(value, &out) : AppendValue(value, &out);
  out.push_back('\n');
}

FamilyType CatalogType(MetricType type) {
  return type == MetricType::kCounter ? FamilyType::kCounter : FamilyType::kGauge;
}

std::vector<PlannedFamily> PlanDcgm(const CounterSet& counters) {
  std::vector<PlannedFamily> families;
  for (const CounterEntry& entry : counters.entries) {
    if (entry.kind != CounterKind::kMetric) continue;
    FamilyType type =
        entry.type == CounterType::kCounter ? FamilyType::kCounter : FamilyType::kGauge;
    PlannedFamily family = PlanFamily(entry.name, entry.help, type);
    const DcgmName& dcgm = Def(entry.metric).dcgm;
    family.rows.push_back({entry.metric, dcgm.scale, dcgm.integer, {}});
    family.rows.back().xid_labels = entry.metric == Metric::kXidLast;
    families.push_back(std::move(family));
  }
  return families;
}

// Adjacent catalog rows sharing a native name form one family; the lean
// profile leaves out its full-only rows and marks its sparse ones.
std::vector<PlannedFamily> PlanNative(std::span<const MetricDef> catalog, Profile profile) {
  std::vector<PlannedFamily> families;
  for (const MetricDef& def : catalog) {
    if (def.native.name.empty()) continue;
    const LeanPolicy policy = def.lean.policy;
    if (profile == Profile::kLean && policy == LeanPolicy::kFullOnly) continue;
    if (families.empty() || families.back().name != def.native.name) {
      families.push_back(PlanFamily(def.native.name, def.help, CatalogType(def.native.type)));
    }
    const bool lean = profile == Profile::kLean;
    families.back().rows.push_back({def.id, def.native.scale, false, def.native.labels,
                                    lean && policy == LeanPolicy::kSparse,
                                    lean && policy == LeanPolicy::kNoGpm});
  }
  return families;
}

PlannedFamily PlanBuiltin(const BuiltinFamily& builtin) {
  return PlanFamily(builtin.name, builtin.help, builtin.type);
}

constexpr std::string_view kLinkErrorTypes[] = {"crc_data", "crc_flit", "recovery", "replay"};
std::optional<uint64_t> LinkErrors(const NvLinkLink& link, std::size_t type) {
  switch (type) {
    case 0:
      return link.crc_data;
    case 1:
      return link.crc_flit;
    case 2:
      return link.recovery;
    default:
      return link.replay;
  }
}

}  // namespace

std::optional<MetricSet> ParseMetricSet(std::string_view text) {
  if (text == "both") return MetricSet::kBoth;
  if (text == "dcgm") return MetricSet::kDcgm;
  if (text == "native") return MetricSet::kNative;
  return std::nullopt;
}

std::optional<AttributionLabels> ParseAttributionLabels(std::string_view text) {
  if (text == "series") return AttributionLabels::kSeries;
  if (text == "info") return AttributionLabels::kInfo;
  return std::nullopt;
}

Renderer::Renderer(RenderOptions options)
    : options_(std::move(options)),
      plan_(std::make_unique<Plan>()),
      cache_(std::make_unique<Cache>()),
      sparse_(std::make_unique<Sparse>()) {
  plan_->dcgm = PlanDcgm(options_.counters);
  plan_->native = PlanNative(options_.catalog, options_.profile);
  for (const CounterEntry& entry : options_.counters.entries) {
    if (entry.kind == CounterKind::kLabel) plan_->label_fields.push_back(&entry);
  }
  // dcgm-exporter writes its label fields from a Go map: in name order.
  std::sort(plan_->label_fields.begin(), plan_->label_fields.end(),
            [](const CounterEntry* a, const CounterEntry* b) { return a->name < b->name; });
  for (std::size_t i = 0; i < kLeadingBuiltins.size(); ++i) {
    plan_->leading[i] = PlanBuiltin(*kLeadingBuiltins[i]);
  }
  for (std::size_t i = 0; i < kTrailingBuiltins.size(); ++i) {
    plan_->trailing[i] = PlanBuiltin(*kTrailingBuiltins[i]);
  }
  for (std::size_t i = 0; i < kProcessBuiltins.size(); ++i) {
    plan_->processes[i] = PlanBuiltin(*kProcessBuiltins[i]);
  }
  plan_->holder_info = PlanBuiltin(kGpuHolderInfo);
  plan_->holder_share = PlanBuiltin(kGpuHolderSmShare);
  for (std::size_t i = 0; i < kVgpuBuiltins.size(); ++i) {
    plan_->vgpus[i] = PlanBuiltin(*kVgpuBuiltins[i]);
  }
  plan_->vgpu_memory_usage = PlanBuiltin(kVgpuMemoryUsage);
}

Renderer::~Renderer() = default;

std::shared_ptr<std::string> Renderer::Buffer(Format format) {
  constexpr std::size_t kPoolSize = 3;
  std::vector<std::shared_ptr<std::string>>& pool = pools_[static_cast<std::size_t>(format)];
#if !defined(__SANITIZE_THREAD__)
  for (std::shared_ptr<std::string>& body : pool) {
    if (body.use_count() != 1) continue;
    // Pairs with the release in the last reader's reference drop.
    std::atomic_thread_fence(std::memory_order_acquire);
    body->clear();
    return body;
  }
#else
  // ThreadSanitizer does not model fences (GCC rejects this one under
  // -fsanitize=thread), so the TSan build never reuses a body: every cycle
  // gets a fresh buffer, and readers of the old one are still checked.
  pool.clear();
#endif
  auto body = std::make_shared<std::string>();
  std::size_t last = last_size_[static_cast<std::size_t>(format)];
  body->reserve(last + last / 4 + 4096);
  if (pool.size() < kPoolSize) pool.push_back(body);
  return body;
}

Bodies Renderer::Render(const Snapshot& snapshot, std::span<const Family> extra) {
  Observe(snapshot, extra);
  std::shared_ptr<std::string> text = Buffer(Format::kText);
  std::shared_ptr<std::string> om = Buffer(Format::kOpenMetrics);
  Writer writer(text.get(), om.get());
  RenderAll(snapshot, extra, writer);
  om->append("# EOF\n");
  last_size_[0] = text->size();
  last_size_[1] = om->size();
  return {std::move(text), std::move(om)};
}

std::shared_ptr<const std::string> Renderer::Render(const Snapshot& snapshot,
                                                    std::span<const Family> extra, Format format) {
  Observe(snapshot, extra);
  return Write(snapshot, extra, format);
}

std::shared_ptr<const std::string> Renderer::Write(const Snapshot& snapshot,
                                                   std::span<const Family> extra, Format format) {
  std::shared_ptr<std::string> body = Buffer(format);
  Writer writer(format == Format::kText ? body.get() : nullptr,
                format == Format::kOpenMetrics ? body.get() : nullptr);
  RenderAll(snapshot, extra, writer);
  if (format == Format::kOpenMetrics) body->append("# EOF\n");
  last_size_[static_cast<std::size_t>(format)] = body->size();
  return body;
}

void Renderer::RenderAll(const Snapshot& snapshot, std::span<const Family> extra, Writer& writer) {
  if (!cache_->Matches(snapshot, snapshot.attribution)) {
    cache_->Rebuild(snapshot, snapshot.attribution, options_, *plan_);
  }
  sparse_->Fit(snapshot.samples.size());  // a Write without Observe indexes it too
  if (options_.metrics != MetricSet::kNative) {
    RenderDcgm(snapshot, writer);
    RenderVgpusDcgm(snapshot, writer);
  }
  if (options_.attribution_labels == AttributionLabels::kInfo) RenderHolders(writer);
  if (options_.metrics != MetricSet::kDcgm) {
    RenderState(snapshot, writer);
    RenderNative(snapshot, writer);
    RenderNvLink(snapshot, writer);
    RenderXid(snapshot, writer);
    RenderFabric(snapshot, writer);
    RenderHolderShares(snapshot, writer);
    if (options_.process_series > 0) RenderProcesses(snapshot, writer);
    RenderVgpus(snapshot, writer);
  }
  for (const Family& family : extra) {
    if (Lean() && family.detail == Detail::kFullOnly) continue;
    if (Wants(family.base)) RenderExtra(family, writer);
  }
}

namespace {

// The lean memory of a sparse row: shown once its value was non-zero, or for
// a counter once it grew past the first value seen.
void ObserveRow(Metric metric, bool counter, double value, Renderer::Sparse::Rows& seen) {
  const std::size_t i = Index(metric);
  if (!counter) {
    if (value != 0) seen.shown.set(i);
  } else if (!seen.started.test(i)) {
    seen.started.set(i);
    seen.start[i] = value;
  } else if (value != seen.start[i]) {
    seen.shown.set(i);
  }
}

// Whether a row has a series (sparse rows: as observed so far).
bool ShowRow(const PlannedFamily::Row& row, const GpuSample& sample,
             const Renderer::Sparse::Rows& seen) {
  if (row.no_gpm) return !sample.Has(Metric::kDramActive);
  return !row.sparse || seen.shown.test(Index(row.metric));
}

// Catalog families: per GPU in order, per row; lost GPUs have no series.
void RenderRows(const PlannedFamily& family, const std::vector<std::vector<std::string>>& prefixes,
                const std::vector<uint32_t>& order, const Snapshot& snapshot,
                const std::vector<Renderer::Sparse::Rows>* shown, std::string& out) {
  for (uint32_t slot : order) {
    if (slot >= snapshot.samples.size()) continue;
    const GpuSample& sample = snapshot.samples[slot];
    if (sample.state == GpuState::kLost) continue;
    for (const std::string& prefix : prefixes[slot]) {
      for (const PlannedFamily::Row& row : family.rows) {
        if (!sample.Has(row.metric)) continue;
        if (shown && !ShowRow(row, sample, (*shown)[slot])) continue;
        AppendSeries(out, family.name, prefix, row.fixed_labels,
                     Convert(sample.Get(row.metric), row.scale), row.integer, row.xid_labels);
      }
    }
  }
}

}  // namespace

void Renderer::RenderDcgm(const Snapshot& snapshot, Writer& writer) {
  for (const PlannedFamily& family : plan_->dcgm) {
    writer.Begin(family);
    RenderRows(family, cache_->dcgm, cache_->order, snapshot, nullptr, writer.out());
    writer.End();
  }
}

void Renderer::RenderNative(const Snapshot& snapshot, Writer& writer) {
  for (const PlannedFamily& family : plan_->native) {
    writer.Begin(family);
    RenderRows(family, cache_->native, cache_->order, snapshot, &sparse_->rows, writer.out());
    writer.End();
  }
}

void Renderer::RenderHolders(Writer& writer) {
  writer.Begin(plan_->holder_info);
  for (uint32_t slot : cache_->order) writer.out().append(cache_->holder_lines[slot]);
  writer.End();
}

namespace {

// One GPU's value in leading built-in family `f` (gpu_lost, last-sample
// time), or none.
std::optional<double> StateValue(std::size_t f, const GpuSample& sample) {
  switch (f) {
    case 1:
      return sample.state == GpuState::kLost ? 1 : 0;
    default:
      return sample.sampled_at > 0 ? std::optional<double>(sample.sampled_at) : std::nullopt;
  }
}

}  // namespace

void Renderer::RenderState(const Snapshot& snapshot, Writer& writer) {
  const Cache& cache = *cache_;
  writer.Begin(plan_->leading[0]);
  for (uint32_t slot : cache.order) writer.out().append(cache.info[slot]);
  writer.End();
  // The last-sample time is full-only: gpuscope_collector_stale says the same.
  const std::size_t families = Lean() ? 2 : plan_->leading.size();
  for (std::size_t f = 1; f < families; ++f) {
    const PlannedFamily& family = plan_->leading[f];
    writer.Begin(family);
    for (uint32_t slot : cache.order) {
      if (slot >= snapshot.samples.size()) continue;
      if (std::optional<double> value = StateValue(f, snapshot.samples[slot])) {
        for (const std::string& prefix : cache.native[slot]) {
          AppendSeries(writer.out(), family.name, prefix, {}, *value, false);
        }
      }
    }
    writer.End();
  }
}

namespace {

// The links of one GPU in link order (the sampler's order is not promised).
const std::vector<uint32_t>& SortedLinks(const GpuSample& sample, std::vector<uint32_t>& links) {
  links.resize(sample.nvlink.size());
  for (std::size_t i = 0; i < links.size(); ++i) links[i] = static_cast<uint32_t>(i);
  std::sort(links.begin(), links.end(), [&sample](uint32_t a, uint32_t b) {
    return sample.nvlink[a].link < sample.nvlink[b].link;
  });
  return links;
}

// name{prefix,link="N"[,type="T"]} value
void AppendLinkSeries(std::string& out, std::string_view name, std::string_view prefix,
                      unsigned link, std::string_view type, uint64_t value) {
  out.append(name);
  out.append(prefix);
  out.append(",link=\"");
  AppendUnsigned(link, out);
  if (!type.empty()) {
    out.append("\",type=\"");
    out.append(type);
  }
  out.append("\"} ");
  AppendUnsigned(value, out);
  out.push_back('\n');
}

// The lean memory of a link: per-link series once it was down or counted an
// error since the agent started.
void ObserveLink(const NvLinkLink& link, Renderer::Sparse::Links& seen) {
  if (link.link >= 64) return;
  const uint64_t bit = uint64_t{1} << link.link;
  uint64_t errors = 0;
  for (std::size_t t = 0; t < std::size(kLinkErrorTypes); ++t) {
    errors += LinkErrors(link, t).value_or(0);
  }
  if (!(seen.started & bit)) {
    seen.started |= bit;
    seen.start[link.link] = errors;
  }
  if (!link.active || errors != seen.start[link.link]) seen.shown |= bit;
}

// Links numbered 64 and up always have per-link series.
bool ShowLink(const NvLinkLink& link, const Renderer::Sparse::Links& seen) {
  return link.link >= 64 || (seen.shown & (uint64_t{1} << link.link)) != 0;
}

}  // namespace

void Renderer::RenderNvLink(const Snapshot& snapshot, Writer& writer) {
  const PlannedFamily& active = plan_->trailing[0];
  const PlannedFamily& errors = plan_->trailing[1];
  const bool every_link = !Lean() || options_.nvlink_per_link;
  for (const PlannedFamily* family : {&active, &errors}) {
    writer.Begin(*family);
    for (uint32_t slot : cache_->order) {
      if (slot >= snapshot.samples.size()) continue;
      const GpuSample& sample = snapshot.samples[slot];
      if (sample.state == GpuState::kLost) continue;
      for (const std::string& prefix : cache_->native[slot]) {
        for (uint32_t i : SortedLinks(sample, cache_->scratch)) {
          const NvLinkLink& link = sample.nvlink[i];
          if (!every_link && !ShowLink(link, sparse_->links[slot])) continue;
          if (family == &active) {
            AppendLinkSeries(writer.out(), family->name, prefix, link.link, {},
                             link.active ? 1 : 0);
            continue;
          }
          for (std::size_t t = 0; t < std::size(kLinkErrorTypes); ++t) {
            std::optional<uint64_t> value = LinkErrors(link, t);
            if (value) {
              AppendLinkSeries(writer.out(), family->name, prefix, link.link, kLinkErrorTypes[t],
                               *value);
            }
          }
        }
      }
    }
    writer.End();
  }
}

void Renderer::RenderXid(const Snapshot& snapshot, Writer& writer) {
  const PlannedFamily& family = plan_->trailing[2];
  writer.Begin(family);
  std::string& out = writer.out();
  for (uint32_t slot : cache_->order) {
    if (slot >= snapshot.samples.size()) continue;
    for (const std::string& prefix : cache_->native[slot]) {
      for (const auto& [code, count] : snapshot.samples[slot].xid_counts) {
        out.append(family.name);
        out.append(prefix);
        out.append(",xid=\"");
        AppendUnsigned(code, out);
        out.append("\"} ");
        AppendUnsigned(count, out);
        out.push_back('\n');
      }
    }
  }
  writer.End();
}

void Renderer::RenderFabric(const Snapshot& snapshot, Writer& writer) {
  const PlannedFamily& family = plan_->trailing[3];
  writer.Begin(family);
  std::string& out = writer.out();
  for (uint32_t slot : cache_->order) {
    if (slot >= snapshot.samples.size()) continue;
    const GpuSample& sample = snapshot.samples[slot];
    if (sample.state == GpuState::kLost || sample.fabric_cluster_uuid.empty()) continue;
    for (const std::string& prefix : cache_->native[slot]) {
      out.append(family.name);
      out.append(prefix);
      out.append(",cluster_uuid=\"");
      AppendLabelValue(sample.fabric_cluster_uuid, &out);
      if (sample.Has(Metric::kFabricCliqueId)) {
        out.append("\",clique_id=\"");
        AppendUnsigned(static_cast<uint64_t>(sample.Get(Metric::kFabricCliqueId)), out);
      }
      out.append("\"} 1\n");
    }
  }
  writer.End();
}

bool Renderer::Wants(LabelBase base) const {
  switch (base) {
    case LabelBase::kNone:
      return true;
    case LabelBase::kNative:
      return options_.metrics != MetricSet::kDcgm;
    case LabelBase::kDcgm:
      return options_.metrics != MetricSet::kNative;
  }
  return true;
}

void Renderer::SortExtra(const Family& family, std::vector<uint32_t>& order) const {
  const Cache& cache = *cache_;
  bool with_prefix = family.base != LabelBase::kNone;
  auto rank = [&](const Sample& s) -> int64_t {
    return with_prefix && s.gpu >= 0 ? int64_t{cache.rank[s.gpu]} : -1;
  };
  order.clear();
  for (std::size_t i = 0; i < family.samples.size(); ++i) {
    int gpu = family.samples[i].gpu;
    // A sample naming a slot the snapshot lacks cannot get its labels: skip it.
    if (with_prefix && gpu >= 0 && static_cast<std::size_t>(gpu) >= cache.order.size()) continue;
    order.push_back(static_cast<uint32_t>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Sample& x = family.samples[a];
    const Sample& y = family.samples[b];
    int64_t rx = rank(x), ry = rank(y);
    return rx != ry ? rx < ry : x.labels < y.labels;
  });
}

// A sparse family's sample is shown once its value was non-zero: the key of
// that memory (family, slot and labels).
std::string Renderer::ExtraKey(const Family& family, const Sample& sample) {
  std::string key = family.name;
  key.push_back('\x1f');
  AppendUnsigned(static_cast<uint64_t>(sample.gpu + 1), key);
  for (const auto& [name, value] : sample.labels) {
    key.push_back('\x1f');
    key.append(name);
    key.push_back('=');
    key.append(value);
  }
  return key;
}

void Renderer::Observe(const Snapshot& snapshot, std::span<const Family> extra) {
  if (!Lean()) return;  // only the lean profile leaves series out
  Sparse& sparse = *sparse_;
  sparse.Fit(snapshot.samples.size());
  if (options_.metrics != MetricSet::kDcgm) {
    for (std::size_t slot = 0; slot < snapshot.samples.size(); ++slot) {
      const GpuSample& sample = snapshot.samples[slot];
      if (sample.state == GpuState::kLost) continue;
      for (const PlannedFamily& family : plan_->native) {
        const bool counter = family.type == FamilyType::kCounter;
        for (const PlannedFamily::Row& row : family.rows) {
          if (!row.sparse || row.no_gpm || !sample.Has(row.metric)) continue;
          ObserveRow(row.metric, counter, sample.Get(row.metric), sparse.rows[slot]);
        }
      }
      if (options_.nvlink_per_link) continue;
      for (const NvLinkLink& link : sample.nvlink) ObserveLink(link, sparse.links[slot]);
    }
  }
  for (const Family& family : extra) {
    if (family.detail != Detail::kSparse || family.lines || !Wants(family.base)) continue;
    for (const Sample& sample : family.samples) {
      const bool unknown_slot = family.base != LabelBase::kNone && sample.gpu >= 0 &&
                                static_cast<std::size_t>(sample.gpu) >= snapshot.gpus.size();
      if (sample.value != 0 && !unknown_slot) sparse.extra.insert(ExtraKey(family, sample));
    }
  }
}

void Renderer::RenderExtra(const Family& family, Writer& writer) {
  if (family.lines) {
    if (family.lines->empty()) return;
    writer.Begin(family.name, family.help, family.type);
    writer.out().append(*family.lines);
    writer.End();
    return;
  }
  const Cache::Prefixes& prefixes = family.base == LabelBase::kDcgm ? cache_->dcgm : cache_->native;
  bool with_prefix = family.base != LabelBase::kNone;
  SortExtra(family, cache_->scratch);
  writer.Begin(family.name, family.help, family.type);
  std::string& out = writer.out();
  static const std::vector<std::string> kNoPrefix = {""};
  const bool sparse = family.detail == Detail::kSparse && Lean();
  for (uint32_t i : cache_->scratch) {
    const Sample& sample = family.samples[i];
    if (sparse && !sparse_->extra.contains(ExtraKey(family, sample))) continue;
    const bool prefixed = with_prefix && sample.gpu >= 0;
    for (const std::string& prefix : prefixed ? prefixes[sample.gpu] : kNoPrefix) {
      out.append(family.name);
      bool first = !prefixed;
      if (prefixed) {
        out.append(prefix);
      } else if (!sample.labels.empty()) {
        out.push_back('{');
      }
      for (const auto& [name, value] : sample.labels) {
        AppendLabel(name, value, first, &out);
        first = false;
      }
      out.append(first ? " " : "} ");
      AppendValue(sample.value, &out);
      out.push_back('\n');
    }
  }
  writer.End();
}

}  // namespace gpuscope::prom

#include "otlp/store.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "base/log.h"
#include "base/text.h"
#include "export/builtin_families.h"
#include "export/writer.h"

namespace gpuscope::otlp {
namespace {

std::string SeriesKey(const Origin& o, const Labels& labels) {
  std::string key;
  for (const std::string* f :
       {&o.pid, &o.pod, &o.namespace_name, &o.service, &o.service_instance, &o.host}) {
    key += *f;
    key += '\x1f';
  }
  for (const auto& [name, value] : labels) {
    key += name;
    key += '\x1e';
    key += value;
    key += '\x1f';
  }
  return key;
}

// A delta histogram added to `into`; new bounds restart the series. A total
// that would overflow refuses the point and leaves `into` as it was.
Status AddHistogram(HistogramValue& into, const HistogramValue& delta, const std::string& family) {
  if (into.bounds != delta.bounds || into.counts.size() != delta.counts.size()) {
    into = delta;
    return Status::Ok();
  }
  uint64_t unused = 0;
  bool overflow = __builtin_add_overflow(into.count, delta.count, &unused) ||
                  !std::isfinite(into.sum + delta.sum);
  for (std::size_t i = 0; i < into.counts.size() && !overflow; ++i) {
    overflow = __builtin_add_overflow(into.counts[i], delta.counts[i], &unused);
  }
  if (overflow) {
    return Status::InvalidArgument("histogram '" + family + "' would overflow its totals");
  }
  for (std::size_t i = 0; i < into.counts.size(); ++i) into.counts[i] += delta.counts[i];
  into.count += delta.count;
  into.sum += delta.sum;
  return Status::Ok();
}

// The point's value applied to its series' (validated by CheckPoint).
Status Apply(const Point& p, double& value, HistogramValue& histogram) {
  if (p.kind == Kind::kHistogram) {
    if (p.delta) return AddHistogram(histogram, p.histogram, p.naming.family);
    histogram = p.histogram;
    return Status::Ok();
  }
  if (!p.delta || p.kind != Kind::kCounter) {
    value = p.value;
    return Status::Ok();
  }
  if (!std::isfinite(value + p.value)) {
    return Status::InvalidArgument("counter '" + p.naming.family + "' would overflow");
  }
  value += p.value;
  return Status::Ok();
}

// The budget a point from `peer` (PeerKey) is charged to, and how messages name it.
std::string SenderOf(const Origin& o, const std::string& peer) {
  if (!peer.empty()) return "peer " + peer;
  return "service.name '" + base::Excerpt(o.service, 48) + "' host.name '" +
         base::Excerpt(o.host, 48) + "'";
}

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kCounter:
      return "counter";
    case Kind::kHistogram:
      return "histogram";
    case Kind::kGauge:
      break;
  }
  return "gauge";
}

// `ratio` of `n`, rounded down.
std::size_t Part(std::size_t n, double ratio) {
  return static_cast<std::size_t>(static_cast<double>(n) * ratio);
}

// `{gpu="0",UUID="GPU-...",workload="x",...` without the closing brace.
std::string Prefix(const Target& t, const Origin& o, const Labels& labels) {
  std::string out = "{";
  prom::AppendLabel("gpu", t.gpu, true, &out);
  prom::AppendLabel("UUID", t.uuid, false, &out);
  auto add = [&](std::string_view name, const std::string& value) {
    if (!value.empty()) prom::AppendLabel(name, value, false, &out);
  };
  add("workload", t.workload);
  add("namespace", t.namespace_name);
  add("pod", t.pod);
  add("service", o.service);
  add("service_instance_id", o.service_instance);
  add("process_pid", o.pid);
  add("host_name", o.host);
  for (const auto& [name, value] : labels) prom::AppendLabel(name, value, false, &out);
  return out;
}

void Line(std::string& out, std::string_view name, std::string_view suffix,
          const std::string& prefix, std::string_view extra, double value) {
  out.append(name);
  out.append(suffix);
  out.append(prefix);
  out.append(extra);
  out.append("} ");
  prom::AppendValue(value, &out);
  out.push_back('\n');
}

void WriteHistogram(std::string& out, std::string_view name, const std::string& prefix,
                    const HistogramValue& h) {
  uint64_t cumulative = 0;
  std::string le;
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    cumulative += h.counts[i];
    le = ",le=\"";
    if (i < h.bounds.size()) {
      prom::AppendValue(h.bounds[i], &le);
    } else {
      le += "+Inf";
    }
    le += '"';
    Line(out, name, "_bucket", prefix, le, static_cast<double>(cumulative));
  }
  // OpenMetrics: a histogram's sum is a counter, so one with a negative bound must not have
  // one, and `_count` comes only with `_sum`. A negative sum (observations below 0 with only
  // non-negative bounds) is no counter either. Such a series is its buckets alone (the +Inf
  // bucket is the count), in both formats, so one set of lines serves both.
  if (h.sum < 0 || (!h.bounds.empty() && h.bounds.front() < 0)) return;
  Line(out, name, "_sum", prefix, "", h.sum);
  Line(out, name, "_count", prefix, "", static_cast<double>(h.count));
}

prom::FamilyType TypeOf(Kind kind) {
  switch (kind) {
    case Kind::kCounter:
      return prom::FamilyType::kCounter;
    case Kind::kHistogram:
      return prom::FamilyType::kHistogram;
    case Kind::kGauge:
      break;
  }
  return prom::FamilyType::kGauge;
}

prom::Family Single(const prom::BuiltinFamily& def, double value) {
  prom::Family f = prom::MakeFamily(def);
  f.samples.push_back({-1, {}, value});
  return f;
}

}  // namespace

Store::Store(StoreOptions options) : options_(options) {
  for (const KpiFamily& kpi : KpiFamilies()) {
    for (std::string& claim : Claims(kpi.family, kpi.kind)) reserved_.emplace(claim, &kpi);
  }
}

// A family name is reserved for its KPI, unique across the names families
// write (histogram suffixes, OpenMetrics counter names) and keeps the type
// its first point had.
Status Store::CheckName(const Point& p) const {
  const std::string& name = p.naming.family;
  auto reserved = [&](const KpiFamily& kpi) {
    return Status::InvalidArgument(
        "'" + name + "' (a " + std::string(KindName(p.kind)) +
        ") would take a name of the KPI family '" + std::string(kpi.family) +
        "', which is reserved for its KPI (docs/app-kpis.md); rename the metric");
  };
  if (auto it = families_.find(name); it != families_.end()) {
    if (auto r = reserved_.find(name); r != reserved_.end() && it->second.kpi != p.naming.kpi) {
      return reserved(*r->second);
    }
    if (it->second.kind == p.kind) return Status::Ok();
    return Status::InvalidArgument("metric family '" + name + "' already has another type (" +
                                   std::string(KindName(it->second.kind)) +
                                   ", sent first); this point is a " +
                                   std::string(KindName(p.kind)));
  }
  for (const std::string& claim : Claims(name, p.kind)) {
    if (auto r = reserved_.find(claim); r != reserved_.end() && r->second->kpi != p.naming.kpi) {
      return reserved(*r->second);
    }
    if (auto c = claims_.find(claim); c != claims_.end()) {
      return Status::InvalidArgument("'" + name + "' (a " + std::string(KindName(p.kind)) +
                                     ") would write '" + claim + "', which the family '" +
                                     c->second + "' writes in /metrics; rename one of them");
    }
  }
  return Status::Ok();
}

std::size_t Store::SenderSeries() const {
  const std::size_t floor = std::min(options_.min_sender_series, options_.max_series);
  return std::max<std::size_t>({1, floor, Part(options_.max_series, options_.sender_share)});
}

std::size_t Store::SenderBytes() const {
  const std::size_t floor = std::min(options_.min_sender_bytes, options_.max_bytes);
  return std::max(floor, Part(options_.max_bytes, options_.sender_share));
}

Status Store::Admit(const Point& p, const std::string& sender, std::size_t growth, std::size_t cost,
                    bool new_series) const {
  const std::string& name = p.naming.family;
  if (cost > options_.max_series_bytes) {
    return Status::InvalidArgument(
        "a series of '" + name + "' would take " + std::to_string(cost) +
        " bytes (labels, values and buckets, as kept and exported), over the limit of " +
        std::to_string(options_.max_series_bytes) + " bytes per series");
  }
  // The last kpi_reserve of both budgets is kept for the known KPIs.
  const double open = p.naming.kpi == Kpi::kNone ? 1 - options_.kpi_reserve : 1;
  const std::size_t max_series = std::max<std::size_t>(1, Part(options_.max_series, open));
  const std::size_t max_bytes = Part(options_.max_bytes, open);
  const std::string which = open < 1 ? " (the rest is kept for the known KPIs)" : "";
  if (new_series && series_ >= max_series) {
    return Status::InvalidArgument("the receiver keeps at most " + std::to_string(max_series) +
                                   " series (otlp-max-series)" + which + "; new series of '" +
                                   name + "' were refused");
  }
  if (bytes_ + growth > max_bytes) {
    return Status::InvalidArgument("the receiver's series take at most " +
                                   std::to_string(max_bytes) + " bytes (otlp-max-bytes)" + which +
                                   "; " + std::to_string(bytes_) + " are taken, a series of '" +
                                   name + "' needs " + std::to_string(growth) + " more");
  }
  auto held = senders_.find(sender);
  const Usage usage = held == senders_.end() ? Usage{} : held->second;
  const std::size_t share_series = SenderSeries();
  const std::size_t share_bytes = SenderBytes();
  if ((new_series && usage.series >= share_series) || usage.bytes + growth > share_bytes) {
    return Status::Unavailable(  // told apart for the log
        "the sender " + sender + " holds " + std::to_string(usage.series) + " series and " +
        std::to_string(usage.bytes) + " bytes, its share (otlp-sender-share) is " +
        std::to_string(share_series) + " series and " + std::to_string(share_bytes) +
        " bytes; new series of '" + name + "' were refused");
  }
  return Status::Ok();
}

void Store::Charge(const std::string& sender, int series, std::ptrdiff_t bytes) {
  series_ += series;
  bytes_ += bytes;
  auto it = senders_.try_emplace(sender).first;
  it->second.series += series;
  it->second.bytes += bytes;
  if (it->second.series == 0) senders_.erase(it);
}

std::map<std::string, Store::FamilyState>::iterator Store::NewFamily(const Point& p) {
  for (std::string& claim : Claims(p.naming.family, p.kind)) {
    claims_.emplace(std::move(claim), p.naming.family);
  }
  FamilyState family{p.kind, p.naming.kpi, p.naming.help, {}};
  return families_.emplace(p.naming.family, std::move(family)).first;
}

Status Store::Update(Series& s, const Point& p, std::size_t cost, double now) {
  if (cost > s.cost) GPUSCOPE_RETURN_IF_ERROR(Admit(p, s.sender, cost - s.cost, cost, false));
  GPUSCOPE_RETURN_IF_ERROR(Apply(p, s.value, s.histogram));
  Charge(s.sender, 0, static_cast<std::ptrdiff_t>(cost) - static_cast<std::ptrdiff_t>(s.cost));
  s.cost = cost;
  s.updated = now;
  return Status::Ok();
}

Status Store::Add(const Origin& origin, const std::string& sender, const Point& p, double now) {
  GPUSCOPE_RETURN_IF_ERROR(CheckPoint(p, origin, options_.limits));
  GPUSCOPE_RETURN_IF_ERROR(CheckName(p));
  const std::size_t cost =
      SeriesCost(p.naming.family, p.kind, origin, p.labels, p.histogram.bounds.size());
  const std::string key = SeriesKey(origin, p.labels);
  auto family = families_.find(p.naming.family);
  if (family != families_.end()) {
    auto found = family->second.series.find(key);
    if (found != family->second.series.end()) return Update(found->second, p, cost, now);
  }
  GPUSCOPE_RETURN_IF_ERROR(Admit(p, sender, cost, cost, true));
  if (family == families_.end()) family = NewFamily(p);
  family->second.series.emplace(key,
                                Series{origin, p.labels, p.value, p.histogram, now, cost, sender});
  Charge(sender, 1, static_cast<std::ptrdiff_t>(cost));
  return Status::Ok();
}

IngestResult Store::Ingest(const Batch& batch, double now, const std::string& peer) {
  std::lock_guard lock(mu_);
  IngestResult result;
  result.rejected = batch.rejected;
  result.problem = batch.problem;
  std::vector<bool> attributed(batch.origins.size());
  for (std::size_t i = 0; i < batch.origins.size(); ++i) {
    attributed[i] = resolver_ && !resolver_->Resolve(batch.origins[i]).empty();
  }
  for (const Point& p : batch.points) {
    const Origin& origin = batch.origins[p.origin];
    const std::string sender = SenderOf(origin, peer);
    Status kept = Add(origin, sender, p, now);
    if (!kept.ok()) {
      if (kept.code() == Status::Code::kUnavailable) LogShareRefusal(kept.message(), now);
      ++result.rejected;
      if (result.problem.empty()) result.problem = kept.message();
      continue;
    }
    ++result.accepted;
    if (!attributed[p.origin]) ++unattributed_;
  }
  accepted_ += result.accepted;
  rejected_ += result.rejected;
  return result;
}

// A sender held to its share is told in its answer; the operator learns it
// here, once a minute at most, with the points refused since.
void Store::LogShareRefusal(const std::string& why, double now) {
  ++share_refused_;
  if (share_logged_at_ >= 0 && now - share_logged_at_ < 60) return;
  log::Warn("otlp: {} point(s) refused for their sender's share; the last: {}", share_refused_,
            why);
  share_refused_ = 0;
  share_logged_at_ = now;
}

void Store::CountRequest(int status) {
  std::lock_guard lock(mu_);
  ++requests_[status];
}

void Store::CountRejected(uint64_t points) {
  std::lock_guard lock(mu_);
  rejected_ += points;
}

std::string Store::RenderFamily(const std::string& name, const FamilyState& family,
                                const Resolver& resolver, std::vector<KpiReading>& readings,
                                RenderBudget& budget) const {
  // (GPU order, label prefix, series): sorted, duplicates of one label set written once.
  std::vector<std::tuple<int, std::string, const Series*>> rows;
  std::map<Origin, std::vector<Target>> targets;
  static const std::vector<Target> kUnattributed = {Target{}};
  for (const auto& [key, s] : family.series) {
    auto [it, fresh] = targets.try_emplace(s.origin);
    if (fresh) it->second = resolver.Resolve(s.origin);
    // A line is about the name, the labels and a number; a histogram writes
    // one per bucket and three more.
    const std::size_t lines = family.kind == Kind::kHistogram ? s.histogram.counts.size() + 3 : 1;
    std::size_t& spent = budget.spent[s.sender];
    for (const Target& t : it->second.empty() ? kUnattributed : it->second) {
      std::string prefix = Prefix(t, s.origin, s.labels);
      const std::size_t size = lines * (name.size() + prefix.size() + 48);
      if (size > budget.total || spent + size > budget.per_sender) {
        ++budget.omitted;
        continue;
      }
      budget.total -= size;
      spent += size;
      rows.emplace_back(t.rank, std::move(prefix), &s);
      if (family.kpi == Kpi::kNone || family.kind != Kind::kHistogram || t.rank < 0) continue;
      readings.push_back({family.kpi, name, t.rank, t.workload,
                          static_cast<double>(s.histogram.count), s.histogram.sum});
    }
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  std::string out;
  const std::string* last = nullptr;
  for (const auto& [rank, prefix, s] : rows) {
    if (last != nullptr && *last == prefix) continue;
    last = &prefix;
    if (family.kind == Kind::kHistogram) {
      WriteHistogram(out, name, prefix, s->histogram);
    } else {
      Line(out, name, "", prefix, "", s->value);
    }
  }
  return out;
}

std::vector<prom::Family> Store::Families(const Snapshot& snapshot, double now,
                                          std::size_t max_bytes, uint64_t* omitted) {
  auto resolver = std::make_shared<const Resolver>(snapshot);
  std::lock_guard lock(mu_);
  resolver_ = resolver;
  std::vector<prom::Family> out;
  std::vector<KpiReading> readings;
  RenderBudget budget;
  budget.total = max_bytes;
  budget.per_sender = max_bytes == SIZE_MAX
                          ? SIZE_MAX
                          : std::max({std::size_t{1}, Part(max_bytes, options_.sender_share),
                                      std::min(options_.min_sender_bytes, max_bytes / 4)});
  Expire(now);
  for (auto it = families_.begin(); it != families_.end(); ++it) {
    const FamilyState& family = it->second;
    prom::Family f;
    f.name = it->first;
    f.help = family.help;
    f.type = TypeOf(family.kind);
    f.base = prom::LabelBase::kNone;
    f.lines = std::make_shared<const std::string>(
        RenderFamily(f.name, family, *resolver, readings, budget));
    if (!f.lines->empty()) out.push_back(std::move(f));
  }
  if (omitted != nullptr) *omitted += budget.omitted;
  readings_ = std::move(readings);
  for (prom::Family& f : SelfFamilies()) out.push_back(std::move(f));
  return out;
}

// Drops the series not updated for expiry_s, and the families left empty.
void Store::Expire(double now) {
  for (auto it = families_.begin(); it != families_.end();) {
    std::erase_if(it->second.series, [&](const auto& entry) {
      const Series& s = entry.second;
      const bool expired = now - s.updated > options_.expiry_s;
      if (expired) Charge(s.sender, -1, -static_cast<std::ptrdiff_t>(s.cost));
      return expired;
    });
    if (!it->second.series.empty()) {
      ++it;
      continue;
    }
    for (const std::string& claim : Claims(it->first, it->second.kind)) claims_.erase(claim);
    it = families_.erase(it);
  }
}

std::vector<prom::Family> Store::SelfFamilies() const {
  std::vector<prom::Family> out;
  out.push_back(Single(prom::kOtlpPointsAccepted, static_cast<double>(accepted_)));
  out.push_back(Single(prom::kOtlpPointsRejected, static_cast<double>(rejected_)));
  out.push_back(Single(prom::kOtlpPointsUnattributed, static_cast<double>(unattributed_)));
  out.push_back(Single(prom::kOtlpSeries, static_cast<double>(series_)));
  prom::Family requests = prom::MakeFamily(prom::kOtlpRequests);
  for (const auto& [status, n] : requests_) {
    requests.samples.push_back({-1, {{"code", std::to_string(status)}}, static_cast<double>(n)});
  }
  if (!requests.samples.empty()) out.push_back(std::move(requests));
  return out;
}

std::vector<KpiReading> Store::Readings() const {
  std::lock_guard lock(mu_);
  return readings_;
}

std::size_t Store::series() const {
  std::lock_guard lock(mu_);
  return series_;
}

std::size_t Store::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

}  // namespace gpuscope::otlp

#include "otlp/store.h"

#include <algorithm>
#include <tuple>

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

void AddHistogram(HistogramValue& into, const HistogramValue& delta) {
  if (into.bounds != delta.bounds) {
    into = delta;  // new bounds: the series restarts
    return;
  }
  for (std::size_t i = 0; i < into.counts.size(); ++i) into.counts[i] += delta.counts[i];
  into.count += delta.count;
  into.sum += delta.sum;
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

Store::Store(StoreOptions options) : options_(options) {}

bool Store::Add(const Batch& batch, const Point& p, double now, IngestResult& result) {
  auto [it, created] = families_.try_emplace(p.naming.family);
  FamilyState& family = it->second;
  if (created) {
    family.kind = p.kind;
    family.kpi = p.naming.kpi;
    family.help = p.naming.help;
  } else if (family.kind != p.kind) {
    if (result.problem.empty()) {
      result.problem = "metric family '" + p.naming.family + "' already has another type";
    }
    return false;
  }
  const Origin& origin = batch.origins[p.origin];
  const std::string key = SeriesKey(origin, p.labels);
  auto found = family.series.find(key);
  if (found == family.series.end()) {
    if (series_ >= options_.max_series) {
      if (result.problem.empty()) {
        result.problem = "the receiver keeps at most " + std::to_string(options_.max_series) +
                         " series (otlp-max-series); new series of '" + p.naming.family +
                         "' were refused";
      }
      if (family.series.empty()) families_.erase(it);
      return false;
    }
    found = family.series.emplace(key, Series{origin, p.labels}).first;
    ++series_;
  }
  Series& s = found->second;
  s.updated = now;
  if (p.kind == Kind::kHistogram) {
    if (p.delta) {
      AddHistogram(s.histogram, p.histogram);
    } else {
      s.histogram = p.histogram;
    }
  } else {
    s.value = p.delta && p.kind == Kind::kCounter ? s.value + p.value : p.value;
  }
  return true;
}

IngestResult Store::Ingest(const Batch& batch, double now) {
  std::lock_guard lock(mu_);
  IngestResult result;
  result.rejected = batch.rejected;
  result.problem = batch.problem;
  std::vector<bool> attributed(batch.origins.size());
  for (std::size_t i = 0; i < batch.origins.size(); ++i) {
    attributed[i] = resolver_ && !resolver_->Resolve(batch.origins[i]).empty();
  }
  for (const Point& p : batch.points) {
    if (!Add(batch, p, now, result)) {
      ++result.rejected;
      continue;
    }
    ++result.accepted;
    if (!attributed[p.origin]) ++unattributed_;
  }
  accepted_ += result.accepted;
  rejected_ += result.rejected;
  return result;
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
                                const Resolver& resolver, std::vector<KpiReading>& readings) const {
  // (GPU order, label prefix, series): sorted, duplicates of one label set written once.
  std::vector<std::tuple<int, std::string, const Series*>> rows;
  std::map<Origin, std::vector<Target>> targets;
  static const std::vector<Target> kUnattributed = {Target{}};
  for (const auto& [key, s] : family.series) {
    auto [it, fresh] = targets.try_emplace(s.origin);
    if (fresh) it->second = resolver.Resolve(s.origin);
    for (const Target& t : it->second.empty() ? kUnattributed : it->second) {
      rows.emplace_back(t.rank, Prefix(t, s.origin, s.labels), &s);
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

std::vector<prom::Family> Store::Families(const Snapshot& snapshot, double now) {
  auto resolver = std::make_shared<const Resolver>(snapshot);
  std::lock_guard lock(mu_);
  resolver_ = resolver;
  std::vector<prom::Family> out;
  std::vector<KpiReading> readings;
  for (auto it = families_.begin(); it != families_.end();) {
    FamilyState& family = it->second;
    std::erase_if(family.series, [&](const auto& entry) {
      const bool expired = now - entry.second.updated > options_.expiry_s;
      if (expired) --series_;
      return expired;
    });
    if (family.series.empty()) {
      it = families_.erase(it);
      continue;
    }
    prom::Family f;
    f.name = it->first;
    f.help = family.help;
    f.type = TypeOf(family.kind);
    f.base = prom::LabelBase::kNone;
    f.lines =
        std::make_shared<const std::string>(RenderFamily(f.name, family, *resolver, readings));
    out.push_back(std::move(f));
    ++it;
  }
  readings_ = std::move(readings);
  for (prom::Family& f : SelfFamilies()) out.push_back(std::move(f));
  return out;
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

}  // namespace gpuscope::otlp

#include "jobs/ledger.h"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>

#include "analysis/monitor.h"

namespace gpuscope::jobs {
namespace {

using Key = std::pair<std::string, std::string>;  // (kind, id)

// Clock reasons that slow a job down (the GPU's own idle, application and
// display clock settings are not throttling): sw power cap, hw slowdown,
// sw and hw thermal slowdown, hw power brake.
constexpr uint64_t kThrottleBits = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

// The holders' keys one device holder feeds: its job, pod and workload.
std::vector<Key> KeysOf(const Holder& h) {
  std::vector<Key> out;
  if (!h.hpc_job.empty()) out.push_back({"job", h.hpc_job});
  if (!h.pod.empty()) out.push_back({"pod", h.namespace_name + "/" + h.pod});
  if (!h.workload.empty()) out.push_back({"workload", h.workload});
  return out;
}

std::optional<double> Delta(std::optional<double> now, std::optional<double> before) {
  if (!now || !before) return std::nullopt;
  return std::max(0.0, *now - *before);  // a counter that went back (a reset) adds nothing
}

}  // namespace

Ledger::Ledger(LedgerOptions options) : options_(std::move(options)) {}

void Ledger::Observe(const Snapshot& snapshot,
                     const std::vector<analysis::GpuDiagnosis>& diagnoses) {
  std::lock_guard lock(mu_);
  const double now = snapshot.timestamp;
  for (std::size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    ObserveDevice(snapshot, i, now);
  }
  NoteFindings(snapshot, diagnoses, now);
  EndAndEvict(now);
}

void Ledger::ObserveDevice(const Snapshot& snapshot, std::size_t slot, double now) {
  const GpuInfo& info = snapshot.gpus[slot];
  const GpuSample& s = snapshot.samples[slot];
  const std::string device = Attribution::DeviceKey(info);
  Counters current;
  current.timestamp = now;
  current.busy = s.Find(Metric::kBusySeconds);
  current.sm_active = s.Find(Metric::kSmActiveSeconds);
  current.energy_mj = s.Find(Metric::kEnergyConsumption);
  for (std::size_t r = 0; r < kClockReasonTable.size(); ++r) {
    current.throttle[r] = s.Find(kClockReasonTable[r].seconds_metric);
  }
  Interval in;
  auto prev = previous_.find(device);
  if (prev != previous_.end() && now > prev->second.timestamp) {
    const Counters& p = prev->second;
    in.since = p.timestamp;
    in.dt = std::min(now - p.timestamp, options_.max_gap_seconds);
    // A capped gap scales the integrals the same way: only dt of it counts.
    const double scale = in.dt / (now - p.timestamp);
    auto scaled = [scale](std::optional<double> v) {
      return v ? std::optional<double>(*v * scale) : std::nullopt;
    };
    in.busy = scaled(Delta(current.busy, p.busy));
    in.sm_active = scaled(Delta(current.sm_active, p.sm_active));
    if (auto mj = Delta(current.energy_mj, p.energy_mj)) in.energy_joules = *mj / 1000 * scale;
    for (std::size_t r = 0; r < kClockReasonTable.size(); ++r) {
      in.reasons[r] = Delta(current.throttle[r], p.throttle[r]).value_or(0) * scale;
    }
    if (auto tensor = s.Find(Metric::kTensorActive)) in.tensor_active = *tensor / 100 * in.dt;
    if (analysis::IsIdleHeldNow(s)) in.idle_held = in.dt;
    if (auto bits = s.Find(Metric::kClockReasons)) {
      if (static_cast<uint64_t>(*bits) & kThrottleBits) in.throttled = in.dt;
    }
  }
  in.memory_used = s.Find(Metric::kMemoryUsed).value_or(0);
  in.memory_total = s.Find(Metric::kMemoryTotal).value_or(0);
  previous_[device] = current;

  if (!snapshot.attribution) return;
  const std::vector<Holder>& holders = snapshot.attribution->Of(info);
  if (holders.empty()) return;
  // Several holders of one device may feed one key (two pods of a workload):
  // their shares add up, credited once.
  const DeviceSplit split = SplitDevice(*snapshot.attribution, info, s);
  std::map<Key, std::pair<double, const Holder*>> shares;
  for (std::size_t i = 0; i < holders.size(); ++i) {
    for (Key& key : KeysOf(holders[i])) {
      auto [it, added] = shares.try_emplace(std::move(key), 0.0, &holders[i]);
      it->second.first += split.weights[i];
    }
  }
  for (const auto& [key, credit] : shares) {
    Credit(key, *credit.second, credit.first, split.method, snapshot, slot, in);
  }
}

std::string SplitName(const DeviceUsage& d) {
  if (d.measured_split_seconds > 0 && d.even_split_seconds > 0) return "mixed";
  if (d.measured_split_seconds > 0) return std::string(SplitMethodName(SplitMethod::kMeasured));
  if (d.even_split_seconds > 0) return std::string(SplitMethodName(SplitMethod::kEven));
  return std::string(SplitMethodName(SplitMethod::kSole));
}

void Ledger::Credit(const Key& key, const Holder& holder, double share, SplitMethod method,
                    const Snapshot& snapshot, std::size_t slot, const Interval& in) {
  const GpuInfo& info = snapshot.gpus[slot];
  const double now = snapshot.timestamp;
  Entry& e = entries_[key];
  if (e.usage.kind.empty()) {  // new
    e.usage.kind = key.first;
    e.usage.id = key.second;
    e.usage.start = now;
    running_.insert(key);
  }
  e.usage.namespace_name = holder.namespace_name;
  e.usage.workload = holder.workload;
  e.usage.hpc_job = holder.hpc_job;
  if (e.ended) {  // back: its one record runs again
    ended_.erase({*e.usage.end, key});
    ended_bytes_ -= e.bytes;
    e.ended = false;
    e.usage.end.reset();
    running_.insert(key);
  }
  e.last_seen = now;
  const std::string device = Attribution::DeviceKey(info);
  auto it = std::find_if(e.devices.begin(), e.devices.end(),
                         [&](const DeviceUsage& d) { return d.device_key == device; });
  const bool added = it == e.devices.end();
  if (added) {
    DeviceUsage fresh;
    fresh.device_key = device;
    fresh.uuid = info.uuid;
    fresh.gpu = info.index;
    fresh.mig_profile = info.mig_profile;
    fresh.first_seen = now;
    e.devices.push_back(std::move(fresh));
    it = std::prev(e.devices.end());
  }
  DeviceUsage& d = *it;
  d.hostname = snapshot.system.hostname;
  d.memory_peak_bytes = std::max(d.memory_peak_bytes, in.memory_used);
  if (in.memory_total > 0) d.memory_total_bytes = in.memory_total;
  // Held at both ends of the interval: the whole interval is the holder's.
  const bool counts = !added && in.dt > 0 && d.last_seen == in.since;
  d.last_seen = now;
  if (!counts) return;
  if (method == SplitMethod::kMeasured) d.measured_split_seconds += in.dt;
  if (method == SplitMethod::kEven) d.even_split_seconds += in.dt;
  d.split = SplitName(d);
  d.held_seconds += share * in.dt;
  d.idle_held_seconds += share * in.idle_held;
  d.throttled_seconds += share * in.throttled;
  if (in.busy) d.busy_seconds += share * *in.busy;
  if (in.sm_active) d.sm_active_seconds += share * *in.sm_active, d.sm_active_known = true;
  if (in.tensor_active) d.tensor_active_seconds += share * *in.tensor_active, d.tensor_known = true;
  if (in.energy_joules) d.energy_joules += share * *in.energy_joules, d.energy_known = true;
  for (std::size_t r = 0; r < kClockReasonTable.size(); ++r) {
    if (in.reasons[r] > 0) {
      d.throttle_reason_seconds[std::string(kClockReasonTable[r].label)] += share * in.reasons[r];
    }
  }
}

void Ledger::NoteFindings(const Snapshot& snapshot,
                          const std::vector<analysis::GpuDiagnosis>& diagnoses, double now) {
  if (!snapshot.attribution) return;
  for (const analysis::GpuDiagnosis& d : diagnoses) {
    if (d.findings.empty() || d.slot >= snapshot.gpus.size()) continue;
    const GpuInfo& info = snapshot.gpus[d.slot];
    const std::string device = Attribution::DeviceKey(info);
    for (const Holder& h : snapshot.attribution->Of(info)) {
      for (const Key& key : KeysOf(h)) {
        auto entry = entries_.find(key);
        if (entry == entries_.end()) continue;
        for (const analysis::Finding& f : d.findings) {
          const std::string kind(analysis::KindName(f.kind));
          auto [it, added] = entry->second.findings.try_emplace({kind, device});
          if (added) it->second = {kind, device, now, now};
          it->second.last = now;
        }
      }
    }
  }
}

void Ledger::EndAndEvict(double now) {
  running_bytes_ = 0;
  for (auto key = running_.begin(); key != running_.end();) {
    Entry& e = entries_.at(*key);
    if (e.last_seen == now) {
      running_bytes_ += EntryBytes(*key, e);
      ++key;
      continue;
    }
    e.ended = true;
    e.usage.end = e.last_seen;
    e.bytes = EntryBytes(*key, e);  // an ended holder no longer changes
    ended_bytes_ += e.bytes;
    ended_.insert({e.last_seen, *key});
    key = running_.erase(key);
  }
  Evict(now);
}

// The holder that ended first goes first, while over any bound.
void Ledger::Evict(double now) {
  while (!ended_.empty() && (ended_.size() > options_.max_ended ||
                             ended_.begin()->first < now - options_.keep_ended_seconds ||
                             running_bytes_ + ended_bytes_ > options_.max_bytes)) {
    auto entry = entries_.find(ended_.begin()->second);
    ended_bytes_ -= entry->second.bytes;
    entries_.erase(entry);
    ended_.erase(ended_.begin());
  }
}

// An upper estimate: each string counted at its size plus its header, each
// tree node at 48 bytes beyond its value; the key is held three times (the
// records' map, the running or ended index, the usage's id).
std::size_t Ledger::EntryBytes(const Key& key, const Entry& e) {
  constexpr std::size_t kNode = 48;
  const std::size_t key_bytes = 2 * sizeof(std::string) + key.first.size() + key.second.size();
  std::size_t n = kNode + sizeof(Key) + sizeof(Entry) + 2 * key_bytes;  // map key, index
  n += kNode + sizeof(std::pair<double, Key>);
  for (const std::string* s :
       {&e.usage.kind, &e.usage.id, &e.usage.namespace_name, &e.usage.workload, &e.usage.hpc_job}) {
    n += s->size();
  }
  n += e.devices.capacity() * sizeof(DeviceUsage);
  for (const DeviceUsage& d : e.devices) {
    n += d.device_key.size() + d.uuid.size() + d.hostname.size() + d.mig_profile.size();
    for (const auto& [reason, seconds] : d.throttle_reason_seconds) {
      n += kNode + sizeof(std::pair<const std::string, double>) + reason.size();
    }
  }
  for (const auto& [where, f] : e.findings) {
    n += kNode + sizeof(std::pair<const Key, FindingSeen>) +
         2 * (where.first.size() + where.second.size());
  }
  return n;
}

JobUsage Ledger::Assemble(const Entry& e) {
  JobUsage out = e.usage;
  out.devices = e.devices;
  // As people read them: by host, then GPU index (a MIG instance after its parent's index).
  std::stable_sort(out.devices.begin(), out.devices.end(),
                   [](const DeviceUsage& a, const DeviceUsage& b) {
                     return std::tie(a.hostname, a.gpu) < std::tie(b.hostname, b.gpu);
                   });
  for (const auto& [key, f] : e.findings) out.findings.push_back(f);
  return out;
}

std::vector<JobUsage> Ledger::List(const std::string& kind) const {
  std::lock_guard lock(mu_);
  std::vector<JobUsage> out;
  for (const auto& [key, e] : entries_) {
    if (kind.empty() || key.first == kind) out.push_back(Assemble(e));
  }
  std::stable_sort(out.begin(), out.end(), [](const JobUsage& a, const JobUsage& b) {
    if (a.end.has_value() != b.end.has_value()) return !a.end.has_value();
    return a.start < b.start;
  });
  return out;
}

std::optional<JobUsage> Ledger::Find(const std::string& kind, const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find({kind, id});
  if (it == entries_.end()) return std::nullopt;
  return Assemble(it->second);
}

std::size_t Ledger::ended_count() const {
  std::lock_guard lock(mu_);
  return ended_.size();
}

std::size_t Ledger::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

std::size_t Ledger::bytes() const {
  std::lock_guard lock(mu_);
  return running_bytes_ + ended_bytes_;
}

}  // namespace gpuscope::jobs

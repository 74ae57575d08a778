#include "otlp/resolve.h"

#include <algorithm>

namespace gpuscope::otlp {

Resolver::Resolver(const Snapshot& snapshot) : hostname_(snapshot.system.hostname) {
  for (std::size_t i = 0; i < snapshot.gpus.size(); ++i) {
    const GpuInfo& info = snapshot.gpus[i];
    Device d;
    d.rank = static_cast<int>(i);
    d.gpu = std::to_string(info.index);
    d.uuid = info.uuid;
    if (i < snapshot.samples.size()) d.processes = snapshot.samples[i].processes;
    if (snapshot.attribution) d.holders = snapshot.attribution->Of(info);
    devices_.push_back(std::move(d));
  }
}

template <typename Match>
std::vector<Target> Resolver::Where(const Origin& origin, Match match) const {
  std::vector<Target> out;
  for (const Device& d : devices_) {
    const Holder* holder = nullptr;
    std::string process;
    if (!match(d, &holder, &process)) continue;
    Target t{d.rank, d.gpu, d.uuid};
    t.namespace_name = origin.namespace_name;
    t.pod = origin.pod;
    if (holder != nullptr) {
      t.workload = holder->workload;
      if (t.pod.empty()) t.pod = holder->pod;
      if (t.namespace_name.empty()) t.namespace_name = holder->namespace_name;
    }
    if (t.workload.empty()) t.workload = !origin.service.empty() ? origin.service : process;
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<Target> Resolver::Resolve(const Origin& o) const {
  auto first_holder = [](const Device& d, const Holder** h) {
    if (!d.holders.empty()) *h = &d.holders.front();
  };
  if (!o.pid.empty()) {
    auto out = Where(o, [&](const Device& d, const Holder** h, std::string* process) {
      for (const ProcessInfo& p : d.processes) {
        if (std::to_string(p.pid) != o.pid) continue;
        *process = p.name;
        first_holder(d, h);
        return true;
      }
      return false;
    });
    if (!out.empty()) return out;
  }
  auto by_pod = [&](std::string_view pod) {
    return Where(o, [&](const Device& d, const Holder** h, std::string*) {
      for (const Holder& holder : d.holders) {
        if (holder.pod != pod) continue;
        if (!o.namespace_name.empty() && holder.namespace_name != o.namespace_name) continue;
        *h = &holder;
        return true;
      }
      return false;
    });
  };
  if (!o.pod.empty()) {
    if (auto out = by_pod(o.pod); !out.empty()) return out;
  }
  if (!o.service.empty()) {
    auto out = Where(o, [&](const Device& d, const Holder** h, std::string* process) {
      for (const Holder& holder : d.holders) {
        if (holder.workload != o.service) continue;
        *h = &holder;
        return true;
      }
      for (const ProcessInfo& p : d.processes) {
        if (p.name != o.service) continue;
        *process = p.name;
        return true;
      }
      return false;
    });
    if (!out.empty()) return out;
  }
  if (o.host.empty()) return {};
  if (auto out = by_pod(o.host); !out.empty()) return out;
  if (o.host != hostname_) return {};
  return Where(o, [&](const Device& d, const Holder** h, std::string* process) {
    first_holder(d, h);
    if (!d.processes.empty()) *process = d.processes.front().name;
    return !d.processes.empty() || !d.holders.empty();
  });
}

}  // namespace gpuscope::otlp

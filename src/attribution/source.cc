#include "attribution/source.h"

#include <algorithm>
#include <exception>

#include "attribution/resolve.h"

namespace gpuscope::attribution {
namespace {

// Asks one source; an exception (a library's, say std::filesystem's) takes
// only that source down, like an error.
Result<Evidence> Ask(const Source& source, const Inputs& inputs) {
  try {
    return source.Read(inputs);
  } catch (const std::exception& e) {
    return Status::Internal(std::string(source.name()) + " source failed: " + e.what());
  }
}

// Adds each device's job ids of `from` to `to`'s, keeping the order found.
void JoinJobs(std::map<std::string, std::vector<std::string>> from,
              std::map<std::string, std::vector<std::string>>& to) {
  for (auto& [key, ids] : from) {
    std::vector<std::string>& mine = to[key];
    for (std::string& id : ids) {
      if (std::find(mine.begin(), mine.end(), id) == mine.end()) mine.push_back(std::move(id));
    }
  }
}

}  // namespace

const std::vector<DeviceProcess>& Inputs::On(const GpuInfo& device) const {
  static const std::vector<DeviceProcess> kNone;
  const auto it = processes.find(Attribution::DeviceKey(device));
  return it == processes.end() ? kNone : it->second;
}

void Evidence::Merge(Evidence later) {
  for (auto& [key, refs] : later.pods) {
    std::vector<PodRef>& mine = pods[key];
    mine.insert(mine.end(), refs.begin(), refs.end());
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  }
  if (later.containers && !containers) {
    containers = std::move(later.containers);
  } else if (later.containers) {
    containers->merge(*later.containers);  // keeps the ids already here
  }
  JoinJobs(std::move(later.jobs), jobs);
  JoinJobs(std::move(later.process_jobs), process_jobs);
  owners.merge(later.owners);  // keeps the pids already here
  process_names = process_names || later.process_names;
  for (auto& state : later.more_sources) more_sources.push_back(std::move(state));
}

Sources BuildSources(const ServiceOptions& options) {
  Sources out;
#define GPUSCOPE_REGISTER_ATTRIBUTION_SOURCE_(Name) \
  if (auto source = Make##Name##Source(options)) out.push_back(std::move(source));
  GPUSCOPE_ATTRIBUTION_SOURCES(GPUSCOPE_REGISTER_ATTRIBUTION_SOURCE_)
#undef GPUSCOPE_REGISTER_ATTRIBUTION_SOURCE_
  return out;
}

Attribution Collect(const Sources& sources, const Inputs& inputs) {
  Evidence evidence;
  std::vector<AttributionSource> states;
  for (const auto& source : sources) {
    Result<Evidence> found = Ask(*source, inputs);
    if (source->reports_up()) {
      states.push_back({std::string(source->name()), found.ok(),
                        found.ok() ? std::string() : found.status().message()});
    }
    if (found.ok()) {
      states.insert(states.end(), found->more_sources.begin(), found->more_sources.end());
      found->more_sources.clear();
      evidence.Merge(std::move(*found));
    }
  }
  Attribution out = Resolve(evidence, inputs);
  out.sources = std::move(states);
  return out;
}

}  // namespace gpuscope::attribution

// libFuzzer target: the agent's /api/v1/snapshot answer parser
// (serve/snapshot_json.h), which `gpuscope --agent URL`, `query`, `-L` and
// `top --agent` feed from the network. Any input must parse or fail with a
// message, never throw; a parsed snapshot holds no text that could drive a
// terminal, is internally consistent (a sample per device), and writes back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "gpuscope/attribution.h"
#include "serve/snapshot_json.h"
#include "terminal_control.h"

namespace {

void CheckText(const std::string& text) {
  if (gpuscope::fuzz::HasTerminalControl(text) || text.find('\n') != std::string::npos) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuscope;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Result<serve::RemoteSnapshot> parsed = serve::ParseSnapshotJson(text);
  if (!parsed.ok()) {
    if (parsed.status().message().empty()) std::abort();
    return 0;
  }
  const Snapshot& s = *parsed->snapshot;
  if (s.gpus.size() != s.samples.size() || parsed->verdicts.size() > s.gpus.size()) std::abort();
  CheckText(s.system.hostname);
  CheckText(s.nvml_error);
  for (const GpuInfo& g : s.gpus) {
    for (const std::string* t : {&g.name, &g.uuid, &g.pci_bus_id, &g.mig_uuid, &g.mig_profile}) {
      CheckText(*t);
    }
  }
  for (const GpuSample& sample : s.samples) {
    CheckText(sample.state_reason);
    for (const ProcessInfo& p : sample.processes) CheckText(p.name);
    for (const VgpuInstance& v : sample.vgpus) CheckText(v.vm_name);
  }
  for (const std::string& v : parsed->verdicts) CheckText(v);
  if (s.attribution) {
    for (const auto& [key, holders] : s.attribution->holders) {
      for (const Holder& h : holders) CheckText(h.Describe());
    }
  }
  // What parsed writes back and parses again.
  const std::string again = serve::SnapshotJson(s, parsed->agent, parsed->verdicts);
  if (!serve::ParseSnapshotJson(again).ok()) std::abort();
  return 0;
}

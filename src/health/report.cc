#include "health/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "gpuscope/attribution_json.h"

namespace gpuscope::health {
namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

// "GPU 0 <model> <bus id> (<uuid>)" with only the parts known: a GPU lost
// before its first read was never described.
std::string GpuTitle(const GpuHealth& g) {
  std::string out = fmt::format("GPU {}", g.gpu);
  if (g.model.empty() && g.pci_bus_id.empty() && g.uuid.empty()) {
    return out + (g.lost ? " (identity unknown: lost before first read)" : " (identity unknown)");
  }
  for (const std::string* part : {&g.model, &g.pci_bus_id}) {
    if (!part->empty()) out += " " + *part;
  }
  if (!g.uuid.empty()) out += " (" + g.uuid + ")";
  return out;
}

void FormatGpu(const GpuHealth& g, const ReportOptions& options, std::string& out) {
  out += fmt::format("{}: {}\n", GpuTitle(g), Upper(VerdictName(g.verdict)));
  for (const Holder& h : g.holders) out += fmt::format("  serves   {}\n", h.Describe());
  for (const ProcessHolding& p : g.processes) {
    if (!p.holder.workload.empty()) {
      out += fmt::format("  process  {} {}: {}\n", p.pid, p.name, p.holder.Describe());
    }
  }
  for (const CheckResult& c : g.checks) {
    if (!c.evaluated) continue;
    const bool show = options.verbose || c.verdict != Verdict::kOk;
    out += fmt::format("  {:<8} {}", CheckName(c.check), Upper(VerdictName(c.verdict)));
    if (!show) {
      out += c.evidence.empty() ? "\n" : fmt::format("  {}\n", c.evidence.front());
      continue;
    }
    out += "\n";
    for (const std::string& line : c.evidence) out += fmt::format("           - {}\n", line);
    if (!c.action.empty()) out += fmt::format("           what to do: {}\n", c.action);
  }
}

}  // namespace

std::string FormatReport(const HealthReport& report, const ReportOptions& options) {
  std::string out;
  unsigned ok = 0, warn = 0, fail = 0;
  for (const GpuHealth& g : report.gpus) {
    (g.verdict == Verdict::kOk ? ok : g.verdict == Verdict::kWarn ? warn : fail) += 1;
  }
  out += fmt::format("{}: {} ({} GPUs: {} ok, {} warn, {} fail)\n",
                     report.hostname.empty() ? "node" : report.hostname,
                     Upper(VerdictName(report.verdict)), report.gpus.size(), ok, warn, fail);
  if (!report.nvml_up) {
    out += fmt::format("NVML is down: {}\n", report.nvml_error);
    out += "what to do: check that the NVIDIA driver is loaded (nvidia-smi, dmesg).\n";
  }
  if (!report.events_running) {
    out += "note: the XID event thread is not running; XIDs are not judged.\n";
  }
  for (const GpuHealth& g : report.gpus) {
    out += "\n";
    FormatGpu(g, options, out);
  }
  return out;
}

std::string FormatJson(const HealthReport& report) {
  using nlohmann::json;
  json gpus = json::array();
  for (const GpuHealth& g : report.gpus) {
    json checks = json::object();
    for (const CheckResult& c : g.checks) {
      if (!c.evaluated) continue;
      checks[std::string(CheckName(c.check))] = {
          {"verdict", VerdictName(c.verdict)}, {"evidence", c.evidence}, {"action", c.action}};
    }
    json totals = json::object(), window = json::object();
    for (const auto& [xid, n] : g.xid_totals) totals[std::to_string(xid)] = n;
    for (const auto& [xid, n] : g.xid_window) window[std::to_string(xid)] = n;
    gpus.push_back({{"gpu", g.gpu},
                    {"uuid", g.uuid},
                    {"pci_bus_id", g.pci_bus_id},
                    {"model", g.model},
                    {"verdict", VerdictName(g.verdict)},
                    {"lost", g.lost},
                    {"stale", g.stale},
                    {"checks", checks},
                    {"holders", g.holders},
                    {"processes", g.processes},
                    {"xid",
                     {{"total", totals},
                      {"window", window},
                      {"window_seconds", report.xid_window_seconds},
                      {"last", g.last_xid ? json(*g.last_xid) : json(nullptr)}}}});
  }
  json out = {{"hostname", report.hostname},
              {"timestamp", report.timestamp},
              {"verdict", VerdictName(report.verdict)},
              {"nvml_up", report.nvml_up},
              {"events_running", report.events_running},
              {"gpus", gpus}};
  if (!report.nvml_up) out["nvml_error"] = report.nvml_error;
  return out.dump(2) + "\n";
}

}  // namespace gpuscope::health

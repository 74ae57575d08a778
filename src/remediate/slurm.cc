#include "remediate/slurm.h"

#include <fmt/format.h>
#include <unistd.h>

#include <set>
#include <vector>

#include "base/text.h"
#include "remediate/command.h"

namespace gpuscope::remediate {
namespace {

// The first `n` '|'-separated fields, the rest of the line in the last one
// (an admin's reason may contain '|').
std::vector<std::string_view> Fields(std::string_view line, std::size_t n) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < n) {
    const std::size_t bar = line.find('|');
    if (bar == std::string_view::npos) break;
    out.push_back(line.substr(0, bar));
    line.remove_prefix(bar + 1);
  }
  out.push_back(line);
  return out;
}

bool HasFeature(std::string_view features, std::string_view want) {
  while (!features.empty()) {
    const std::size_t comma = features.find(',');
    if (features.substr(0, comma) == want) return true;
    if (comma == std::string_view::npos) break;
    features.remove_prefix(comma + 1);
  }
  return false;
}

std::string Trimmed(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
    s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

NodeView ParseSinfo(std::string_view text, std::string_view node) {
  NodeView v;
  std::set<std::string, std::less<>> seen, ours;
  while (!text.empty()) {
    const std::string_view line = base::PopLine(text);
    const std::vector<std::string_view> f = Fields(line, 4);
    if (f.size() < 4 || f[0].empty()) continue;
    const std::string name(f[0]);
    const std::string reason = f[3] == "none" ? "" : Trimmed(f[3]);
    // %T: "drained", "draining", "idle+drain", "drained*" (not responding).
    const bool drained = f[1].find("drain") != std::string_view::npos;
    seen.insert(name);
    if (drained && reason.starts_with(kReasonPrefix)) ours.insert(name);
    if (name != node) continue;
    v.found = true;
    v.drained = drained;
    v.reason = drained ? reason : "";
    v.opted_out = HasFeature(f[2], kOptOutFeature);
  }
  v.nodes = static_cast<int>(seen.size());
  v.drained_by_us = static_cast<int>(ours.size());
  return v;
}

std::string ShortHostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  std::string s(name);
  return s.substr(0, s.find('.'));
}

SlurmActuator::SlurmActuator(SlurmOptions options) : options_(std::move(options)) {
  if (options_.node.empty()) options_.node = ShortHostname();
}

NodeView SlurmActuator::Read() {
  Result<CommandOutput> out = RunCommand(
      {options_.sinfo, "--noheader", "--Node", "--format=%N|%T|%f|%E"}, options_.timeout_s);
  NodeView v;
  if (!out.ok()) {
    v.error = out.status().message();
  } else if (out->exit_code != 0) {
    v.error =
        fmt::format("{} exited with {}: {}", options_.sinfo, out->exit_code, Trimmed(out->output));
  } else {
    v = ParseSinfo(out->output, options_.node);
    if (!v.found) v.error = fmt::format("node '{}' is not in sinfo's list", options_.node);
  }
  return v;
}

Status SlurmActuator::Update(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {options_.scontrol, "update", "nodename=" + options_.node};
  argv.insert(argv.end(), args.begin(), args.end());
  Result<CommandOutput> out = RunCommand(argv, options_.timeout_s);
  if (!out.ok()) return out.status();
  if (out->exit_code != 0) {
    return Status::Unavailable(fmt::format("{} exited with {}: {}", options_.scontrol,
                                           out->exit_code, Trimmed(out->output)));
  }
  return Status::Ok();
}

Result<DrainResult> SlurmActuator::Drain(const Decision& d) {
  GPUSCOPE_RETURN_IF_ERROR(Update({"state=drain", "reason=" + d.reason}));
  return DrainResult::kDrained;
}

Status SlurmActuator::Resume() { return Update({"state=resume"}); }

}  // namespace gpuscope::remediate

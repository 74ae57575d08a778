#include "remediate/slurm.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
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

// The words of sinfo's %T (slurm_protocol_defs.c: node_state_string and, in
// newer Slurm, node_state_string_complete's "BASE+FLAG+FLAG") that mean the
// node is in plain service: nobody took it out. Everything else (down, fail,
// failing, maint, reserved, reboot, power saving, inval, future, unknown, an
// unknown word) is someone else's, and fails closed.
constexpr std::array<std::string_view, 10> kInServiceWords = {
    "idle",    "allocated", "alloc",          "mixed",        "completing",
    "planned", "perfctrs",  "not_responding", "dynamic_norm", "npc"};
constexpr std::array<std::string_view, 4> kDrainWords = {"drain", "drained", "draining", "drng"};
// The one-character flags after the state (sinfo(1) "NODE STATE CODES") that
// leave the node in service: * not responding, + completing (allocated+),
// - planned by the backfill scheduler. The others ($ maintenance, @ reboot
// requested, ^ reboot issued, # powering up, % powering down, ~ powered off,
// ! pending power down) are someone's plan for the node.
constexpr std::string_view kInServiceFlags = "*+-";
constexpr std::string_view kFlags = "*+-$@^#%~!";

template <std::size_t N>
bool OneOf(std::string_view word, const std::array<std::string_view, N>& words) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

int64_t ParseEpoch(std::string_view text) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() && v > 0 ? v : 0;
}

}  // namespace

SlurmState ClassifyState(std::string_view state) {
  std::string text = base::Lower(base::Trim(state));
  SlurmState s;
  bool in_service = !text.empty();
  while (!text.empty() && kFlags.find(text.back()) != std::string_view::npos) {
    if (kInServiceFlags.find(text.back()) == std::string_view::npos) in_service = false;
    text.pop_back();
  }
  std::string_view rest = text;
  bool any_word = false;
  while (!rest.empty() || !any_word) {
    const std::size_t plus = rest.find('+');
    const std::string_view word = rest.substr(0, plus);
    any_word = true;
    if (OneOf(word, kDrainWords)) {
      s.drain = true;
    } else if (!OneOf(word, kInServiceWords)) {
      in_service = false;
    }
    if (plus == std::string_view::npos) break;
    rest.remove_prefix(plus + 1);
  }
  s.in_service = in_service;
  return s;
}

std::vector<SinfoNode> ParseSinfoNodes(std::string_view text) {
  std::vector<SinfoNode> out;
  while (!text.empty()) {
    const std::string_view line = base::PopLine(text);
    const std::vector<std::string_view> f = Fields(line, 5);
    if (f.size() < 5 || f[0].empty()) continue;
    SinfoNode n;
    n.name = std::string(f[0]);
    n.state = Trimmed(f[1]);
    n.features = std::string(f[2]);
    n.reason_time = ParseEpoch(f[3]);
    n.reason = f[4] == "none" ? "" : Trimmed(f[4]);
    out.push_back(std::move(n));
  }
  return out;
}

NodeView ParseSinfo(std::string_view text, std::string_view node) {
  NodeView v;
  std::set<std::string, std::less<>> seen, ours;
  for (const SinfoNode& n : ParseSinfoNodes(text)) {
    const SlurmState state = ClassifyState(n.state);
    seen.insert(n.name);
    if (state.drain && IsOurReason(n.reason)) ours.insert(n.name);
    if (n.name != node) continue;
    v.found = true;
    v.drained = state.drain;
    v.reason = n.reason;
    v.state = n.state;
    v.held = !state.in_service || (!n.reason.empty() && !IsOurReason(n.reason));
    v.opted_out = HasFeature(n.features, kOptOutFeature);
  }
  v.nodes = static_cast<int>(seen.size());
  v.drained_by_us = static_cast<int>(ours.size());
  return v;
}

bool WithinBreaker(const std::vector<SinfoNode>& nodes, std::string_view node,
                   std::string_view reason, int limit) {
  std::set<std::pair<int64_t, std::string>> drains;  // (reason time, name), once per node
  std::optional<std::pair<int64_t, std::string>> mine;
  for (const SinfoNode& n : nodes) {
    if (!ClassifyState(n.state).drain || !IsOurReason(n.reason)) continue;
    drains.emplace(n.reason_time, n.name);
    if (n.name == node && n.reason == reason) mine.emplace(n.reason_time, n.name);
  }
  if (!mine) return false;
  const auto ahead = std::distance(drains.begin(), drains.find(*mine));
  return ahead < limit;
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

Result<std::string> SlurmActuator::Sinfo() {
  Result<CommandOutput> out =
      RunCommand({options_.sinfo, "--all", "--noheader", "--Node", "--format=%N|%T|%f|%H|%E"},
                 options_.timeout_s, {"SLURM_TIME_FORMAT=%s"});
  if (!out.ok()) return out.status();
  if (out->exit_code != 0) {
    return Status::Unavailable(
        fmt::format("{} exited with {}: {}", options_.sinfo, out->exit_code, Trimmed(out->output)));
  }
  return std::move(out->output);
}

NodeView SlurmActuator::Read() {
  Result<std::string> text = Sinfo();
  NodeView v;
  if (!text.ok()) {
    v.error = text.status().message();
  } else {
    v = ParseSinfo(*text, options_.node);
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
  return Arbitrate(d);
}

// slurmctld stamped our reason with its clock's second S while scontrol ran.
// Once that clock has passed S, every drain our next read misses is stamped
// after S, so it ranks after ours: all agents rank the drains alike.
Result<DrainResult> SlurmActuator::Arbitrate(const Decision& d) {
  std::this_thread::sleep_for(std::chrono::duration<double>(options_.arbitration_wait_s));
  Result<std::string> text = Sinfo();
  for (int retry = 0; retry < 2 && !text.ok(); ++retry) text = Sinfo();
  if (!text.ok()) {
    // Unknown standing: the drain stays (it is ours, and the policy's first
    // read found the breaker closed); the error is logged and counted.
    return Status::Unavailable(
        fmt::format("drained, but the breaker's second read failed: {}", text.status().message()));
  }
  const std::vector<SinfoNode> nodes = ParseSinfoNodes(*text);
  if (WithinBreaker(nodes, options_.node, d.reason, d.breaker_limit)) return DrainResult::kDrained;
  const auto mine = std::find_if(nodes.begin(), nodes.end(), [&](const SinfoNode& n) {
    return n.name == options_.node && ClassifyState(n.state).drain && n.reason == d.reason;
  });
  if (mine == nodes.end()) return DrainResult::kDrained;  // no longer our drain: not ours to undo
  GPUSCOPE_RETURN_IF_ERROR(Update({"state=resume"}));
  return DrainResult::kBreakerOpen;
}

Status SlurmActuator::Resume() { return Update({"state=resume"}); }

}  // namespace gpuscope::remediate

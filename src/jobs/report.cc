#include "jobs/report.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "base/text.h"

namespace gpuscope::jobs {
namespace {

constexpr double kSecondsPerHour = 3600;
constexpr double kJoulesPerKwh = 3.6e6;
constexpr double kGiB = 1024.0 * 1024 * 1024;

double Ratio(double part, double whole) { return whole > 0 ? part / whole : 0; }

// The latest time a report accepts and prints: 9999-12-31 23:59:59 UTC.
constexpr double kMaxUnixSeconds = 253402300799;

std::string Duration(double seconds) {
  if (!(seconds >= 0 && seconds <= kMaxUnixSeconds)) return "invalid";
  const long s = std::lround(seconds);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

std::string Percent(double ratio) { return fmt::format("{:.0f}%", ratio * 100); }

std::string Gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / kGiB); }

std::string Utc(double unix_seconds) {
  if (!(unix_seconds >= 0 && unix_seconds <= kMaxUnixSeconds)) return "invalid time";
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

double Sum(const Report& r, double GpuLine::*field) {
  double total = 0;
  for (const GpuLine& g : r.gpus) total += g.*field;
  return total;
}

// mig_fit's profiles: a GPU has 8 memory slices; 1g, 2g and 3g instances
// hold 1, 2 and 4 of them ("1g.10gb", "2g.20gb", "3g.40gb" on an 80 GB GPU).
struct MigProfile {
  std::string name;
  double bytes = 0;
};
std::optional<MigProfile> SmallestMigProfile(double total_bytes, double needed_bytes) {
  const double gib = std::round(total_bytes / kGiB);
  for (auto [g, slices] : {std::pair{1, 1}, {2, 2}, {3, 4}}) {
    const double bytes = total_bytes / 8 * slices;
    if (bytes >= needed_bytes) {
      return MigProfile{fmt::format("{}g.{:.0f}gb", g, gib / 8 * slices), bytes};
    }
  }
  return std::nullopt;
}

using NoteCheck = std::optional<std::string> (*)(const Report&, const NoteThresholds&);

std::optional<std::string> GpusUnused(const Report& r, const NoteThresholds& t) {
  std::vector<std::string> unused;
  for (const GpuLine& g : r.gpus) {
    if (g.held_seconds > 0 && g.busy_ratio < t.unused_busy_ratio) {
      unused.push_back(fmt::format("GPU {} on {}", g.gpu, g.hostname));
    }
  }
  if (unused.empty()) return std::nullopt;
  const std::size_t used = r.gpus.size() - unused.size();
  return fmt::format("{} of {} GPUs were never used ({}): ask for {} next time.", unused.size(),
                     r.gpus.size(), fmt::join(unused, ", "),
                     used == 0 ? std::string("none, or check that the job uses the GPU")
                               : fmt::format("{} GPU{}", used, used == 1 ? "" : "s"));
}

std::optional<std::string> MigFit(const Report& r, const NoteThresholds& t) {
  double activity = 0, peak = 0, total = 0;
  for (const GpuLine& g : r.gpus) {
    if (!g.mig_profile.empty() || g.memory_total_bytes <= 0) return std::nullopt;
    if (g.busy_ratio < t.unused_busy_ratio) continue;  // gpus_unused says it
    activity = std::max(activity, g.sm_active_ratio.value_or(g.busy_ratio));
    peak = std::max(peak, g.memory_peak_bytes);
    total = g.memory_total_bytes;
  }
  if (total <= 0 || activity >= t.mig_max_sm_active_ratio) return std::nullopt;
  auto profile = SmallestMigProfile(total, peak * t.mig_memory_headroom);
  if (!profile) return std::nullopt;
  return fmt::format(
      "The GPUs were lightly used (SM activity at most {}, peak memory {} of {}): a MIG "
      "instance such as {} would do; ask for one instead of a whole GPU.",
      Percent(activity), Gib(peak), Gib(total), profile->name);
}

std::optional<std::string> IdleHeld(const Report& r, const NoteThresholds& t) {
  const double idle = Sum(r, &GpuLine::idle_held_seconds);
  const double held = Sum(r, &GpuLine::held_seconds);
  if (idle < t.idle_held_min_seconds || Ratio(idle, held) < t.idle_held_min_ratio) {
    return std::nullopt;
  }
  return fmt::format(
      "GPUs sat idle while the job held their memory for {} of GPU time ({} of the time held): "
      "release GPUs between phases (data loading, evaluation on CPU) or end the job when its "
      "work is done.",
      Duration(idle), Percent(Ratio(idle, held)));
}

std::optional<std::string> Throttled(const Report& r, const NoteThresholds& t) {
  const double throttled = Sum(r, &GpuLine::throttled_seconds);
  const double held = Sum(r, &GpuLine::held_seconds);
  if (Ratio(throttled, held) < t.throttled_min_ratio) return std::nullopt;
  std::map<std::string, double> reasons;
  for (const GpuLine& g : r.gpus) {
    for (const auto& [reason, s] : g.throttle_reason_seconds) reasons[reason] += s;
  }
  auto top = std::max_element(reasons.begin(), reasons.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; });
  const std::string cause = top == reasons.end() ? "unknown" : top->first;
  const bool thermal = cause.find("thermal") != std::string::npos;
  return fmt::format("The GPUs were throttled {} of the time, mostly by {}: {}.",
                     Percent(Ratio(throttled, held)), cause,
                     thermal ? "tell the site's administrators (cooling); the job ran slower"
                             : "the power limit held the clocks down; the job ran slower than "
                               "the GPUs can");
}

std::optional<std::string> MemoryNearCapacity(const Report& r, const NoteThresholds& t) {
  const GpuLine* worst = nullptr;
  for (const GpuLine& g : r.gpus) {
    if (g.memory_total_bytes <= 0) continue;
    if (!worst || Ratio(g.memory_peak_bytes, g.memory_total_bytes) >
                      Ratio(worst->memory_peak_bytes, worst->memory_total_bytes)) {
      worst = &g;
    }
  }
  if (!worst ||
      Ratio(worst->memory_peak_bytes, worst->memory_total_bytes) < t.memory_near_capacity_ratio) {
    return std::nullopt;
  }
  return fmt::format(
      "Peak memory reached {} of GPU {}'s {}: close to out-of-memory; lower the batch size or "
      "ask for GPUs with more memory.",
      Percent(Ratio(worst->memory_peak_bytes, worst->memory_total_bytes)), worst->gpu,
      Gib(worst->memory_total_bytes));
}

std::optional<std::string> BelowBaseline(const Report& r, const NoteThresholds&) {
  if (!r.baseline) return std::nullopt;
  double held = 0, active = 0;
  for (const GpuLine& g : r.gpus) {
    held += g.held_seconds;
    active += g.held_seconds * g.sm_active_ratio.value_or(g.busy_ratio);
  }
  if (held <= 0 || active / held >= r.baseline->p5) return std::nullopt;
  return fmt::format(
      "SM activity was {} where workload {} usually runs at {} (its 5th percentile over 14 days "
      "is {}): this run was slower than usual; `gpuscope baseline --workload {}` shows its other "
      "signals.",
      Percent(active / held), r.baseline->workload, Percent(r.baseline->p50),
      Percent(r.baseline->p5), r.baseline->workload);
}

struct NoteRule {
  std::string_view kind;
  NoteCheck check;
};

// Rules as data: one row per note kind, in the order notes print.
constexpr NoteRule kNoteRules[] = {
    {"gpus_unused", GpusUnused},
    {"mig_fit", MigFit},
    {"idle_held", IdleHeld},
    {"throttled", Throttled},
    {"memory_near_capacity", MemoryNearCapacity},
    {"below_baseline", BelowBaseline},
};

// The thresholds YAML's keys, each with its field.
struct ThresholdKey {
  std::string_view key;
  double NoteThresholds::*field;
};
constexpr ThresholdKey kThresholdKeys[] = {
    {"unused_busy_ratio", &NoteThresholds::unused_busy_ratio},
    {"mig_max_sm_active_ratio", &NoteThresholds::mig_max_sm_active_ratio},
    {"mig_memory_headroom", &NoteThresholds::mig_memory_headroom},
    {"idle_held_min_ratio", &NoteThresholds::idle_held_min_ratio},
    {"idle_held_min_seconds", &NoteThresholds::idle_held_min_seconds},
    {"throttled_min_ratio", &NoteThresholds::throttled_min_ratio},
    {"memory_near_capacity_ratio", &NoteThresholds::memory_near_capacity_ratio},
    {"first_kernel_min_seconds", &NoteThresholds::first_kernel_min_seconds},
};

// Null when unknown (ordered: the --json contract's key order).
nlohmann::ordered_json OrNull(std::optional<double> v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

Result<NoteThresholds> ParseThresholds(const std::string& yaml_text) {
  NoteThresholds out;
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(std::string("thresholds: ") + e.what());
  }
  if (root.IsNull()) return out;
  if (!root.IsMap()) return Status::InvalidArgument("thresholds: expected `key: number` lines");
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    auto row = std::find_if(std::begin(kThresholdKeys), std::end(kThresholdKeys),
                            [&](const ThresholdKey& k) { return k.key == key; });
    if (row == std::end(kThresholdKeys)) {
      return Status::InvalidArgument("thresholds: unknown key '" + key + "'");
    }
    try {
      const double value = item.second.as<double>();
      if (!std::isfinite(value) || value < 0) throw YAML::Exception({}, "negative");
      out.*(row->field) = value;
    } catch (const YAML::Exception&) {
      return Status::InvalidArgument("thresholds: '" + key + "' must be a number >= 0");
    }
  }
  return out;
}

std::vector<Note> Notes(const Report& report, const NoteThresholds& thresholds) {
  std::vector<Note> out;
  for (const NoteRule& rule : kNoteRules) {
    if (auto text = rule.check(report, thresholds)) out.push_back({std::string(rule.kind), *text});
  }
  return out;
}

namespace {

// "" when `value` is a possible amount of `what` (finite, >= 0, and for times
// and durations at most kMaxUnixSeconds), else what is wrong.
std::string Impossible(const char* what, double value, bool time_like) {
  if (std::isfinite(value) && value >= 0 && (!time_like || value <= kMaxUnixSeconds)) return "";
  return fmt::format("{} is {} ({})", what, value,
                     !std::isfinite(value) ? "not a number"
                     : value < 0           ? "negative"
                                           : "past the year 9999");
}

std::string DeviceProblem(const DeviceUsage& d) {
  const std::pair<const char*, double> times[] = {
      {"held_seconds", d.held_seconds},
      {"busy_seconds", d.busy_seconds},
      {"sm_active_seconds", d.sm_active_seconds},
      {"tensor_active_seconds", d.tensor_active_seconds},
      {"idle_held_seconds", d.idle_held_seconds},
      {"throttled_seconds", d.throttled_seconds},
      {"first_seen", d.first_seen},
      {"last_seen", d.last_seen}};
  for (const auto& [what, value] : times) {
    if (std::string p = Impossible(what, value, true); !p.empty()) return p;
  }
  for (const auto& [reason, value] : d.throttle_reason_seconds) {
    if (std::string p = Impossible("a throttle reason's seconds", value, true); !p.empty())
      return p;
  }
  const std::pair<const char*, double> amounts[] = {{"energy_joules", d.energy_joules},
                                                    {"memory_peak_bytes", d.memory_peak_bytes},
                                                    {"memory_total_bytes", d.memory_total_bytes}};
  for (const auto& [what, value] : amounts) {
    if (std::string p = Impossible(what, value, false); !p.empty()) return p;
  }
  return "";
}

}  // namespace

Status CheckUsage(const JobUsage& u) {
  const std::string holder = base::Excerpt(u.kind + " " + u.id);
  auto bad = [&](const std::string& problem) {
    return Status::InvalidArgument(holder + ": impossible usage: " + problem);
  };
  if (std::string p = Impossible("start", u.start, true); !p.empty()) return bad(p);
  if (u.end) {
    if (std::string p = Impossible("end", *u.end, true); !p.empty()) return bad(p);
    if (*u.end < u.start) return bad(fmt::format("end {} is before start {}", *u.end, u.start));
  }
  for (const DeviceUsage& d : u.devices) {
    if (std::string p = DeviceProblem(d); !p.empty()) {
      return bad("device " + base::Excerpt(d.device_key) + ": " + p);
    }
  }
  for (const FindingSeen& f : u.findings) {
    for (double t : {f.first, f.last}) {
      if (std::string p = Impossible("a finding's time", t, true); !p.empty()) return bad(p);
    }
  }
  return Status::Ok();
}

Report BuildReport(const JobUsage& usage, const ReportOptions& options) {
  Report r;
  r.job = usage.kind + " " + usage.id;
  r.source = options.source;
  r.start = usage.start;
  r.end = usage.end;
  for (const DeviceUsage& d : usage.devices) {
    GpuLine g;
    g.uuid = d.uuid;
    g.gpu = d.gpu;
    g.hostname = d.hostname;
    g.mig_profile = d.mig_profile;
    g.held_seconds = d.held_seconds;
    g.busy_ratio = Ratio(d.busy_seconds, d.held_seconds);
    if (d.sm_active_known) g.sm_active_ratio = Ratio(d.sm_active_seconds, d.held_seconds);
    g.memory_peak_bytes = d.memory_peak_bytes;
    g.memory_total_bytes = d.memory_total_bytes;
    if (d.energy_known) g.energy_joules = d.energy_joules;
    g.idle_held_seconds = d.idle_held_seconds;
    g.throttled_seconds = d.throttled_seconds;
    g.throttle_reason_seconds = d.throttle_reason_seconds;
    g.split = d.split;
    r.gpus.push_back(std::move(g));
    r.gpu_hours += d.held_seconds / kSecondsPerHour;
    r.busy_gpu_hours += d.busy_seconds / kSecondsPerHour;
    r.energy_kwh += d.energy_joules / kJoulesPerKwh;
    r.idle_held_gpu_hours += d.idle_held_seconds / kSecondsPerHour;
  }
  if (options.gpu_hour_price) r.cost = r.gpu_hours * *options.gpu_hour_price;
  r.findings = usage.findings;
  r.baseline = options.baseline;
  r.notes = Notes(r, options.thresholds);
  return r;
}

std::string ReportJson(const Report& r) {
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const GpuLine& g : r.gpus) {
    gpus.push_back({{"uuid", g.uuid},
                    {"gpu", g.gpu},
                    {"mig_profile", g.mig_profile.empty() ? nlohmann::ordered_json(nullptr)
                                                          : nlohmann::ordered_json(g.mig_profile)},
                    {"hostname", g.hostname},
                    {"sm_active_ratio", OrNull(g.sm_active_ratio)},
                    {"busy_ratio", g.busy_ratio},
                    {"memory_peak_bytes", g.memory_peak_bytes},
                    {"memory_total_bytes", g.memory_total_bytes},
                    {"energy_joules", OrNull(g.energy_joules)},
                    {"idle_held_seconds", g.idle_held_seconds},
                    {"throttled_seconds", g.throttled_seconds},
                    {"split", g.split.empty() ? nlohmann::ordered_json(nullptr)
                                              : nlohmann::ordered_json(g.split)}});
  }
  nlohmann::ordered_json notes = nlohmann::ordered_json::array();
  for (const Note& n : r.notes) notes.push_back({{"kind", n.kind}, {"text", n.text}});
  nlohmann::ordered_json out = {{"job", r.job},
                                {"source", r.source},
                                {"start", r.start},
                                {"end", OrNull(r.end)},
                                {"gpus", std::move(gpus)},
                                {"gpu_hours", r.gpu_hours},
                                {"energy_kwh", r.energy_kwh},
                                {"idle_held_gpu_hours", r.idle_held_gpu_hours},
                                {"cost", OrNull(r.cost)},
                                {"notes", std::move(notes)}};
  return out.dump(2, ' ', /*ensure_ascii=*/true) + "\n";
}

namespace {

// One GPU's cells, for the table and Markdown.
std::vector<std::string> Cells(const GpuLine& g) {
  return {std::to_string(g.gpu) + (g.mig_profile.empty() ? "" : " (" + g.mig_profile + ")"),
          g.hostname,
          g.sm_active_ratio ? Percent(*g.sm_active_ratio) : "-",
          Percent(g.busy_ratio),
          Gib(g.memory_peak_bytes) + " / " + Gib(g.memory_total_bytes),
          g.energy_joules ? fmt::format("{:.3f} kWh", *g.energy_joules / kJoulesPerKwh) : "-",
          Duration(g.idle_held_seconds),
          Duration(g.throttled_seconds),
          g.split.empty() ? "-" : g.split};
}

const std::vector<std::string> kHeader = {"GPU",    "HOST",      "SM ACTIVE", "BUSY", "MEMORY PEAK",
                                          "ENERGY", "IDLE-HELD", "THROTTLED", "SPLIT"};

// How a holder's GPUs were split: their one method, "mixed" when they
// differ, "-" when the source does not split.
std::string SplitOf(const Report& r) {
  std::string out;
  for (const GpuLine& g : r.gpus) {
    if (g.split.empty()) continue;
    if (out.empty()) out = g.split;
    if (out != g.split) return "mixed";
  }
  return out.empty() ? "-" : out;
}

// The report with the text that came from the source (ids, host names, the
// notes that quote them) safe for a terminal, one line each.
Report Printable(Report r) {
  auto clean = [](std::string& text) { text = base::TerminalText(text); };
  clean(r.job);
  clean(r.source);
  for (GpuLine& g : r.gpus) clean(g.uuid), clean(g.hostname), clean(g.mig_profile), clean(g.split);
  for (FindingSeen& f : r.findings) clean(f.kind), clean(f.device_key);
  for (Note& n : r.notes) clean(n.kind), clean(n.text);
  return r;
}

std::string Summary(const Report& r) {
  return fmt::format(
      "{}, {}; {:.2f} GPU-hours ({:.2f} busy), {:.3f} kWh, {:.2f} idle-held "
      "GPU-hours{}",
      "from " + Utc(r.start), r.end ? "ended " + Utc(*r.end) : "running", r.gpu_hours,
      r.busy_gpu_hours, r.energy_kwh, r.idle_held_gpu_hours,
      r.cost ? fmt::format(", cost {:.2f}", *r.cost) : "");
}

}  // namespace

std::string ReportTable(const Report& report) {
  const Report r = Printable(report);
  std::vector<std::vector<std::string>> rows = {kHeader};
  for (const GpuLine& g : r.gpus) rows.push_back(Cells(g));
  std::vector<std::size_t> width(kHeader.size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out = "Report for " + r.job + " (" + r.source + ")\n" + Summary(r) + "\n\n";
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += fmt::format("{:<{}}", row[c], width[c] + (c + 1 < row.size() ? 2 : 0));
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  for (const FindingSeen& f : r.findings) {
    out += fmt::format("finding {} on {}: {} .. {}\n", f.kind, f.device_key, Utc(f.first),
                       Utc(f.last));
  }
  out += r.notes.empty() ? "\nNo notes: the job used what it asked for.\n" : "\nNotes:\n";
  for (const Note& n : r.notes) out += "  - " + n.text + " [" + n.kind + "]\n";
  return out;
}

std::string ReportMarkdown(const Report& report) {
  const Report r = Printable(report);
  std::string out = "## gpuscope report: " + r.job + "\n\n" + Summary(r) + " (" + r.source +
                    ")\n\n| " + fmt::format("{}", fmt::join(kHeader, " | ")) + " |\n|";
  for (std::size_t c = 0; c < kHeader.size(); ++c) out += "---|";
  out += "\n";
  for (const GpuLine& g : r.gpus)
    out += "| " + fmt::format("{}", fmt::join(Cells(g), " | ")) + " |\n";
  if (!r.findings.empty()) out += "\n**Findings**\n\n";
  for (const FindingSeen& f : r.findings) {
    out += fmt::format("- {} on {}: {} .. {}\n", f.kind, f.device_key, Utc(f.first), Utc(f.last));
  }
  out += r.notes.empty() ? "\nNo notes: the job used what it asked for.\n" : "\n**Notes**\n\n";
  for (const Note& n : r.notes) out += "- " + n.text + "\n";
  return out;
}

std::vector<JobUsage> FoldByNamespace(const std::vector<JobUsage>& pods) {
  std::map<std::string, JobUsage> by_namespace;
  std::map<std::string, bool> running;
  for (const JobUsage& pod : pods) {
    const std::string ns = pod.id.substr(0, pod.id.find('/'));
    auto [it, added] = by_namespace.try_emplace(ns);
    JobUsage& u = it->second;
    if (added) {
      u.kind = "namespace";
      u.id = u.namespace_name = ns;
      u.start = pod.start;
    }
    u.start = std::min(u.start, pod.start);
    if (!pod.end) running[ns] = true;
    if (pod.end) u.end = std::max(u.end.value_or(*pod.end), *pod.end);
    u.devices.insert(u.devices.end(), pod.devices.begin(), pod.devices.end());
    u.findings.insert(u.findings.end(), pod.findings.begin(), pod.findings.end());
  }
  std::vector<JobUsage> out;
  for (auto& [ns, u] : by_namespace) {
    if (running[ns]) u.end.reset();
    out.push_back(std::move(u));
  }
  std::stable_sort(out.begin(), out.end(), [](const JobUsage& a, const JobUsage& b) {
    if (a.end.has_value() != b.end.has_value()) return !a.end.has_value();
    return a.start < b.start;
  });
  return out;
}

std::string TenantsTable(const std::vector<Report>& reports, bool markdown) {
  std::string out = markdown ? "| HOLDER | GPU-HOURS | BUSY GPU-HOURS | IDLE-HELD GPU-HOURS | "
                               "ENERGY KWH | COST | SPLIT |\n|---|---|---|---|---|---|---|\n"
                             : fmt::format("{:<32}{:>12}{:>16}{:>21}{:>12}{:>10}  {}\n", "HOLDER",
                                           "GPU-HOURS", "BUSY GPU-HOURS", "IDLE-HELD GPU-HOURS",
                                           "ENERGY KWH", "COST", "SPLIT");
  for (const Report& r : reports) {
    const std::string holder = base::TerminalText(r.job);
    const std::string cost = r.cost ? fmt::format("{:.2f}", *r.cost) : "-";
    const std::string split = base::TerminalText(SplitOf(r));
    out += markdown ? fmt::format("| {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {} | {} |\n", holder,
                                  r.gpu_hours, r.busy_gpu_hours, r.idle_held_gpu_hours,
                                  r.energy_kwh, cost, split)
                    : fmt::format("{:<32}{:>12.3f}{:>16.3f}{:>21.3f}{:>12.3f}{:>10}  {}\n", holder,
                                  r.gpu_hours, r.busy_gpu_hours, r.idle_held_gpu_hours,
                                  r.energy_kwh, cost, split);
  }
  return out;
}

std::string TenantsJson(const std::vector<Report>& reports) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const Report& r : reports) {
    rows.push_back({{"holder", r.job},
                    {"start", r.start},
                    {"end", OrNull(r.end)},
                    {"gpu_hours", r.gpu_hours},
                    {"busy_gpu_hours", r.busy_gpu_hours},
                    {"idle_held_gpu_hours", r.idle_held_gpu_hours},
                    {"energy_kwh", r.energy_kwh},
                    {"cost", OrNull(r.cost)},
                    {"split", SplitOf(r) == "-" ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(SplitOf(r))}});
  }
  return nlohmann::ordered_json{{"tenants", std::move(rows)}}.dump(2, ' ', /*ensure_ascii=*/true) +
         "\n";
}

}  // namespace gpuscope::jobs

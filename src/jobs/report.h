// A holder's report: what it used, what it wasted and what to ask for next
// time (`gpuscope report`, docs/reports.md). Built from a JobUsage (the
// agent's ledger, or the same quantities from Prometheus) by pure functions.
//
// --json is a contract (docs/reports.md):
//   {"job", "source", "start", "end" (null while running),
//    "gpus": [{"uuid", "gpu", "hostname", "sm_active_ratio", "busy_ratio",
//              "memory_peak_bytes", "memory_total_bytes", "energy_joules",
//              "idle_held_seconds", "throttled_seconds",
//              "split" ("measured", "even split", "sole holder", "mixed"; null
//              when the source does not split a shared GPU)}],
//    "gpu_hours", "energy_kwh", "idle_held_gpu_hours",
//    "cost" (null without a price), "notes": [{"kind", "text"}]}
// Ratios are of the time held; a value the GPU cannot tell (no GPM: SM
// activity; no energy counter) is null.
//
// Notes are rules as data (kNoteRules): each has a kind, the thresholds it
// reads, and a sentence that says what to change. Sites override thresholds
// in a YAML file (LoadThresholds; deploy/reports/thresholds.yaml lists them).
// A busy, healthy job gets no note.
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuscope/status.h"
#include "jobs/ledger.h"

namespace gpuscope::jobs {

// Defaults built in; every field is a key of the thresholds YAML. The
// below_baseline note has no threshold of its own: the baseline's p5 is one.
struct NoteThresholds {
  double unused_busy_ratio = 0.01;           // gpus_unused: a GPU busy less than this was not used
  double mig_max_sm_active_ratio = 0.2;      // mig_fit: SM activity (busy without GPM) under this
  double mig_memory_headroom = 1.2;          // mig_fit: the profile holds peak memory x this
  double idle_held_min_ratio = 0.1;          // idle_held: share of the time held
  double idle_held_min_seconds = 300;        // idle_held: and at least this long
  double throttled_min_ratio = 0.05;         // throttled: share of the time held
  double memory_near_capacity_ratio = 0.95;  // memory_near_capacity: peak / total
  double first_kernel_min_seconds = 10;      // first_kernel_late (gpuscope run): at least this
};

// A thresholds YAML (`key: number` per field above; unknown keys are errors,
// missing keys keep their defaults). Errors name the key.
Result<NoteThresholds> ParseThresholds(const std::string& yaml_text);

struct Note {
  std::string kind, text;
};

// The job's workload's learned SM activity (the shipped baseline rules,
// deploy/prometheus/rules/gpu-baselines.yml; docs/baselines.md): present
// only from Prometheus, once the baseline is past its warm-up.
struct WorkloadBaseline {
  std::string workload;
  double p5 = 0, p50 = 0;  // gpuscope:workload_signal:p5_14d / p50_14d, signal sm_active
};

struct GpuLine {
  std::string uuid, hostname, mig_profile;
  unsigned gpu = 0;
  std::optional<double> sm_active_ratio;
  double busy_ratio = 0;
  double memory_peak_bytes = 0, memory_total_bytes = 0;
  std::optional<double> energy_joules;
  double idle_held_seconds = 0, throttled_seconds = 0, held_seconds = 0;
  std::map<std::string, double> throttle_reason_seconds;  // by reason label
  // How a shared GPU's quantities were split for this holder (DeviceUsage::split):
  // "measured", "even split", "sole holder", "mixed"; "" when the source does
  // not split (a Prometheus job report: each holder's series carry the GPU).
  std::string split;
};

struct Report {
  std::string job;     // "job 4242", "pod ns/name", "workload trainer"
  std::string source;  // "agent http://node:9400"
  double start = 0;
  std::optional<double> end;
  std::vector<GpuLine> gpus;
  double gpu_hours = 0, busy_gpu_hours = 0, energy_kwh = 0, idle_held_gpu_hours = 0;
  std::optional<double> cost;
  std::vector<Note> notes;
  std::vector<FindingSeen> findings;  // the diagnosis's, for the human formats
  std::optional<WorkloadBaseline> baseline;
};

struct ReportOptions {
  std::string source;
  std::optional<double> gpu_hour_price;  // --gpu-hour-price: cost = gpu_hours x price
  NoteThresholds thresholds;
  std::optional<WorkloadBaseline> baseline;
};

// Whether the usage a source answered is possible: times within years
// 1970-9999 (unix seconds), an end not before the start; durations, energy and
// bytes finite and >= 0. Errors name the holder, the device and the field.
// Reports print only checked usages (the agent and Prometheus are the network).
Status CheckUsage(const JobUsage& usage);

Report BuildReport(const JobUsage& usage, const ReportOptions& options);
// The notes kNoteRules give for a report (its gpus and totals filled).
std::vector<Note> Notes(const Report& report, const NoteThresholds& thresholds);

// The formats print text from the source (ids, host names, reasons) safe for a
// terminal: the human ones through base::TerminalText, JSON as ASCII (\u
// escapes); a time or duration that is impossible prints as "invalid".
std::string ReportJson(const Report& report);
std::string ReportTable(const Report& report);     // the default, for a terminal
std::string ReportMarkdown(const Report& report);  // --markdown, for an e-mail

// Pods' usages (kind "pod", id "namespace/name") folded into one per
// namespace (kind "namespace", id the namespace), for `report tenants --by
// namespace`: devices and findings together, start the earliest, end the
// latest once every pod has ended. Running first, then by start.
std::vector<JobUsage> FoldByNamespace(const std::vector<JobUsage>& pods);

// The chargeback table of `report tenants`: one row per holder.
std::string TenantsTable(const std::vector<Report>& reports, bool markdown);
std::string TenantsJson(const std::vector<Report>& reports);

}  // namespace gpuscope::jobs

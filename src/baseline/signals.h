// The signals a per-workload baseline learns, and how each is measured per
// GPU over 5 minutes (PromQL over gpuscope's native families). The defaults
// cover the list; extra ones (application KPIs, a site's own series)
// come from `gpuscope baseline rules --signal`.
//
// A workload key is (namespace, workload, hpc_job, model): the attribution
// labels of docs/attribution.md plus the GPU model from gpuscope_gpu_info, so
// an H100 baseline never judges an A100. Series without a workload (an idle
// GPU nobody holds) have no key.
//
// Thread safety: pure functions over values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::baseline {

// Which way a deviation hurts. kNone: recorded and banded, never alerted.
enum class Direction { kNone, kFalling, kRising };
// Dashboards and alerts keep efficiency and health apart.
enum class Side { kEfficiency, kHealth };
// How a value is printed (annotations, the CLI).
enum class Unit { kRatio, kWatts, kCelsius, kPlain };

struct Signal {
  std::string name;     // the `signal` label value: sm_active, temperature_celsius, ...
  std::string title;    // "SM activity"
  std::string per_gpu;  // PromQL: one value per GPU holder over the last 5 minutes
  Direction bad = Direction::kNone;
  double spread_floor = 0;  // smallest spread a deviation is measured in (noise-free series)
  Unit unit = Unit::kPlain;
  Side side = Side::kEfficiency;
  std::string alert;  // alert name; "" derives one from the name
};

// The labels a baseline is kept per.
inline constexpr std::string_view kKeyLabels = "namespace, workload, hpc_job, model";

// The signals: SM activity (utilization without GPM), tensor and DRAM
// activity, memory-used fraction, power, temperature, throttle and idle share.
std::vector<Signal> DefaultSignals();

// NAME:DIRECTION:FLOOR:EXPR (DIRECTION falling, rising or none; EXPR the rest,
// colons allowed), e.g.
//   step_time_seconds:rising:0.005:avg_over_time(app_step_time_seconds{workload!=""}[5m])
Result<Signal> ParseSignal(std::string_view spec);

// The alert name of a signal: its `alert`, else GpuWorkload<Name><Below|Above>Baseline.
std::string AlertName(const Signal& signal);

std::string_view DirectionName(Direction direction);
std::string_view SideName(Side side);

}  // namespace gpuscope::baseline

// gpuscope_bench --mode=detection: detection latency per finding kind, from
// the onset a scenario's .expect names to the first finding, for `gpuscope
// diagnose` (the diagnosis at every scenario second) and for `gpuscope
// serve`'s exported gpuscope_bottleneck (the exporter's own monitor, with its
// 10 s cadence, rendered into the /metrics body every second). Scenario time,
// not wall-clock: the sampler and the simulator step together.
#pragma once

namespace gpuscope::bench {

// Prints one JSON object: {"cases": [...], "worst": {kind: {...}}}.
int RunDetectionLatency();

}  // namespace gpuscope::bench

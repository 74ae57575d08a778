// What the OTLP receiver keeps of one data point once decoded and named: who
// sent it (the resource attributes that attribute it to GPUs), which family
// it belongs to (after the KPI conventions and the mapping file, kpi.h), its
// own attributes as labels, and its value.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpuscope::otlp {

enum class Kind : uint8_t {
  kGauge,      // OTLP Gauge, or a non-monotonic Sum: the last value
  kCounter,    // a monotonic Sum: cumulative (delta points are added up)
  kHistogram,  // an explicit-bucket Histogram (delta points are added up)
};

// The resource attributes that say whose point it is (docs/app-kpis.md):
// process.pid, k8s.pod.name, k8s.namespace.name, service.name,
// service.instance.id and host.name; empty when absent. Two origins are the
// same sender when every field matches.
struct Origin {
  std::string pid, pod, namespace_name, service, service_instance, host;

  auto operator<=>(const Origin&) const = default;
};

using Labels = std::vector<std::pair<std::string, std::string>>;  // sorted by name

struct HistogramValue {
  std::vector<double> bounds;    // strictly increasing upper bounds (le), without +Inf
  std::vector<uint64_t> counts;  // per bucket, bounds.size() + 1 (the last is +Inf)
  uint64_t count = 0;
  double sum = 0;
};

}  // namespace gpuscope::otlp

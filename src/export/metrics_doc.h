// docs/metrics.md, generated from the catalog (DESIGN principle 5): every
// catalog row with its native name, type, labels, dcgm-exporter name,
// nvidia-smi name, category and help, plus the families the Renderer derives
// from a snapshot and the label sets. `gpuscope docs metrics` prints it; a test
// checks docs/metrics.md is up to date. Thread safety: pure function.
#pragma once

#include <string>

namespace gpuscope::prom {

std::string RenderMetricsDoc();

}  // namespace gpuscope::prom

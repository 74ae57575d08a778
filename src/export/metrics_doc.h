// docs/metrics.md, generated from the family registry view
// (export/family_registry.h, DESIGN principle 5): every catalog row with its
// native name, type, labels, dcgm-exporter name, nvidia-smi name, category and
// help, then every family beyond the catalog, and the label sets. `gpuscope
// docs metrics` prints it; a test checks docs/metrics.md is up to date.
// Thread safety: pure function.
#pragma once

#include <string>

#include "gpuscope/catalog.h"

namespace gpuscope::prom {

std::string RenderMetricsDoc();

// One row's line of the catalog table: names, type, labels, lean policy,
// source and help, all from the row.
std::string CatalogTableRow(const MetricDef& def);

}  // namespace gpuscope::prom

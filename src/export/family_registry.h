// Every family gpuscope can export, seen through one view: the catalog rows
// (gpuscope/catalog.h: each row's native family, dcgm-exporter name and alias)
// and the families beyond the catalog (export/builtin_families.h), each
// declared once where it lives. docs/metrics.md (`gpuscope docs metrics`) and
// the doc and lint tests walk this view, never the two sources apart.
//
// Thread safety: immutable after constant initialization.
#pragma once

#include <array>
#include <string_view>

#include "export/builtin_families.h"
#include "gpuscope/catalog.h"

namespace gpuscope::prom {

// Where families are declared: a catalog row or a family beyond the catalog
// (exactly one of the two is set).
struct FamilySource {
  const MetricDef* row = nullptr;
  const BuiltinFamily* builtin = nullptr;

  // The family names this source exports, empty ones left as "": a row's
  // native name, dcgm-exporter name and dcgm-exporter alias; a builtin's name.
  // Rows of one native family share its name.
  constexpr std::array<std::string_view, 3> Names() const {
    if (row != nullptr) return {row->native.name, row->dcgm.name, row->dcgm.alias};
    return {builtin->name, {}, {}};
  }
};

// The catalog rows in catalog order, then the builtin families in
// documentation order; sizes deduced from the two sources.
inline constexpr auto kFamilySources = [] {
  std::array<FamilySource, kMetricCount + kBuiltinFamilies.size()> sources{};
  for (std::size_t i = 0; i < kMetricCount; ++i) sources[i].row = &kCatalog[i];
  for (std::size_t i = 0; i < kBuiltinFamilies.size(); ++i) {
    sources[kMetricCount + i].builtin = kBuiltinFamilies[i];
  }
  return sources;
}();

}  // namespace gpuscope::prom

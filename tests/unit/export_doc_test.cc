#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "export/family_registry.h"
#include "export/metrics_doc.h"
#include "export_test_util.h"
#include "gpuscope/catalog.h"
#include "test_paths.h"

namespace gpuscope::prom {
namespace {

// docs/metrics.md is generated; GPUSCOPE_UPDATE_GOLDEN=1 regenerates it.
TEST(MetricsDoc, DocsFileIsUpToDate) {
  std::string doc = RenderMetricsDoc();
  EXPECT_EQ(doc, testing::Golden("docs/metrics.md", doc))
      << "docs/metrics.md is stale: run `gpuscope docs metrics > docs/metrics.md`";
}

TEST(MetricsDoc, ListsEveryCatalogRow) {
  std::string doc = RenderMetricsDoc();
  for (const MetricDef& def : kCatalog) {
    if (!def.native.name.empty()) {
      EXPECT_NE(doc.find("`" + std::string(def.native.name) + "`"), std::string::npos);
    }
    if (!def.dcgm.name.empty()) {
      EXPECT_NE(doc.find("`" + std::string(def.dcgm.name) + "`"), std::string::npos);
    }
    if (!def.smi.name.empty()) {
      EXPECT_NE(doc.find("`" + std::string(def.smi.name) + "`"), std::string::npos);
    }
  }
  EXPECT_NE(doc.find("`gpuscope_xid_errors_total`"), std::string::npos);
  EXPECT_NE(doc.find("`gpuscope_nvlink_link_errors_total`"), std::string::npos);
}

// Every family of the golden scrapes (the agent's full /metrics on the
// simulator, and the renderer's full GPU output) is in the registry view (a
// catalog row or a family beyond the catalog), so it is documented and
// name-linted. A family built with a name of its own fails here.
TEST(MetricsDoc, EveryScrapedFamilyIsRegistered) {
  std::set<std::string_view> known;
  for (const FamilySource& source : kFamilySources) {
    for (std::string_view name : source.Names()) {
      if (!name.empty()) known.insert(name);
    }
  }
  std::size_t families = 0;
  for (const char* golden :
       {"tests/golden/metrics/training-8xh100.prom", "tests/golden/export_full_gpu.prom"}) {
    std::istringstream text(testing::ReadFile(test_support::SourceDir() + "/" + golden));
    for (std::string line; std::getline(text, line);) {
      if (!line.starts_with("# TYPE ")) continue;
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(known.contains(name)) << golden << ": " << name << " is not registered";
      ++families;
    }
  }
  EXPECT_GT(families, 60u);
  const std::string doc = RenderMetricsDoc();
  for (std::string_view name : known) {
    EXPECT_NE(doc.find("`" + std::string(name) + "`"), std::string::npos) << name;
  }
}

// The view holds each catalog row and each family beyond the catalog once, in
// that order, and no family beyond the catalog reuses a catalog row's name (a
// family declared in two places).
TEST(MetricsDoc, RegistryViewHoldsEverySourceOnce) {
  ASSERT_EQ(kFamilySources.size(), kCatalog.size() + kBuiltinFamilies.size());
  std::set<std::string_view> catalog_names;
  for (std::size_t i = 0; i < kFamilySources.size(); ++i) {
    const FamilySource& source = kFamilySources[i];
    ASSERT_NE(source.row == nullptr, source.builtin == nullptr) << i;
    if (i < kCatalog.size()) {
      EXPECT_EQ(source.row, &kCatalog[i]);
      for (std::string_view name : source.Names()) catalog_names.insert(name);
    } else {
      EXPECT_EQ(source.builtin, kBuiltinFamilies[i - kCatalog.size()]);
      EXPECT_EQ(source.Names()[0], source.builtin->name);
      EXPECT_FALSE(catalog_names.contains(source.builtin->name)) << source.builtin->name;
    }
  }
  EXPECT_TRUE(catalog_names.contains("gpuscope_gpu_utilization_ratio"));
  EXPECT_TRUE(catalog_names.contains("DCGM_FI_DEV_GPU_UTIL"));
  EXPECT_TRUE(catalog_names.contains("DCGM_FI_DEV_CLOCKS_EVENT_REASONS"));  // an alias
}

}  // namespace
}  // namespace gpuscope::prom

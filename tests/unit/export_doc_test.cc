#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "export/builtin_families.h"
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
// simulator, and the renderer's full GPU output) is a catalog row or a
// registry entry, so it is documented and name-linted. A family built with
// a name of its own fails here.
TEST(MetricsDoc, EveryScrapedFamilyIsRegistered) {
  std::set<std::string_view> known;
  for (const MetricDef& def : kCatalog) {
    known.insert(def.native.name);
    known.insert(def.dcgm.name);
  }
  for (const BuiltinFamily* f : kRegistry) known.insert(f->name);
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
  for (const BuiltinFamily* f : kRegistry) {
    EXPECT_NE(doc.find("`" + std::string(f->name) + "`"), std::string::npos) << f->name;
  }
}

}  // namespace
}  // namespace gpuscope::prom

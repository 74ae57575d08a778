#include <gtest/gtest.h>

#include <string>

#include "export/metrics_doc.h"
#include "export_test_util.h"
#include "gpuscope/catalog.h"

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

}  // namespace
}  // namespace gpuscope::prom

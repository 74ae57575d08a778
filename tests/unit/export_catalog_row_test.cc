// A catalog row carries every fact about its metric (STYLE.md point 13): a
// test-only row, never in kCatalog, reaches the simulator (its field id read
// through the same batched call as the agent's), the wire (its native family,
// lean policy applied) and docs/metrics.md's table, with no code of its own.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "collect/catalog_rows.h"
#include "export/metrics_doc.h"
#include "export/render.h"
#include "export_test_util.h"
#include "nvml_test_support.h"

namespace gpuscope::prom {
namespace {

using namespace catalog_rows;  // NOLINT: the row helpers, as in catalog_rows.h

// The row reuses the value slot of a catalog row without a native name.
constexpr Metric kSlot = Metric::kPowerAverage;
constexpr MetricDef kTestRow = {kSlot,
                                "test_nvlink_raw_tx",
                                kInterconnect,
                                kFast,
                                kFieldValue,
                                LinkField(nvml::kFiNvLinkThroughputRawTx, kKibiToUnit),
                                Native("gpuscope_test_nvlink_raw_bytes_total", kCounter),
                                kAlways,
                                kNoDcgm,
                                kNoSmi,
                                "Test-only row: NVLink bytes with protocol overhead, all links."};

// The lean policy is a required column: a row without one does not compile.
template <typename... Columns>
concept RowOf = requires(Columns... c) {
  MetricDef{c...};
};
static_assert(RowOf<Metric, std::string_view, Category, Tier, Source, Read, NativeName, Lean,
                    DcgmName, SmiName, std::string_view>);
static_assert(!RowOf<Metric, std::string_view, Category, Tier, Source, Read, NativeName, DcgmName,
                     SmiName, std::string_view>);
static_assert(!RowOf<Metric, std::string_view, Category, Tier, Source, Read, NativeName>);

// The catalog with kTestRow in its slot's place.
std::vector<MetricDef> CatalogWithTestRow() {
  std::vector<MetricDef> rows(kCatalog.begin(), kCatalog.end());
  for (MetricDef& def : rows) {
    if (def.id == kSlot) def = kTestRow;
  }
  return rows;
}

// What the batched field reader does with a row: one request from its
// FieldRead, the answer converted to the stored unit.
double ReadThroughSimulator(const MetricDef& row) {
  auto lib = nvml::testing::OpenSim("training-8xh100");
  EXPECT_TRUE(lib.ok()) << lib.status().message();
  if (!lib.ok()) return -1;
  auto gpu = (*lib)->DeviceByIndex(0);
  EXPECT_TRUE(gpu.ok()) << gpu.status().message();
  if (!gpu.ok()) return -1;
  const std::array<nvml::FieldRequest, 1> request = {
      {{row.read.field.id, row.read.field.all_links ? nvml::kFieldScopeAllLinks : 0u}}};
  auto values = gpu->FieldValues(request);
  EXPECT_TRUE(values.at(0).ok()) << values.at(0).status().message();
  if (!values.at(0).ok()) return -1;
  return Convert(values[0]->AsDouble(), row.read.field.to_stored);
}

TEST(CatalogRow, TestOnlyRowReachesSimulatorWireAndDocs) {
  const double stored = ReadThroughSimulator(kTestRow);
  ASSERT_GT(stored, 0);  // the simulator's line for field 140 answers

  Snapshot snapshot = testing::FullSnapshot(1);
  snapshot.samples[0].Set(kSlot, stored);
  const std::vector<MetricDef> rows = CatalogWithTestRow();
  RenderOptions options;
  options.metrics = MetricSet::kNative;
  options.catalog = rows;  // the lean profile: the row says kAlways
  const std::string body = *Renderer(options).Render(snapshot).text;
  EXPECT_NE(body.find("# TYPE gpuscope_test_nvlink_raw_bytes_total counter\n"), std::string::npos)
      << body;
  EXPECT_NE(body.find("# HELP gpuscope_test_nvlink_raw_bytes_total Test-only row"),
            std::string::npos);
  EXPECT_NE(body.find("gpuscope_test_nvlink_raw_bytes_total{"), std::string::npos);

  // Without the row, nothing renders it.
  RenderOptions plain;
  plain.metrics = MetricSet::kNative;
  EXPECT_EQ(Renderer(plain).Render(snapshot).text->find("gpuscope_test_nvlink"), std::string::npos);

  const std::string doc = CatalogTableRow(kTestRow);
  EXPECT_EQ(doc,
            "| `gpuscope_test_nvlink_raw_bytes_total` | counter | gpu, uuid | always | - | - | "
            "nvmlDeviceGetFieldValues field 140 | interconnect | Test-only row: NVLink bytes "
            "with protocol overhead, all links. |\n");
}

// The lean column decides, not a list elsewhere: the same row marked
// full-only leaves the lean profile.
TEST(CatalogRow, LeanColumnDecidesTheProfile) {
  std::vector<MetricDef> rows = CatalogWithTestRow();
  for (MetricDef& def : rows) {
    if (def.id == kSlot) def.lean = kFullOnly;
  }
  Snapshot snapshot = testing::FullSnapshot(1);
  snapshot.samples[0].Set(kSlot, 1024);
  RenderOptions options;
  options.metrics = MetricSet::kNative;
  options.catalog = rows;
  EXPECT_EQ(Renderer(options).Render(snapshot).text->find("gpuscope_test_nvlink"),
            std::string::npos);
  options.profile = Profile::kFull;
  EXPECT_NE(Renderer(options).Render(snapshot).text->find("gpuscope_test_nvlink_raw_bytes_total{"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuscope::prom

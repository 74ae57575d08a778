// The catalog rows own every per-metric fact (STYLE.md point 13): no other
// file keeps a table keyed by the metric enum (proxy: no file of src/, sim/
// or include/ besides the catalog names more than 30 catalog metrics), and
// every field id a row reads has its line in the simulator.
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gpuscope/catalog.h"
#include "nvml/field_ids.h"
#include "nvml/library.h"
#include "sim_fixture.h"
#include "test_paths.h"

namespace gpuscope::collect {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every identifier of `text`.
std::set<std::string> Identifiers(const std::string& text) {
  std::set<std::string> out;
  std::string word;
  for (char c : text + ' ') {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      word += c;
    } else if (!word.empty()) {
      out.insert(word);
      word.clear();
    }
  }
  return out;
}

// The metric enum's names, from the X-macro list of gpuscope/catalog.h.
std::set<std::string> MetricNames(const fs::path& catalog_h) {
  const std::string text = ReadText(catalog_h);
  std::set<std::string> names;
  for (std::size_t at = text.find("X(k"); at != std::string::npos; at = text.find("X(k", at + 1)) {
    const std::size_t end = text.find(')', at);
    names.insert(text.substr(at + 2, end - at - 2));
  }
  return names;
}

TEST(CatalogFacts, NoFileBesidesTheCatalogNamesMoreThan30Metrics) {
  const fs::path root = test_support::SourceDir();
  const std::set<std::string> metrics = MetricNames(root / "include/gpuscope/catalog.h");
  ASSERT_GT(metrics.size(), 100u);
  const std::set<fs::path> exempt = {root / "include/gpuscope/catalog.h",
                                     root / "src/collect/catalog_rows.h"};
  std::size_t files = 0;
  for (const char* folder : {"src", "sim", "include"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      const fs::path& path = entry.path();
      if (path.extension() != ".cc" && path.extension() != ".h") continue;
      if (exempt.contains(path)) continue;
      ++files;
      std::size_t named = 0;
      for (const std::string& id : Identifiers(ReadText(path))) named += metrics.contains(id);
      EXPECT_LE(named, 30u) << path.lexically_relative(root).string() << " names " << named
                            << " catalog metrics: move the facts into the catalog rows";
    }
  }
  EXPECT_GT(files, 100u);
}

// A field-value row is one row plus one simulator line: a row whose field id
// no simulated GPU answers (here an H100, and a V100 for retired pages, on a
// driver that defines ids 251..253) lacks its line in sim/exports_fields.cc.
TEST(CatalogFacts, EveryFieldRowHasASimulatorLine) {
  const std::string scenario = test_support::WriteTempFile("field-rows.yaml", R"(
seed: 1
driver_version: "570.133.20"
gpus:
  - model: h100-sxm
  - model: v100-sxm2
)");
  test_support::ScopedEnv env("GPUSCOPE_SIM_SCENARIO", scenario);
  auto lib = nvml::Library::Open(test_support::SimLibraryPath());
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  std::vector<nvml::Device> gpus;
  for (unsigned i = 0; i < 2; ++i) {
    auto gpu = (*lib)->DeviceByIndex(i);
    ASSERT_TRUE(gpu.ok()) << gpu.status().message();
    gpus.push_back(*gpu);
  }
  std::size_t rows = 0;
  for (const MetricDef& def : kCatalog) {
    if (def.read.field.id == 0) continue;
    ++rows;
    const std::array<nvml::FieldRequest, 1> request = {
        {{def.read.field.id, def.read.field.all_links ? nvml::kFieldScopeAllLinks : 0u}}};
    bool answered = false;
    for (const nvml::Device& gpu : gpus) answered |= gpu.FieldValues(request).at(0).ok();
    EXPECT_TRUE(answered) << def.key << ": field " << def.read.field.id
                          << " has no line in sim/exports_fields.cc";
  }
  EXPECT_GT(rows, 30u);
}

}  // namespace
}  // namespace gpuscope::collect

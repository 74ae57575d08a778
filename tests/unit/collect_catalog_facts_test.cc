// The catalog rows own every per-metric fact (STYLE.md point 13): no other
// file keeps a table keyed by the metric enum. Proxy: no file of src/, sim/
// or include/ besides the catalog names more than 30 catalog metrics.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

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

}  // namespace
}  // namespace gpuscope::collect

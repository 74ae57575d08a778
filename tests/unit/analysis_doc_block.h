// Generated blocks of docs/diagnosis.md: the text between `begin` and `end`
// markers (each a whole line) must equal what the code generates; with
// GPUSCOPE_UPDATE_DOCS=1 the test writes it instead.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "test_paths.h"

namespace gpuscope::analysis::test_util {

// Checks (or, with GPUSCOPE_UPDATE_DOCS=1, replaces) the block; `regenerate`
// says how to refresh it when stale.
inline void CheckDocBlock(const std::string& begin_marker, const std::string& end_marker,
                          const std::string& generated, const std::string& regenerate) {
  const std::string path = test_support::SourceDir() + "/docs/diagnosis.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::ostringstream text;
  text << in.rdbuf();
  std::string doc = text.str();
  std::size_t begin = doc.find(begin_marker), end = doc.find(end_marker);
  ASSERT_TRUE(begin != std::string::npos && end != std::string::npos && begin < end)
      << path << " lacks the markers " << begin_marker;
  begin += begin_marker.size();
  if (const char* update = std::getenv("GPUSCOPE_UPDATE_DOCS"); update && *update == '1') {
    doc.replace(begin, end - begin, generated);
    std::ofstream(path) << doc;
    return;
  }
  EXPECT_EQ(doc.substr(begin, end - begin), generated)
      << path << " is stale between " << begin_marker << "; regenerate with GPUSCOPE_UPDATE_DOCS=1 "
      << regenerate;
}

}  // namespace gpuscope::analysis::test_util

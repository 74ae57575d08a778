// This checkout's source and build folders, for tests that read its files
// (goldens, scenarios, docs) or load the simulator. Only test_paths.cc is
// compiled with the paths, so in a clone elsewhere (CI) the compiler cache
// still hits for every other test file.
#pragma once

#include <string>

namespace gpuscope::test_support {

const std::string& SourceDir();
const std::string& BinaryDir();

}  // namespace gpuscope::test_support

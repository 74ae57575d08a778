#include "test_paths.h"

namespace gpuscope::test_support {

const std::string& SourceDir() {
  static const std::string dir = GPUSCOPE_SOURCE_DIR;
  return dir;
}

const std::string& BinaryDir() {
  static const std::string dir = GPUSCOPE_BINARY_DIR;
  return dir;
}

}  // namespace gpuscope::test_support

#pragma once
// What was built: the release's semantic version (CMakeLists.txt's project()
// version, recorded in CHANGELOG.md) and the git commit it was built from.
// Both are constants of a source file generated at build time
// (cmake/version.cmake); thread-safe.

#include <string_view>

namespace gpuscope {

// "MAJOR.MINOR.PATCH", e.g. "0.2.0".
std::string_view Version();

// The commit's abbreviated hash, "-dirty" appended when the tree had
// uncommitted changes; from `git archive` the hash git wrote into
// cmake/commit.txt; "unknown" when neither is there (a docker build context
// has no .git: pass --build-arg GPUSCOPE_GIT_COMMIT).
std::string_view GitCommit();

}  // namespace gpuscope

// The process tree of one command that `gpuscope run` started: which GPU
// processes are the command's (its children, grandchildren, and the orphans
// they left, which reparent to gpuscope as their subreaper) and whose the
// others are (their user, for the report's "shared with" note).
//
// A process is a member when its chain of parents, read from
// <proc_root>/<pid>/stat, reaches the reaper (gpuscope's own pid: the
// command is its child, and PR_SET_CHILD_SUBREAPER brings the orphans back to
// it). A member stays one once seen, so a member whose parent exits between
// two looks keeps counting. Parsers are pure functions of the file text.
//
// Thread safety: a ProcessTree is used from one thread (the sampler's
// decorator); the parsers are pure.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace gpuscope::attribution {

// The parent pid from a /proc/<pid>/stat line ("4242 (python3) S 4241 ...");
// nullopt when the text is not one. The command name may hold spaces and ')'.
std::optional<unsigned> ParseParentPid(std::string_view stat);
// The real uid from /proc/<pid>/status text (its "Uid:" line).
std::optional<unsigned> ParseRealUid(std::string_view status);

class ProcessTree {
 public:
  explicit ProcessTree(unsigned reaper, std::string proc_root = "/proc");

  // Whether pid is in the tree below the reaper (the reaper itself is not).
  bool Contains(unsigned pid);
  // "alice" (or "uid 1001" when the name is unknown); "" when pid is gone.
  std::string UserOf(unsigned pid) const;

 private:
  std::optional<unsigned> ParentOf(unsigned pid) const;

  unsigned reaper_;
  std::string proc_root_;
  std::set<unsigned> members_;
};

}  // namespace gpuscope::attribution

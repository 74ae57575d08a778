// The process tree of one command that `gpuscope run` started: which GPU
// processes are the command's (its children, grandchildren, and the orphans
// they left, which reparent to gpuscope as their subreaper) and whose the
// others are (their user, for the report's "shared with" note).
//
// A process is a member when its chain of parents, read from
// <proc_root>/<pid>/stat, reaches the reaper (gpuscope's own pid: the
// command is its child, and PR_SET_CHILD_SUBREAPER brings the orphans back to
// it). A member stays one once seen, so a member whose parent exits between
// two looks keeps counting; a member is known by pid and start time, so a
// later process given the same pid is judged afresh. Parsers are pure
// functions of the file text.
//
// Thread safety: a ProcessTree is used from one thread (the sampler's
// decorator); the parsers are pure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::attribution {

// What the tree reads of a /proc/<pid>/stat line ("4242 (python3) S 4241 ..."):
// the parent pid (field 4) and the start time (field 22, clock ticks since
// boot), which tells a process from a later one given the same pid.
struct ProcStat {
  unsigned parent = 0;
  unsigned long long start = 0;
};
// nullopt when the text is not a stat line. The command name may hold spaces and ')'.
std::optional<ProcStat> ParseStat(std::string_view stat);
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
  std::optional<ProcStat> StatOf(unsigned pid) const;
  bool Known(unsigned pid, const ProcStat& stat) const;

  unsigned reaper_;
  std::string proc_root_;
  std::map<unsigned, unsigned long long> members_;  // pid -> start time
};

}  // namespace gpuscope::attribution

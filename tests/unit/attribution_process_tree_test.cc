// The command tree of `gpuscope run` (attribution/process_tree.h) over a fake /proc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "attribution/process_tree.h"

namespace gpuscope::attribution {
namespace {

namespace fs = std::filesystem;

// A /proc/<pid>/stat line: fields 1-22 (start time last) and a few more.
std::string StatLine(unsigned pid, const std::string& comm, unsigned ppid,
                     unsigned long long start) {
  return std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid) + " " +
         std::to_string(pid) + " 1 0 -1 4194304 100 0 0 0 5 1 0 0 20 0 1 0 " +
         std::to_string(start) + " 123456 789 18446744073709551615";
}

class FakeProc {
 public:
  FakeProc() : root_(fs::temp_directory_path() / ("proc-tree-" + std::to_string(getpid()))) {
    fs::remove_all(root_);
  }
  ~FakeProc() { fs::remove_all(root_); }
  // A process `pid` named `comm` whose parent is `ppid`, of user `uid`.
  void Add(unsigned pid, unsigned ppid, const std::string& comm = "python3", unsigned uid = 0,
           unsigned long long start = 1000) {
    fs::create_directories(root_ / std::to_string(pid));
    std::ofstream(root_ / std::to_string(pid) / "stat") << StatLine(pid, comm, ppid, start) << "\n";
    std::ofstream(root_ / std::to_string(pid) / "status")
        << "Name:\t" << comm << "\nUid:\t" << uid << "\t" << uid << "\t" << uid << "\t" << uid
        << "\n";
  }
  void Remove(unsigned pid) { fs::remove_all(root_ / std::to_string(pid)); }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

TEST(ProcessTree, ParsesStatAndStatus) {
  std::optional<ProcStat> stat = ParseStat(StatLine(4242, "python3", 4241, 98765));
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->parent, 4241u);
  EXPECT_EQ(stat->start, 98765u);
  // A command name with spaces and ')' in it.
  stat = ParseStat(StatLine(77, "my (odd) name) x", 12, 5));
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->parent, 12u);
  EXPECT_EQ(stat->start, 5u);
  EXPECT_EQ(ParseStat("4242 (python3) S 4241 4242 1"), std::nullopt);  // cut short
  EXPECT_EQ(ParseStat("garbage"), std::nullopt);
  EXPECT_EQ(ParseStat(""), std::nullopt);
  EXPECT_EQ(ParseRealUid("Name:\tx\nUid:\t1001\t1001\t1001\t1001\nGid:\t5\n"), 1001u);
  EXPECT_EQ(ParseRealUid("Name:\tx\n"), std::nullopt);
}

TEST(ProcessTree, ChildrenGrandchildrenAndOrphansAreMembers) {
  FakeProc proc;
  proc.Add(100, 1, "bash");  // the shell that started gpuscope
  proc.Add(200, 100, "gpuscope");
  proc.Add(300, 200);                // CMD
  proc.Add(400, 300);                // its child
  proc.Add(500, 400);                // a grandchild
  proc.Add(600, 200);                // an orphan reparented to gpuscope (the subreaper)
  proc.Add(700, 1, "sleep", 65534);  // another user's
  proc.Add(800, 100);                // a sibling of gpuscope
  ProcessTree tree(200, proc.root());
  for (unsigned pid : {300u, 400u, 500u, 600u}) EXPECT_TRUE(tree.Contains(pid)) << pid;
  for (unsigned pid : {200u, 700u, 800u, 100u, 1u, 999u}) EXPECT_FALSE(tree.Contains(pid)) << pid;
  // A member whose parent exits (its /proc entry gone) stays one.
  proc.Remove(400);
  EXPECT_TRUE(tree.Contains(500));
  EXPECT_EQ(tree.UserOf(300), "root");
  EXPECT_EQ(tree.UserOf(999), "");
}

TEST(ProcessTree, AReusedPidIsJudgedAfresh) {
  FakeProc proc;
  proc.Add(200, 1, "gpuscope");
  proc.Add(300, 200, "python3", 0, 1000);
  ProcessTree tree(200, proc.root());
  EXPECT_TRUE(tree.Contains(300));
  // 300 exits; the kernel gives its pid to another user's process later.
  proc.Remove(300);
  proc.Add(300, 1, "other", 1001, 5000);
  EXPECT_FALSE(tree.Contains(300));
}

TEST(ProcessTree, ParentLoopEnds) {
  FakeProc proc;
  proc.Add(10, 11);
  proc.Add(11, 10);
  ProcessTree tree(200, proc.root());
  EXPECT_FALSE(tree.Contains(10));
}

}  // namespace
}  // namespace gpuscope::attribution

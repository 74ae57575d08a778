// The command tree of `gpuscope run` (attribution/process_tree.h) over a fake /proc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "attribution/process_tree.h"

namespace gpuscope::attribution {
namespace {

namespace fs = std::filesystem;

class FakeProc {
 public:
  FakeProc() : root_(fs::temp_directory_path() / ("proc-tree-" + std::to_string(getpid()))) {
    fs::remove_all(root_);
  }
  ~FakeProc() { fs::remove_all(root_); }
  // A process `pid` named `comm` whose parent is `ppid`, of user `uid`.
  void Add(unsigned pid, unsigned ppid, const std::string& comm = "python3", unsigned uid = 0) {
    fs::create_directories(root_ / std::to_string(pid));
    std::ofstream(root_ / std::to_string(pid) / "stat")
        << pid << " (" << comm << ") S " << ppid << " " << pid << " 1 0 -1\n";
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
  EXPECT_EQ(ParseParentPid("4242 (python3) S 4241 4242 1"), 4241u);
  // A command name with spaces and ')' in it.
  EXPECT_EQ(ParseParentPid("77 (my (odd) name) R 12 77 1"), 12u);
  EXPECT_EQ(ParseParentPid("garbage"), std::nullopt);
  EXPECT_EQ(ParseParentPid(""), std::nullopt);
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

TEST(ProcessTree, ParentLoopEnds) {
  FakeProc proc;
  proc.Add(10, 11);
  proc.Add(11, 10);
  ProcessTree tree(200, proc.root());
  EXPECT_FALSE(tree.Contains(10));
}

}  // namespace
}  // namespace gpuscope::attribution

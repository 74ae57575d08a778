// The notes of `gpuscope run` (jobs/run_notes.h).
#include <gtest/gtest.h>

#include "jobs/run_notes.h"

namespace gpuscope::jobs {
namespace {

std::vector<GpuInfo> Gpus(unsigned n) {
  std::vector<GpuInfo> out;
  for (unsigned i = 0; i < n; ++i) {
    GpuInfo g;
    g.index = i;
    g.uuid = "GPU-aaaa" + std::to_string(i);
    out.push_back(g);
  }
  return out;
}

Report UsedGpus(std::initializer_list<unsigned> used) {
  Report r;
  for (unsigned i : used) {
    GpuLine g;
    g.gpu = i;
    g.uuid = "GPU-aaaa" + std::to_string(i);
    r.gpus.push_back(g);
  }
  return r;
}

const Note* Find(const std::vector<Note>& notes, const std::string& kind) {
  for (const Note& n : notes) {
    if (n.kind == kind) return &n;
  }
  return nullptr;
}

TEST(RunNotes, VisibleGpusByIndexUuidAndPrefix) {
  const std::vector<GpuInfo> gpus = Gpus(3);
  auto names = [&](const std::string& value) {
    std::vector<unsigned> out;
    for (const GpuInfo& g : VisibleGpus(value, gpus)) out.push_back(g.index);
    return out;
  };
  EXPECT_EQ(names("0,2"), (std::vector<unsigned>{0, 2}));
  EXPECT_EQ(names("GPU-aaaa1, 0"), (std::vector<unsigned>{1, 0}));
  EXPECT_EQ(names("GPU-aaaa"), std::vector<unsigned>{});  // ambiguous prefix: CUDA stops
  EXPECT_EQ(names("1,7,2"), std::vector<unsigned>{1});    // stops at the first invalid one
  EXPECT_EQ(names(""), std::vector<unsigned>{});
}

TEST(RunNotes, VisibleButUntouched) {
  RunFacts f;
  f.gpus = Gpus(4);
  f.cuda_visible_devices = "0,1,2";
  std::vector<Note> notes = RunNotes(UsedGpus({0}), f, {});
  const Note* n = Find(notes, "visible_untouched");
  ASSERT_NE(n, nullptr);
  EXPECT_NE(n->text.find("3 GPUs, and it never touched 2 (GPU 1, GPU 2)"), std::string::npos)
      << n->text;
  f.cuda_visible_devices.reset();
  EXPECT_EQ(Find(RunNotes(UsedGpus({0}), f, {}), "visible_untouched"), nullptr);
}

TEST(RunNotes, FirstKernelLateFromTheThreshold) {
  RunFacts f;
  f.wall_seconds = 100;
  f.first_kernel_seconds = 9;
  EXPECT_EQ(Find(RunNotes(UsedGpus({0}), f, {}), "first_kernel_late"), nullptr);
  f.first_kernel_seconds = 40;
  const std::vector<Note> notes = RunNotes(UsedGpus({0}), f, {});  // n points into it
  const Note* n = Find(notes, "first_kernel_late");
  ASSERT_NE(n, nullptr);
  EXPECT_NE(n->text.find("only 40 s after the start (40% of the wall time)"), std::string::npos)
      << n->text;
}

TEST(RunNotes, SharedNamesTheOthers) {
  RunFacts f;
  f.sharing = {{0, 4242, "python", "bob"}, {0, 77, "x", ""}};
  const std::vector<Note> notes = RunNotes(UsedGpus({0}), f, {});  // n points into it
  const Note* n = Find(notes, "shared");
  ASSERT_NE(n, nullptr);
  EXPECT_NE(n->text.find("GPU 0: pid 4242 (python, user bob); GPU 0: pid 77 (x)"),
            std::string::npos)
      << n->text;
  EXPECT_TRUE(RunNotes(UsedGpus({0}), RunFacts{}, {}).empty());
}

TEST(RunNotes, NoGpuIsOneLine) {
  EXPECT_EQ(NoGpuLine("true", 0.04), "gpuscope run: true used no GPU (0.0 s wall time).\n");
}

}  // namespace
}  // namespace gpuscope::jobs

// The `gpuscope top` frame renderer and argument parser on hand-built snapshots.
#include <gtest/gtest.h>

#include "cli/top.h"
#include "cli/top_frame.h"
#include "cli/top_terminal.h"
#include "cli_test_snapshot.h"

namespace gpuscope::cli {
namespace {

FrameOptions Plain(int width = 100) {
  FrameOptions options;
  options.width = width;
  options.color = false;
  return options;
}

TEST(TopFrameTest, BarFillsProportionallyAndClamps) {
  EXPECT_EQ(Bar(50, 12), "[#####.....]");
  EXPECT_EQ(Bar(0, 7), "[.....]");
  EXPECT_EQ(Bar(100, 7), "[#####]");
  EXPECT_EQ(Bar(250, 7), "[#####]");
  EXPECT_EQ(Bar(-5, 7), "[.....]");
}

TEST(TopFrameTest, ThrottleReasonsByName) {
  EXPECT_EQ(ThrottleNames(0), "none");
  EXPECT_EQ(ThrottleNames(0x4), "SW power cap");
  EXPECT_EQ(ThrottleNames(0x40 | 0x8), "HW slowdown, HW thermal");
}

TEST(TopFrameTest, RendersEveryGpuWithValuesAndBars) {
  Snapshot snap = testing::TwoGpuSnapshot();
  snap.samples[0].Set(Metric::kSlowdownTemp, 87);
  snap.samples[0].Set(Metric::kMaxSmClock, 1980);
  snap.samples[0].Set(Metric::kPcieRxBytesRate, 2.5e9);
  snap.samples[0].Set(Metric::kPcieTxBytesRate, 1500);
  const std::string frame = RenderFrame(snap, Plain());
  EXPECT_NE(frame.find("host node-a"), std::string::npos) << frame;
  EXPECT_NE(frame.find("driver 570.133.20"), std::string::npos);
  EXPECT_NE(frame.find("CUDA 12.8"), std::string::npos);
  EXPECT_NE(frame.find("GPU 0  NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_NE(frame.find("GPU 1  NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_NE(frame.find("1234 / 81559 MiB"), std::string::npos);
  EXPECT_NE(frame.find("power 123 / 700 W"), std::string::npos);
  EXPECT_NE(frame.find("power - / 700 W"), std::string::npos);  // GPU 1 has no power reading
  EXPECT_NE(frame.find("temp 56 C (slowdown 87 C)"), std::string::npos);
  EXPECT_NE(frame.find("SM clock 1980 / 1980 MHz"), std::string::npos);
  EXPECT_NE(frame.find("throttle SW power cap"), std::string::npos);
  EXPECT_NE(frame.find("PCIe rx 2.5 GB/s  tx 1.5 KB/s"), std::string::npos);
  // Bar width at 100 columns is 42: 40 cells, 45% -> 18 filled.
  EXPECT_NE(frame.find("[" + std::string(18, '#') + std::string(22, '.') + "]  45%"),
            std::string::npos);
  EXPECT_NE(frame.find("[" + std::string(40, '#') + "] 100%"), std::string::npos);
  EXPECT_NE(frame.find("   4242   1024MiB  python3"), std::string::npos);
  EXPECT_NE(frame.find("   4343       N/A  torchrun"), std::string::npos);
  EXPECT_EQ(frame.find("\x1b["), std::string::npos);  // no colour asked
}

TEST(TopFrameTest, GpmActivityOrNotApplicable) {
  Snapshot snap = testing::TwoGpuSnapshot();
  snap.gpus[0].gpm_supported = true;
  snap.samples[0].Set(Metric::kSmActive, 62);
  snap.samples[0].Set(Metric::kTensorActive, 31);
  snap.gpus[1].gpm_supported = false;
  const std::string frame = RenderFrame(snap, Plain());
  EXPECT_NE(frame.find("SM active 62%   tensor 31%"), std::string::npos) << frame;
  EXPECT_NE(frame.find("SM active n/a (no GPM)   tensor n/a (no GPM)"), std::string::npos);
}

TEST(TopFrameTest, FlagsBusyButIdleSms) {
  Snapshot snap = testing::TwoGpuSnapshot();
  snap.gpus[1].gpm_supported = true;
  snap.samples[1].Set(Metric::kSmActive, 12);  // util 100%
  EXPECT_NE(RenderFrame(snap, Plain()).find("busy, but most SMs idle"), std::string::npos);
}

TEST(TopFrameTest, LostAndStaleAreMarkedInRed) {
  Snapshot snap = testing::TwoGpuSnapshot();
  snap.samples[0].state = GpuState::kLost;
  snap.samples[0].state_reason = "GPU is lost";
  snap.samples[1].state = GpuState::kStale;
  snap.samples[1].state_reason = "read hangs";
  FrameOptions options = Plain();
  const std::string plain = RenderFrame(snap, options);
  EXPECT_NE(plain.find("LOST: GPU is lost"), std::string::npos) << plain;
  EXPECT_NE(plain.find("STALE: read hangs"), std::string::npos);
  // A lost GPU shows no stale values: only GPU 1's memory line remains.
  EXPECT_EQ(plain.find("memory"), plain.rfind("memory"));
  options.color = true;
  const std::string colored = RenderFrame(snap, options);
  EXPECT_NE(colored.find("\x1b[31mLOST: GPU is lost\x1b[0m"), std::string::npos);
  EXPECT_NE(colored.find("\x1b[31mSTALE: read hangs\x1b[0m"), std::string::npos);
}

TEST(TopFrameTest, SimulatedHeaderAndVerdicts) {
  Snapshot snap = testing::TwoGpuSnapshot();
  FrameOptions options = Plain();
  options.simulated = true;
  options.scenario = "mixed-node";
  options.verdicts = {"power capped at 700 W"};
  const std::string frame = RenderFrame(snap, options);
  EXPECT_NE(frame.find("simulated node (scenario mixed-node)"), std::string::npos);
  EXPECT_NE(frame.find("  verdict power capped at 700 W\n"), std::string::npos);
  EXPECT_EQ(frame.find("verdict", frame.find("GPU 1")), std::string::npos);
}

TEST(TopFrameTest, NarrowTerminalClipsLongLines) {
  Snapshot snap = testing::TwoGpuSnapshot();
  snap.samples[0].processes[0].name = std::string(200, 'x');
  const std::string frame = RenderFrame(snap, Plain(60));
  EXPECT_EQ(frame.find(std::string(61, 'x')), std::string::npos);
  // 60 columns leave a 20-wide bar: 18 cells, 45% -> 8 filled.
  EXPECT_NE(frame.find("[########..........]  45%"), std::string::npos) << frame;
}

// Clipping counts bytes but never cuts a UTF-8 sequence in half.
TEST(TopFrameTest, ClippingKeepsMultiByteNamesWhole) {
  Snapshot snap = testing::TwoGpuSnapshot();
  snap.samples[0].processes[0].name = std::string(3, 'x');
  for (int i = 0; i < 40; ++i) snap.samples[0].processes[0].name += "\xC3\xA9";  // e-acute
  for (int width = 40; width <= 70; ++width) {
    const std::string frame = RenderFrame(snap, Plain(width));
    const std::size_t start = frame.find("xxx");
    ASSERT_NE(start, std::string::npos) << width;
    const std::string line = frame.substr(start, frame.find('\n', start) - start);
    EXPECT_EQ((line.size() - 3) % 2, 0u) << "width " << width << ": " << line;
    EXPECT_LE(frame.find("xxx") - frame.rfind('\n', start) - 1 + line.size(),
              static_cast<std::size_t>(width));
  }
}

TEST(TopFrameTest, NoNvml) {
  Snapshot snap;
  snap.nvml_error = "Driver Not Loaded";
  EXPECT_NE(RenderFrame(snap, Plain()).find("NVML unavailable: Driver Not Loaded"),
            std::string::npos);
}

// Eight GPUs like TwoGpuSnapshot's, a long process list on GPU 0.
Snapshot EightGpus() {
  Snapshot two = testing::TwoGpuSnapshot();
  Snapshot snap = two;
  snap.gpus.clear();
  snap.samples.clear();
  for (unsigned i = 0; i < 8; ++i) {
    GpuInfo gpu = two.gpus[i % 2];
    gpu.index = i;
    snap.gpus.push_back(gpu);
    snap.samples.push_back(two.samples[i % 2]);
  }
  ProcessInfo p = snap.samples[0].processes.at(0);
  for (unsigned n = 0; n < 30; ++n) {
    p.pid = 5000 + n;
    snap.samples[0].processes.push_back(p);
  }
  return snap;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    out.push_back(text.substr(start, end - start));
  }
  out.push_back(text.substr(start));
  return out;
}

// The live screen fits 80x24 with 8 GPUs: header first, a row each, the
// selected GPU's details, processes as far as they fit, nothing wider.
TEST(TopScreenTest, EightGpusFit80x24) {
  FrameOptions options = Plain(80);
  options.height = 24;
  options.selected = 0;
  options.subtitle = "every 1000 ms   q quit   j/k or arrows select a GPU";
  const std::string screen = RenderFrame(EightGpus(), options);
  const std::vector<std::string> lines = Lines(screen);
  ASSERT_LE(lines.size(), 24u) << screen;
  EXPECT_EQ(lines[0].rfind("gpuscope top", 0), 0u);
  for (const std::string& line : lines) EXPECT_LE(line.size(), 80u) << line;
  int rows = 0;
  for (const std::string& line : lines) rows += line.find("H100 80GB HBM3 ") == 5 ? 1 : 0;
  EXPECT_EQ(rows, 8) << screen;
  EXPECT_NE(screen.find(">  0 H100 80GB HBM3"), std::string::npos) << screen;
  EXPECT_NE(screen.find("\nGPU 0  NVIDIA H100 80GB HBM3"), std::string::npos) << screen;
  EXPECT_NE(lines.back().find("more lines"), std::string::npos) << screen;
}

TEST(TopScreenTest, ClipVisibleSkipsEscapes) {
  EXPECT_EQ(ClipVisible("abcdef", 3), "abc");
  EXPECT_EQ(ClipVisible("\x1b[31mabcdef\x1b[0m", 3), "\x1b[31mabc\x1b[0m");
  EXPECT_EQ(ClipVisible("\x1b[1mab\x1b[0m", 5), "\x1b[1mab\x1b[0m");
  EXPECT_EQ(ClipVisible("h\xc3\xa9llo", 2), "h\xc3\xa9");
}

TEST(TopKeysTest, QuitAndMoveKeys) {
  EXPECT_TRUE(ParseKeys("q").quit);
  EXPECT_TRUE(ParseKeys("Q").quit);
  EXPECT_TRUE(ParseKeys("\x1b").quit);
  EXPECT_FALSE(ParseKeys("\x1b[A").quit);
  EXPECT_EQ(ParseKeys("\x1b[A").move, -1);
  EXPECT_EQ(ParseKeys("\x1bOB").move, 1);
  EXPECT_EQ(ParseKeys("jj\x1b[Bk").move, 2);
  EXPECT_FALSE(ParseKeys("x ").any());
}

TEST(TopArgsTest, ParsesOptions) {
  Result<TopArgs> args = ParseTopArgs({"--interval", "300ms", "-i", "0,1", "--once", "--no-color"});
  ASSERT_TRUE(args.ok()) << args.status().message();
  EXPECT_DOUBLE_EQ(args->interval_seconds, 0.3);
  EXPECT_EQ(args->ids, "0,1");
  EXPECT_TRUE(args->once);
  EXPECT_FALSE(args->color);
  Result<TopArgs> defaults = ParseTopArgs({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_DOUBLE_EQ(defaults->interval_seconds, 1);
  EXPECT_TRUE(defaults->color);
  EXPECT_DOUBLE_EQ(ParseTopArgs({"--interval=2s"})->interval_seconds, 2);
}

TEST(TopArgsTest, RejectsBadInput) {
  EXPECT_FALSE(ParseTopArgs({"--interval", "50ms"}).ok());
  EXPECT_FALSE(ParseTopArgs({"--interval", "fast"}).ok());
  EXPECT_FALSE(ParseTopArgs({"--interval"}).ok());
  EXPECT_FALSE(ParseTopArgs({"--bogus"}).ok());
  EXPECT_FALSE(ParseInterval("xms").ok());
  for (const char* bad : {"infms", "nanms", "1e400ms", "-5ms", "inf", "nan", "1e13"}) {
    EXPECT_FALSE(ParseTopArgs({"--interval", bad}).ok()) << bad;
  }
}

}  // namespace
}  // namespace gpuscope::cli

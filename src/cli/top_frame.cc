#include "cli/top_frame.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>

#include "cli/query_format.h"
#include "gpuscope/attribution.h"

namespace gpuscope::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Readable names in kClockReasonTable order.
constexpr std::array<const char*, 9> kReasonNames = {
    "idle",       "app clocks", "SW power cap",   "HW slowdown",  "sync boost",
    "SW thermal", "HW thermal", "HW power brake", "display clock"};
static_assert(kReasonNames.size() == kClockReasonTable.size());

constexpr const char* kRed = "31";
constexpr const char* kGreen = "32";
constexpr const char* kYellow = "33";
constexpr const char* kBold = "1";

std::string Paint(const std::string& text, const char* code, bool color) {
  if (!color) return text;
  return std::string("\x1b[") + code + "m" + text + "\x1b[0m";
}

std::string Fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

std::string Pad(std::string s, std::size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s;
}

// At most `width` bytes (no limit when width <= 0), never splitting a UTF-8
// sequence: a process or GPU name may be non-ASCII.
std::string Clip(std::string s, int width) {
  if (width <= 0 || s.size() <= static_cast<std::size_t>(width)) return s;
  std::size_t end = static_cast<std::size_t>(width);
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  s.resize(end);
  return s;
}

// "62%", "-" when absent, "n/a (no GPM)" when the GPU has no GPM at all.
std::string Activity(const GpuInfo& gpu, const GpuSample& s, Metric m) {
  if (std::optional<double> v = s.Find(m)) return Fmt("%.0f%%", *v);
  return gpu.gpm_supported ? "-" : "n/a (no GPM)";
}

std::string Rate(double bytes_per_s) {
  const char* units[] = {"B/s", "KB/s", "MB/s", "GB/s"};
  int u = 0;
  while (bytes_per_s >= 1000 && u < 3) {
    bytes_per_s /= 1000;
    ++u;
  }
  return Fmt(u == 0 ? "%.0f " : "%.1f ", bytes_per_s) + units[u];
}

std::string Pair(const GpuSample& s, Metric used, Metric limit, const char* unit) {
  std::optional<double> a = s.Find(used), b = s.Find(limit);
  return (a ? Fmt("%.0f", *a) : "-") + " / " + (b ? Fmt("%.0f", *b) : "-") + " " + unit;
}

std::string Header(const Snapshot& snap, const FrameOptions& o) {
  const SystemInfo& sys = snap.system;
  std::string line = "gpuscope top   host " + (sys.hostname.empty() ? "?" : sys.hostname) +
                     "   driver " + (sys.driver_version.empty() ? "?" : sys.driver_version) +
                     "   CUDA " + (sys.cuda_version.empty() ? "?" : sys.cuda_version);
  if (snap.timestamp > 0) {
    std::time_t t = static_cast<std::time_t>(snap.timestamp);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[16];
    std::strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
    line += std::string("   ") + buf;
  }
  std::string out = Paint(Clip(line, o.width), kBold, o.color) + "\n";
  if (o.simulated) {
    out += "simulated node (scenario " + (o.scenario.empty() ? "default" : o.scenario) + ")\n";
  }
  if (!o.subtitle.empty()) out += Clip(o.subtitle, o.width) + "\n";
  if (!snap.nvml_up) {
    out += Paint("NVML unavailable: " + snap.nvml_error, kRed, o.color) + "\n";
  }
  return out;
}

std::string UtilLines(const GpuInfo& gpu, const GpuSample& s, int bar, bool color) {
  std::optional<double> util = s.Find(Metric::kGpuUtil);
  // No bar without a value: an empty bar would read as 0%.
  std::string out = "  util   " +
                    (util ? Bar(*util, bar) + " " + Fmt("%3.0f%%", *util)
                          : Pad("n/a", static_cast<std::size_t>(bar) + 5)) +
                    "   SM active " + Activity(gpu, s, Metric::kSmActive) + "   tensor " +
                    Activity(gpu, s, Metric::kTensorActive);
  if (s.Has(Metric::kDramActive)) out += "   DRAM " + Activity(gpu, s, Metric::kDramActive);
  std::optional<double> sm = s.Find(Metric::kSmActive);
  // Utilization counts time with any kernel running; SM active says how much
  // of the chip that kernel keeps busy.
  if (util && sm && *util >= 80 && *sm < 50) {
    out += "  " + Paint("(busy, but most SMs idle)", kYellow, color);
  }
  out += "\n";
  std::optional<double> used = s.Find(Metric::kMemoryUsed), total = s.Find(Metric::kMemoryTotal);
  const double percent = used && total && *total > 0 ? 100 * *used / *total : 0;
  out += "  memory " + Bar(percent, bar) + " " + Fmt("%3.0f%%", percent) + "   " +
         (used ? Fmt("%.0f", std::floor(*used / kMiB)) : "-") + " / " +
         (total ? Fmt("%.0f", std::floor(*total / kMiB)) : "-") + " MiB\n";
  return out;
}

std::string PhysicsLines(const GpuSample& s, bool color) {
  std::string temp = s.Has(Metric::kGpuTemp) ? Fmt("%.0f C", s.Get(Metric::kGpuTemp)) : "-";
  if (s.Has(Metric::kSlowdownTemp)) temp += Fmt(" (slowdown %.0f C)", s.Get(Metric::kSlowdownTemp));
  std::string out = "  power " + Pair(s, Metric::kPowerUsage, Metric::kPowerLimit, "W") +
                    "   temp " + temp + "   SM clock " +
                    Pair(s, Metric::kSmClock, Metric::kMaxSmClock, "MHz") + "\n";
  std::string throttle = "-";
  if (std::optional<double> bits = s.Find(Metric::kClockReasons)) {
    const uint64_t mask = static_cast<uint64_t>(*bits);
    throttle = ThrottleNames(mask);
    if ((mask & ~uint64_t{0x1}) != 0) throttle = Paint(throttle, kYellow, color);
  }
  std::string pcie = "-";
  std::optional<double> rx = s.Find(Metric::kPcieRxBytesRate),
                        tx = s.Find(Metric::kPcieTxBytesRate);
  if (rx || tx) pcie = "rx " + (rx ? Rate(*rx) : "-") + "  tx " + (tx ? Rate(*tx) : "-");
  return out + "  throttle " + throttle + "   PCIe " + pcie + "\n";
}

std::string GpuBlock(const Snapshot& snap, std::size_t i, const FrameOptions& o) {
  const GpuInfo& gpu = snap.gpus[i];
  const GpuSample& s = snap.samples[i];
  const int bar = std::clamp(o.width - 40, 10, 42);
  std::string title = Clip("GPU " + std::to_string(gpu.index) + "  " + gpu.name, o.width - 24);
  if (gpu.is_mig()) {
    title = "  MIG " + gpu.mig_profile + " (GPU " + std::to_string(gpu.index) + ", GI " +
            std::to_string(*gpu.gpu_instance_id) + ")";
  }
  std::string out = Paint(Pad(title, 40), kBold, o.color) + "  ";
  if (s.state == GpuState::kLost) {
    return out + Paint("LOST: " + s.state_reason, kRed, o.color) + "\n";
  }
  if (s.state == GpuState::kStale) {
    out += Paint("STALE: " + s.state_reason, kRed, o.color);
  } else if (s.state == GpuState::kError) {
    out += Paint("ERROR: " + s.state_reason, kRed, o.color);
  } else {
    out += Paint("OK", kGreen, o.color);
  }
  out += '\n';
  out += UtilLines(gpu, s, bar, o.color);
  if (snap.attribution) {
    for (const Holder& h : snap.attribution->Of(gpu)) {
      out += Clip("  serves " + h.Describe(), o.width) + "\n";
    }
  }
  if (gpu.is_mig()) return out;
  out += PhysicsLines(s, o.color);
  if (i < o.verdicts.size() && !o.verdicts[i].empty()) {
    out += Clip("  verdict " + o.verdicts[i], o.width) + "\n";
  }
  return out;
}

std::string Processes(const Snapshot& snap, int width) {
  std::string out = "Processes:\n  GPU      PID    Memory  Name\n";
  bool any = false;
  for (std::size_t i = 0; i < snap.gpus.size() && i < snap.samples.size(); ++i) {
    if (snap.gpus[i].is_mig()) continue;  // listed with the parent
    for (const ProcessInfo* p : ProcessesOnGpu(snap, i)) {
      any = true;
      std::string memory =
          p->used_memory_bytes ? Fmt("%.0fMiB", std::floor(*p->used_memory_bytes / kMiB)) : "N/A";
      char buf[64];
      std::snprintf(buf, sizeof(buf), "  %3u  %7u  %8s  ", snap.gpus[i].index, p->pid,
                    memory.c_str());
      out += Clip(buf + (p->name.empty() ? std::string("N/A") : p->name) + ProcessServes(snap, *p),
                  width) +
             "\n";
    }
  }
  return any ? out : out + "  No running processes found\n";
}

}  // namespace

std::string Bar(double percent, int width) {
  const int cells = std::max(width - 2, 1);
  const double clamped = std::clamp(std::isfinite(percent) ? percent : 0.0, 0.0, 100.0);
  const int filled = static_cast<int>(std::lround(clamped / 100.0 * cells));
  std::string out = "[";
  out.append(filled, '#').append(cells - filled, '.') += ']';
  return out;
}

std::string ThrottleNames(uint64_t bits) {
  std::string out;
  for (std::size_t r = 0; r < kClockReasonTable.size(); ++r) {
    if ((bits & kClockReasonTable[r].bit) == 0) continue;
    out += (out.empty() ? "" : ", ") + std::string(kReasonNames[r]);
  }
  return out.empty() ? "none" : out;
}

std::string RenderFrame(const Snapshot& snapshot, const FrameOptions& options) {
  std::string out = Header(snapshot, options) + "\n";
  std::size_t shown = 0;
  for (std::size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    out += GpuBlock(snapshot, i, options);
    if (!snapshot.gpus[i].is_mig()) ++shown;
  }
  if (shown == 0 && snapshot.nvml_up) out += "No GPUs were found\n";
  return out + "\n" + Processes(snapshot, options.width);
}

int TerminalWidth(int fd) {
  struct winsize size {};
  if (ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 100;
}

}  // namespace gpuscope::cli

#include "cli/top.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ostream>

#include "analysis/report.h"
#include "base/log.h"
#include "cli/exit_codes.h"
#include "cli/options.h"
#include "cli/sim_clock.h"
#include "cli/stop.h"
#include "cli/top_frame.h"
#include "cli/top_terminal.h"
#include "collect/sampler.h"
#include "collect/selection.h"

namespace gpuscope::cli {
namespace {

constexpr const char* kClearScreen = "\x1b[H\x1b[2J";
constexpr double kVerdictEverySeconds = 5;
constexpr double kOnceGapSeconds = 0.5;

// The most confident finding of each GPU over the sampler's window.
std::vector<std::string> Verdicts(const Snapshot& snapshot, const Window& window) {
  analysis::RunOptions options;
  std::vector<std::string> out(snapshot.gpus.size());
  for (const analysis::GpuDiagnosis& d : analysis::RunDiagnose(snapshot, window, options)) {
    if (d.slot >= out.size()) continue;
    if (!d.findings.empty()) {
      out[d.slot] = d.findings.front().verdict;
    } else if (d.span_seconds < options.diagnose.min_span_seconds) {
      out[d.slot] = "(gathering: needs " +
                    std::to_string(static_cast<int>(options.diagnose.min_span_seconds)) +
                    " s of samples)";
    }
  }
  return out;
}

collect::SamplerOptions MakeSamplerOptions(const std::string& library, const TopArgs& args) {
  collect::SamplerOptions options;
  options.nvml_path = library;
  options.fast_interval_s = std::max(0.1, args.interval_seconds);
  options.slow_interval_s = std::max(options.slow_interval_s, options.fast_interval_s);
  options.pcie_interval_s = std::max(options.pcie_interval_s, options.fast_interval_s);
  options.window_span_s = analysis::DiagnoseOptions{}.window_seconds + 10;
  return options;
}

// The live screen: redrawn every interval and at once after a key; the
// session restores the terminal however the loop ends.
void RunLoop(collect::Sampler& sampler, const TopArgs& args, const CommonOptions& common,
             FrameOptions frame, std::ostream& out) {
  using std::chrono::steady_clock;
  const auto step = std::chrono::duration_cast<steady_clock::duration>(
      std::chrono::duration<double>(args.interval_seconds));
  // Refreshed with the verdicts; the sampler sets it on each snapshot before
  // publishing, so a frame reads the snapshot as it is.
  std::atomic<AttributionPtr> attribution;
  sampler.Decorate(
      [&attribution](Snapshot& snapshot) { snapshot.attribution = attribution.load(); });
  sampler.Start();
  {
    TerminalSession terminal(out, STDIN_FILENO);
    auto next = steady_clock::now();
    auto next_verdict = next;
    while (!StopRequested()) {
      if (steady_clock::now() >= next) {  // a frame is due (not only a key's redraw)
        next += step;
        if (next < steady_clock::now()) next = steady_clock::now() + step;  // skip missed ones
      }
      SnapshotPtr snapshot = sampler.Latest();
      if (steady_clock::now() >= next_verdict) {
        frame.verdicts = Verdicts(*snapshot, sampler.window());
        snapshot = Attribute(common, snapshot);
        attribution.store(snapshot->attribution);
        next_verdict =
            steady_clock::now() + std::chrono::seconds(static_cast<int>(kVerdictEverySeconds));
      }
      const std::size_t gpus = WholeGpuCount(*snapshot);
      frame.selected = gpus == 0 ? 0 : std::min(frame.selected, gpus - 1);
      frame.width = TerminalWidth(STDOUT_FILENO);
      frame.height = TerminalHeight(STDOUT_FILENO);
      out << kClearScreen << RenderFrame(*snapshot, frame) << std::flush;
      // Keys until the next frame is due; a move redraws at once.
      Keys keys;
      while (!keys.any() && !StopRequested() && steady_clock::now() < next) {
        keys = terminal.WaitForKeys(
            std::chrono::duration_cast<std::chrono::milliseconds>(next - steady_clock::now()));
      }
      if (keys.quit) break;
      const long moved = static_cast<long>(frame.selected) + keys.move;
      frame.selected = static_cast<std::size_t>(std::max(0L, moved));  // clamped when drawn
    }
  }
  sampler.Stop();
  sampler.Decorate(nullptr);  // it refers to this frame's `attribution`
}

}  // namespace

Result<double> ParseInterval(const std::string& text) {
  if (text.size() > 2 && text.ends_with("ms")) {
    char* end = nullptr;
    const double ms = std::strtod(text.c_str(), &end);
    if (end == text.c_str() + text.size() - 2 && ms > 0 && std::isfinite(ms)) return ms / 1000;
    return Status::InvalidArgument("--interval: bad duration '" + text + "'");
  }
  Result<double> seconds = ParseCommandDuration(text);
  if (!seconds.ok()) return Status::InvalidArgument("--interval: " + seconds.status().message());
  return *seconds;
}

Result<TopArgs> ParseTopArgs(const std::vector<std::string>& args) {
  TopArgs out;
  Status status = ForEachOption(
      args, "top", {"--interval", "-d", "-i", "--id"}, [&](const Option& o) -> Status {
        if ((o.flag == "-h" || o.flag == "--help") && !o.inline_value) {
          out.help = true;
        } else if (o.flag == "--once" && !o.inline_value) {
          out.once = true;
        } else if (o.flag == "--no-color" && !o.inline_value) {
          out.color = false;
        } else if (o.flag == "--interval" || o.flag == "-d") {
          Result<double> seconds = ParseFlagDuration(o, 0.1, 3600);  // 100ms to 1h
          if (!seconds.ok()) return seconds.status();
          out.interval_seconds = *seconds;
        } else if (o.flag == "-i" || o.flag == "--id") {
          out.ids = o.value;
        } else {
          return UnknownOption(o, "top", TopUsage());
        }
        return Status::Ok();
      });
  if (!status.ok()) return status;
  return out;
}

std::string TopUsage() {
  return "Usage: gpuscope top [--interval 1s] [-i IDS] [--once] [--no-color]\n"
         "Live view of every GPU: utilization next to SM and tensor activity (GPM), memory,\n"
         "power, temperature, clocks, throttle reasons, PCIe, state, and the processes.\n\n"
         "  -d, --interval DURATION  redraw period: 300ms, 1s, 2s; a bare number is\n"
         "                           seconds (default 1s, 100ms to 1h)\n"
         "  -i, --id IDS             only these GPUs: index, UUID or PCI bus id, comma separated\n"
         "  --once                   print the full frame (a block per GPU) and exit\n"
         "  --no-color               no ANSI colours\n\n"
         "Keys: q, Q or Esc quit; j/k or the arrow keys select the GPU whose details show.\n" +
         std::string(kSimMomentHelp);
}

Status RunTop(Invocation& inv) {
  Result<TopArgs> args = ParseTopArgs(inv.args);
  if (!args.ok()) return args.status();
  if (args->help) {
    *inv.out << TopUsage();
    return Status::Ok();
  }
  Result<std::string> library = PrepareNvml(inv.common);
  if (!library.ok()) return library.status();
  log::SetLevel(log::Level::kWarn);
  collect::SamplerOptions options = MakeSamplerOptions(*library, *args);
  if (!args->ids.empty()) {
    Result<collect::DeviceSelection> selection = collect::ParseSmiIds(args->ids);
    if (!selection.ok()) return selection.status();
    options.devices = *selection;
  }
  collect::Sampler sampler(options);
  GPUSCOPE_RETURN_IF_ERROR(sampler.Open());
  FrameOptions frame;
  frame.color = args->color && (args->once ? isatty(STDOUT_FILENO) == 1 : true);
  frame.scenario = ScenarioName(inv.common, [](const char* name) { return std::getenv(name); });
  frame.simulated = !frame.scenario.empty();
  // The first frame has every tier (processes, limits) instead of waiting a slow cycle.
  SnapshotPtr first = sampler.SampleOnce(/*all_tiers=*/true);
  if (!first->nvml_up) return NvmlUnavailable(first->nvml_error);
  if (args->once) {
    // GPM activity is a rate between two samples: take a second one shortly after.
    SleepUntil(std::chrono::steady_clock::now() +
               std::chrono::milliseconds(
                   static_cast<int>(1000 * std::min(args->interval_seconds, kOnceGapSeconds))));
    SnapshotPtr second = sampler.SampleOnce();
    if (second->nvml_up) first = second;
    frame.width = TerminalWidth(STDOUT_FILENO);
    *inv.out << RenderFrame(*Attribute(inv.common, first), frame) << std::flush;
    return Status::Ok();
  }
  InstallStopHandlers();
  frame.subtitle = "every " + std::to_string(static_cast<int>(args->interval_seconds * 1000)) +
                   " ms   q quit   j/k or arrows select a GPU";
  if (Result<double> moment = SimMoment(); frame.simulated && moment.ok()) {
    frame.scenario += " from " + DescribeMoment(*moment);  // the clock runs on from there
  }
  RunLoop(sampler, *args, inv.common, std::move(frame), *inv.out);
  return Status::Ok();
}

}  // namespace gpuscope::cli

#include "cli/diagnose_command.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ostream>

#include "analysis/report.h"
#include "base/log.h"
#include "base/text.h"
#include "cli/device_ids.h"
#include "cli/exit_codes.h"
#include "cli/options.h"
#include "cli/sim_clock.h"
#include "cli/stop.h"
#include "collect/sampler.h"
#include "collect/selection.h"
#include "collect/stepped.h"

namespace gpuscope::cli {
namespace {

constexpr double kStepSeconds = 1;
constexpr double kProgressEverySeconds = 10;
// Stepping the simulator says how far it got once it has taken this long.
constexpr double kSteppingProgressAfterSeconds = 1;

// What was sampled: the sampler owns the window the snapshot's slots index.
struct Sampled {
  std::unique_ptr<collect::Sampler> sampler;
  SnapshotPtr snapshot;
};

// The window ends at the scenario moment (cli/sim_clock.h), as on an agent
// whose trailing window ends now; a moment earlier than the window gives the
// scenario's first `window_seconds` (nothing precedes 0).
Result<Sampled> SampleOffline(const std::string& library, double window_seconds,
                              std::ostream& err) {
  Result<double> moment = SimMoment();
  if (!moment.ok()) return moment.status();
  collect::SteppedOptions options;
  options.nvml_path = library;
  options.start_seconds = std::max(0.0, *moment - window_seconds);
  options.end_seconds = options.start_seconds + window_seconds;
  options.step_seconds = kStepSeconds;
  // Progress on stderr, once a second, when stepping takes over a second.
  const auto begin = std::chrono::steady_clock::now();
  auto next_report = begin + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(kSteppingProgressAfterSeconds));
  options.on_step = [&, done = 0.0](const SnapshotPtr&) mutable {
    done += kStepSeconds;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_report) return;
    next_report = now + std::chrono::seconds(1);
    err << "gpuscope diagnose: simulated " << FormatDuration(done) << " of "
        << FormatDuration(window_seconds) << "\n"
        << std::flush;
  };
  Result<collect::SteppedRun> run = collect::SampleSteps(options);
  if (!run.ok()) return run.status();
  return Sampled{std::move(run->sampler), std::move(run->snapshot)};
}

// Samples the live GPUs once a second for the window.
Result<Sampled> SampleLive(const std::string& library, double window_seconds, std::ostream& err) {
  collect::SamplerOptions options;
  options.nvml_path = library;
  options.fast_interval_s = kStepSeconds;
  options.window_span_s = window_seconds + 2 * kStepSeconds;
  Sampled out;
  out.sampler = std::make_unique<collect::Sampler>(options);
  GPUSCOPE_RETURN_IF_ERROR(out.sampler->Open());
  InstallStopHandlers();
  const auto begin = std::chrono::steady_clock::now();
  const long steps = std::lround(window_seconds / kStepSeconds);
  err << "gpuscope diagnose: sampling for " << window_seconds << " s (Ctrl-C diagnoses early)\n";
  for (long i = 0; i <= steps; ++i) {
    if (i > 0 && !SleepUntil(begin + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::duration<double>(i * kStepSeconds)))) {
      err << "gpuscope diagnose: stopped after " << i - 1 << " s\n";
      break;
    }
    out.snapshot = out.sampler->SampleOnce(/*all_tiers=*/i == 0);
    if (!out.snapshot->nvml_up) return NvmlUnavailable(out.snapshot->nvml_error);
    if (i > 0 && std::fmod(i * kStepSeconds, kProgressEverySeconds) == 0) {
      err << "gpuscope diagnose: " << i * kStepSeconds << " / " << window_seconds << " s\n";
    }
  }
  return out;
}

Result<std::vector<std::size_t>> Slots(const Snapshot& snapshot, const std::string& ids) {
  if (ids.empty()) return std::vector<std::size_t>{};
  Result<collect::DeviceSelection> selection = collect::ParseSmiIds(ids);
  if (!selection.ok()) return selection.status();
  return collect::SelectDevices(snapshot.gpus, *selection);
}

// Prints a running agent's diagnosis (with its KPIs) as it answers it.
Status DiagnoseAgent(const DiagnoseArgs& args, Invocation& inv) {
  Result<baseline::PromClient> client = baseline::PromClient::Create(args.agent);
  if (!client.ok()) return client.status();
  Result<std::string> body =
      GetWithIds(*client, "/api/v1/diagnosis", args.json ? "" : "format=text", args.ids);
  if (!body.ok()) return body.status();
  // Printed as it came, less what could drive the terminal.
  *inv.out << base::TerminalText(*body, /*keep_lines=*/true);
  return Status::Ok();
}

}  // namespace

Result<DiagnoseArgs> ParseDiagnoseArgs(const std::vector<std::string>& args) {
  DiagnoseArgs out;
  out.agent.server = "gpuscope agent";
  out.agent.url_option = "--agent";
  auto& c = out.agent;
  Status status = ForEachOption(
      args, "diagnose",
      {"--window", "-w", "-i", "--id", "--agent", "--ca-file", "--cert-file", "--key-file",
       "--basic-auth-user", "--basic-auth-password-file"},
      [&](const Option& o) -> Status {
        if (o.flag == "-h" || o.flag == "--help") {
          out.help = true;
        } else if (o.flag == "--json" && !o.inline_value) {
          out.json = true;
        } else if (o.flag == "--live" && !o.inline_value) {
          out.live = true;
        } else if (o.flag == "--window" || o.flag == "-w") {
          Result<double> seconds = ParseFlagDuration(o, kStepSeconds, kMaxWindowSeconds);
          if (!seconds.ok()) return seconds.status();
          out.window_seconds = *seconds;
          out.window_given = true;
        } else if (o.flag == "-i" || o.flag == "--id") {
          out.ids = o.value;
        } else if (o.flag == "--agent") {
          c.url = o.value;
        } else if (!TakeClientOption(o, c)) {
          return UnknownOption(o, "diagnose", DiagnoseUsage());
        }
        return Status::Ok();
      });
  if (!status.ok()) return status;
  const bool tls = !c.ca_file.empty() || !c.cert_file.empty() || !c.key_file.empty() ||
                   !c.username.empty() || !c.password_file.empty();
  if (c.url.empty() && tls) {
    return Status::InvalidArgument("TLS and basic-auth options go with --agent");
  }
  if (!c.url.empty() && (out.window_given || out.live)) {
    return Status::InvalidArgument(
        std::string(out.live ? "--live" : "--window") +
        " does not go with --agent: the agent diagnoses its own window (5m, every 10 s)");
  }
  return out;
}

std::string DiagnoseUsage() {
  return "Usage: gpuscope diagnose [--window 5m] [-i GPU] [--json] [--live]\n"
         "       gpuscope diagnose --agent URL [-i GPU] [--json] [--ca-file PEM]\n"
         "                         [--cert-file PEM --key-file PEM]\n"
         "                         [--basic-auth-user USER --basic-auth-password-file FILE]\n"
         "Why is my job slow? Bottleneck verdicts per GPU (compute, memory bandwidth or\n"
         "capacity, interconnect, PCIe, thermal, power, starved, idle) with their evidence.\n\n"
         "  -w, --window DURATION  span to sample and analyse: 90s, 5m, 1h; a bare number is\n"
         "                         seconds (default 5m, 1s to 24h)\n"
         "  -i, --id IDS           only these GPUs: index, UUID or PCI bus id, comma separated;\n"
         "                         a MIG UUID names one instance (with --agent too)\n"
         "  --json                 one JSON document instead of the text report\n"
         "  --live                 sample in real time on the simulator too\n"
         "  --agent URL            ask a running `gpuscope serve` (http(s)://host:9400) for\n"
         "                         its diagnosis instead of sampling here; it also prints\n"
         "                         each GPU's application KPIs (step time, request latency)\n"
         "                         from the agent's OTLP receiver, with kpi_regression\n"
         "  --ca-file, --cert-file, --key-file, --basic-auth-user,\n"
         "  --basic-auth-password-file  TLS and basic auth towards the agent (as baseline)\n\n"
         "On a real driver the GPUs are sampled once a second for the window first; on the\n"
         "simulator the window is sampled offline and ends at the scenario moment (below),\n"
         "unless --live. Application KPIs live in the agent (a one-shot diagnose has none):\n"
         "use --agent to see them beside the GPU verdicts.\n" +
         std::string(kSimMomentHelp);
}

Status RunDiagnose(Invocation& inv) {
  Result<DiagnoseArgs> args = ParseDiagnoseArgs(inv.args);
  if (!args.ok()) return args.status();
  if (args->help) {
    *inv.out << DiagnoseUsage();
    return Status::Ok();
  }
  if (!args->agent.url.empty()) return DiagnoseAgent(*args, inv);
  const double min_span = analysis::DiagnoseOptions{}.min_span_seconds;
  if (args->window_seconds < min_span) {
    *inv.err << "gpuscope diagnose: note: a window under " << min_span
             << " s is too short for verdicts\n";
  }
  Result<std::string> library = PrepareNvml(inv.common);
  if (!library.ok()) return library.status();
  log::SetLevel(log::Level::kWarn);
  const auto env = [](const char* name) { return std::getenv(name); };
  const bool offline = !args->live && !ScenarioName(inv.common, env).empty();
  // A GPU that is not there is said before the window is sampled (live, five
  // minutes by default), not after it.
  if (!args->ids.empty()) {
    GPUSCOPE_RETURN_IF_ERROR(CheckIdsHere(*library, args->ids, /*mig_selects_gpu=*/false));
  }
  Result<Sampled> sampled = offline ? SampleOffline(*library, args->window_seconds, *inv.err)
                                    : SampleLive(*library, args->window_seconds, *inv.err);
  if (!sampled.ok()) return sampled.status();
  if (!sampled->snapshot->nvml_up) return NvmlUnavailable(sampled->snapshot->nvml_error);
  analysis::RunOptions options;
  options.diagnose.window_seconds = args->window_seconds;
  Result<std::vector<std::size_t>> slots = Slots(*sampled->snapshot, args->ids);
  if (!slots.ok()) return slots.status();
  options.slots = *slots;
  std::vector<analysis::GpuDiagnosis> results = analysis::RunDiagnose(
      *Attribute(inv.common, sampled->snapshot), sampled->sampler->window(), options);
  for (analysis::GpuDiagnosis& d : results) {
    d.scenario_clock = offline;
    for (analysis::GpuDiagnosis& v : d.vgpus) v.scenario_clock = offline;
  }
  *inv.out << (args->json ? analysis::FormatJson(results) : analysis::FormatText(results));
  for (const analysis::GpuDiagnosis& d : results) {
    if (!d.lost.empty()) return GpuLost(d.lost);  // the finding, and the exit code of the table
  }
  return Status::Ok();
}

}  // namespace gpuscope::cli

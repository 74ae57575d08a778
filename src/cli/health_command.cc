#include "cli/health_command.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "analysis/report.h"
#include "base/log.h"
#include "cli/device_ids.h"
#include "cli/exit_codes.h"
#include "cli/options.h"
#include "cli/sim_clock.h"
#include "cli/stop.h"
#include "collect/selection.h"
#include "health/report.h"
#include "health/report_json.h"
#include "serve/health.h"

namespace gpuscope::cli {
namespace {

constexpr double kMaxWatchSeconds = 24 * 3600;

// The options that take a value.
// clang-format off
const std::initializer_list<std::string_view> kHealthOptionsWithValues = {
    "--watch", "--count", "-i", "--id", "--agent", "--ca-file", "--cert-file", "--key-file",
    "--basic-auth-user", "--basic-auth-password-file"};
// clang-format on

Result<HealthArgs> CheckAgentArgs(HealthArgs args) {
  const baseline::ClientOptions& c = args.agent;
  const bool tls = !c.ca_file.empty() || !c.cert_file.empty() || !c.key_file.empty() ||
                   !c.username.empty() || !c.password_file.empty();
  if (c.url.empty() && tls) {
    return Status::InvalidArgument("TLS and basic-auth options go with --agent");
  }
  return args;
}

// The agent's health report (/api/v1/health), narrowed by the agent to `ids`
// as a local `health -i` samples only those GPUs (it knows its MIG UUIDs).
Result<health::HealthReport> AgentHealth(const HealthArgs& args) {
  Result<baseline::PromClient> client = baseline::PromClient::Create(args.agent);
  if (!client.ok()) return client.status();
  Result<std::string> body = GetWithIds(*client, "/api/v1/health", "", args.ids);
  if (!body.ok()) return body.status();
  Result<health::HealthReport> report = health::ParseJson(*body);
  if (!report.ok()) return report.status().Context("gpuscope agent at " + args.agent.url);
  return report;
}

}  // namespace

Result<HealthArgs> ParseHealthArgs(const std::vector<std::string>& args) {
  HealthArgs out;
  out.agent.server = "gpuscope agent";
  out.agent.url_option = "--agent";
  Status status =
      ForEachOption(args, "health", kHealthOptionsWithValues, [&](const Option& o) -> Status {
        if (o.flag == "-h" || o.flag == "--help") {
          out.help = true;
        } else if (o.flag == "--json" && !o.inline_value) {
          out.json = true;
        } else if (o.flag == "--strict" && !o.inline_value) {
          out.strict = true;
        } else if ((o.flag == "-v" || o.flag == "--verbose") && !o.inline_value) {
          out.verbose = true;
        } else if (o.flag == "--watch") {
          Result<double> seconds = ParseFlagDuration(o, 1, kMaxWatchSeconds);
          if (!seconds.ok()) return seconds.status();
          out.watch_seconds = *seconds;
        } else if (o.flag == "--count") {
          char* end = nullptr;
          const long n = std::strtol(o.value.c_str(), &end, 10);
          if (o.value.empty() || *end != '\0' || n < 1) {
            return Status::InvalidArgument("--count: want a whole number of reports >= 1, got '" +
                                           o.value + "'");
          }
          out.count = n;
        } else if (o.flag == "-i" || o.flag == "--id") {
          out.ids = o.value;
        } else if (o.flag == "--agent") {
          out.agent.url = o.value;
        } else if (!TakeClientOption(o, out.agent)) {
          return UnknownOption(o, "health", HealthUsage());
        }
        return Status::Ok();
      });
  if (!status.ok()) return status;
  if (out.count > 0 && out.watch_seconds == 0) {
    return Status::InvalidArgument("--count goes with --watch; see gpuscope health --help.");
  }
  return CheckAgentArgs(std::move(out));
}

std::string HealthUsage() {
  return "Usage: gpuscope health [--json] [--strict] [--watch DURATION [--count N]] [--verbose]\n"
         "                       [-i IDS]\n"
         "       gpuscope health --agent URL [--json] [--strict] [--verbose] [-i IDS]\n"
         "                       [--watch DURATION [--count N]]\n"
         "                       [--ca-file PEM] [--cert-file PEM --key-file PEM]\n"
         "                       [--basic-auth-user USER --basic-auth-password-file FILE]\n"
         "Health verdicts per GPU: memory (ECC, remapped rows, retired pages), PCIe, NVLink,\n"
         "thermal, power, XID and driver, with the evidence and what to do.\n\n"
         "  --json             one JSON document instead of the text report (one per report\n"
         "                     with --watch)\n"
         "  --strict           exit 1 when a GPU only warns\n"
         "  --watch DURATION   judge again every DURATION until Ctrl-C, like nvidia-smi -l:\n"
         "                     5s, 1m, 90s (a bare number is seconds; 1s to 24h); each\n"
         "                     report judges rates (PCIe replays per minute, NVLink CRC\n"
         "                     errors per second) over the last interval\n"
         "  --count N          with --watch: stop after N reports (--count 1: one report of\n"
         "                     rates over DURATION)\n"
         "  -v, --verbose      also show the evidence of checks that pass\n"
         "  -i, --id IDS       only these GPUs: index, UUID or PCI bus id, comma separated;\n"
         "                     a MIG UUID names the GPU that holds it (with --agent too)\n"
         "  --agent URL        the report of a running `gpuscope serve` (http(s)://host:9400),\n"
         "                     printed as here; its rates come from its own samples, and\n"
         "                     --watch asks it again every DURATION (the first report at once)\n"
         "  --ca-file, --cert-file, --key-file, --basic-auth-user,\n"
         "  --basic-auth-password-file  TLS and basic auth towards the agent\n\n"
         "Exit status (of the last report): 0 every GPU ok (or warn), 1 warn with --strict,\n"
         "15 a GPU is lost, 20 a GPU fails a check; 6 no such GPU (-i), 9 no driver.\n"
         "See gpuscope --help for the whole table.\n" +
         std::string(kSimMomentHelp);
}

int HealthExit(const health::HealthReport& report, bool strict) {
  Exit code = Exit::kOk;
  if (!report.nvml_up) {
    code = Exit::kNoDriver;
  } else if (std::any_of(report.gpus.begin(), report.gpus.end(),
                         [](const health::GpuHealth& g) { return g.lost; })) {
    code = Exit::kGpuLost;
  } else if (report.verdict == health::Verdict::kFail) {
    code = Exit::kHealthFailed;
  } else if (strict && report.verdict == health::Verdict::kWarn) {
    code = Exit::kHealthWarn;
  }
  return static_cast<int>(code);
}

int PrintHealth(const HealthArgs& args, const health::HealthReport& report, std::ostream& out,
                std::ostream& err) {
  if (args.json) {
    out << health::FormatJson(report);
  } else if (!report.nvml_up) {
    err << "gpuscope health: cannot read the GPUs: " << report.nvml_error << "\n";
  } else {
    out << health::FormatReport(report, {.verbose = args.verbose});
  }
  for (const health::GpuHealth& gpu : report.gpus) {
    if (!gpu.lost) continue;
    GpuInfo info;
    info.index = gpu.gpu;
    info.pci_bus_id = gpu.pci_bus_id;
    GpuSample sample;
    for (const auto& [xid, count] : gpu.xid_totals) sample.xid_counts[xid] = count;
    err << "gpuscope health: " << analysis::LostSentence(info, sample) << "\n";
  }
  out.flush();
  return HealthExit(report, args.strict);
}

namespace {

// The agent's report, and with --watch again every interval until Ctrl-C or
// --count: the agent has judged its rates already, so the first comes at once.
Status WatchAgent(const HealthArgs& args, Invocation& inv) {
  if (args.watch_seconds > 0) InstallStopHandlers();
  const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(args.watch_seconds));
  auto next = std::chrono::steady_clock::now();
  for (long printed = 0;;) {
    Result<health::HealthReport> report = AgentHealth(args);
    if (!report.ok()) return report.status();
    if (printed > 0 && !args.json) *inv.out << "\n";
    inv.exit_code = PrintHealth(args, *report, *inv.out, *inv.err);
    if (args.watch_seconds == 0 || ++printed == args.count || StopRequested()) break;
    if (!SleepUntil(next += interval)) break;
  }
  return Status::Ok();
}

}  // namespace

Status RunHealth(Invocation& inv) {
  Result<HealthArgs> args = ParseHealthArgs(inv.args);
  if (!args.ok()) return args.status();
  if (args->help) {
    *inv.out << HealthUsage();
    return Status::Ok();
  }
  if (!args->agent.url.empty()) return WatchAgent(*args, inv);
  serve::HealthRunOptions options;
  if (!args->ids.empty()) {
    Result<collect::DeviceSelection> selection = collect::ParseSmiIds(args->ids);
    if (!selection.ok()) return selection.status();
    options.sampler.devices = *selection;
    options.sampler.devices.mig_selects_gpu = true;  // health is judged per whole GPU
  }
  Result<std::string> library = PrepareNvml(inv.common);
  if (!library.ok()) return library.status();
  options.sampler.nvml_path = *library;
  options.watch_seconds = args->watch_seconds;
  options.attribution = inv.common.attribution;
  long printed = 0;
  if (args->watch_seconds > 0) {
    InstallStopHandlers();
    // The intervals count from the first sample (rates need the whole span).
    std::chrono::steady_clock::time_point next;
    const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(args->watch_seconds));
    options.wait_next = [next, interval]() mutable {
      if (next == std::chrono::steady_clock::time_point{}) next = std::chrono::steady_clock::now();
      return SleepUntil(next += interval);
    };
    options.on_report = [&](const health::HealthReport& report) {
      if (printed > 0 && !args->json) *inv.out << "\n";
      inv.exit_code = PrintHealth(*args, report, *inv.out, *inv.err);
      return ++printed != args->count && !StopRequested();
    };
    if (!args->json) {
      *inv.err << "gpuscope health: a report every " << args->watch_seconds
               << " s, the first one in " << args->watch_seconds << " s (Ctrl-C stops)\n";
    }
  }
  log::SetLevel(log::Level::kError);  // the report says what matters
  Status opened;
  const health::HealthReport report = serve::RunHealthOnce(options, &opened);
  // An id that names nothing is that, not a report of GPUs that could not be read.
  if (!opened.ok() && !args->ids.empty()) {
    GPUSCOPE_RETURN_IF_ERROR(CheckIdsHere(*library, args->ids, /*mig_selects_gpu=*/true));
  }
  if (printed == 0) inv.exit_code = PrintHealth(*args, report, *inv.out, *inv.err);
  // Why NVML did not open (no such GPU, no driver, a missing scenario) keeps its own code.
  if (!opened.ok()) inv.exit_code = ExitCodeFor(opened);
  return Status::Ok();
}

}  // namespace gpuscope::cli

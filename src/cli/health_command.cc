#include "cli/health_command.h"

#include "base/log.h"
#include "cli/options.h"
#include "cli/sim_clock.h"
#include "collect/selection.h"
#include "health/report.h"
#include "health/report_json.h"
#include "serve/health.h"

namespace gpuscope::cli {

namespace {

// The options that take a value.
// clang-format off
const std::initializer_list<std::string_view> kHealthOptionsWithValues = {
    "--watch", "-i", "--id", "--agent", "--ca-file", "--cert-file", "--key-file",
    "--basic-auth-user", "--basic-auth-password-file"};
// clang-format on

Result<HealthArgs> CheckAgentArgs(HealthArgs args) {
  const baseline::ClientOptions& c = args.agent;
  const bool tls = !c.ca_file.empty() || !c.cert_file.empty() || !c.key_file.empty() ||
                   !c.username.empty() || !c.password_file.empty();
  if (c.url.empty() && tls) {
    return Status::InvalidArgument("TLS and basic-auth options go with --agent");
  }
  if (!c.url.empty() && args.watch_seconds > 0) {
    return Status::InvalidArgument(
        "--watch does not go with --agent: the agent judges rates over its own samples");
  }
  return args;
}

// The agent's health report (/api/v1/health), narrowed to `ids` as a local
// `health -i` samples only those GPUs.
Result<health::HealthReport> AgentHealth(const HealthArgs& args) {
  Result<baseline::PromClient> client = baseline::PromClient::Create(args.agent);
  if (!client.ok()) return client.status();
  Result<std::string> body = client->Get("/api/v1/health");
  if (!body.ok()) return body.status();
  Result<health::HealthReport> report = health::ParseJson(*body);
  if (!report.ok()) return report.status().Context("gpuscope agent at " + args.agent.url);
  if (!args.ids.empty()) {
    Result<collect::DeviceSelection> selection = collect::ParseSmiIds(args.ids);
    if (!selection.ok()) return selection.status();
    Status kept = health::KeepGpus(*report, *selection);
    if (!kept.ok()) return kept.Context("gpuscope agent at " + args.agent.url);
  }
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
          Result<double> seconds = ParseCommandDuration(o.value);
          if (!seconds.ok())
            return Status::InvalidArgument("--watch: " + seconds.status().message());
          out.watch_seconds = *seconds;
        } else if (o.flag == "-i" || o.flag == "--id") {
          out.ids = o.value;
        } else if (o.flag == "--agent") {
          out.agent.url = o.value;
        } else if (!TakeClientOption(o, out.agent)) {
          return UnknownOption(o, "health");
        }
        return Status::Ok();
      });
  if (!status.ok()) return status;
  return CheckAgentArgs(std::move(out));
}

std::string HealthUsage() {
  return "Usage: gpuscope health [--json] [--strict] [--watch SECONDS] [--verbose] [-i IDS]\n"
         "       gpuscope health --agent URL [--json] [--strict] [--verbose] [-i IDS]\n"
         "                       [--ca-file PEM] [--cert-file PEM --key-file PEM]\n"
         "                       [--basic-auth-user USER --basic-auth-password-file FILE]\n"
         "Health verdicts per GPU: memory (ECC, remapped rows, retired pages), PCIe, NVLink,\n"
         "thermal, power, XID and driver, with the evidence and what to do.\n\n"
         "  --json           one JSON document instead of the text report\n"
         "  --strict         exit 1 when a GPU only warns\n"
         "  --watch SECONDS  sample again after this long; 5 s or more also judges rates\n"
         "                   (PCIe replays per minute, NVLink CRC errors per second)\n"
         "  -v, --verbose    also show the evidence of checks that pass\n"
         "  -i, --id IDS     only these GPUs: index, UUID or PCI bus id, comma separated\n"
         "  --agent URL      the report of a running `gpuscope serve` (http(s)://host:9400),\n"
         "                   printed as here; its rates come from its own samples\n"
         "  --ca-file, --cert-file, --key-file, --basic-auth-user,\n"
         "  --basic-auth-password-file  TLS and basic auth towards the agent\n\n"
         "Exit status: 0 every GPU ok (or warn), 1 warn with --strict, 2 a GPU fails or NVML "
         "is down.\n" +
         std::string(kSimMomentHelp);
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
  return health::ExitCode(report, args.strict);
}

Status RunHealth(Invocation& inv) {
  Result<HealthArgs> args = ParseHealthArgs(inv.args);
  if (!args.ok()) return args.status();
  if (args->help) {
    *inv.out << HealthUsage();
    return Status::Ok();
  }
  if (!args->agent.url.empty()) {
    Result<health::HealthReport> report = AgentHealth(*args);
    if (!report.ok()) return report.status();
    inv.exit_code = PrintHealth(*args, *report, *inv.out, *inv.err);
    return Status::Ok();
  }
  serve::HealthRunOptions options;
  if (!args->ids.empty()) {
    Result<collect::DeviceSelection> selection = collect::ParseSmiIds(args->ids);
    if (!selection.ok()) return selection.status();
    options.sampler.devices = *selection;
  }
  Result<std::string> library = PrepareNvml(inv.common);
  if (!library.ok()) return library.status();
  options.sampler.nvml_path = *library;
  options.watch_seconds = args->watch_seconds;
  options.attribution = inv.common.attribution;
  log::SetLevel(log::Level::kError);  // the report says what matters
  const health::HealthReport report = serve::RunHealthOnce(options);
  inv.exit_code = PrintHealth(*args, report, *inv.out, *inv.err);
  return Status::Ok();
}

}  // namespace gpuscope::cli

#include "cli/serve.h"

#include <malloc.h>
#include <signal.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <optional>

#include "base/config_file.h"
#include "base/log.h"
#include "cli/serve_config.h"
#include "cli/settings.h"
#include "nvml/library.h"
#include "serve/agent.h"

namespace gpuscope::cli {
namespace {

const char* Env(const char* name) { return std::getenv(name); }

Result<Settings> LoadSettings(const std::vector<std::string>& args) {
  const std::string path = ConfigPath(args, Env);
  std::string yaml;
  if (!path.empty()) {
    Result<std::string> text = base::ReadConfigFile(path, "configuration file");
    if (!text.ok()) return text.status();
    yaml = std::move(*text);
  }
  return ResolveSettings(kServeSettings, args, Env, yaml, path);
}

// The frozen simulator time when serve should run deterministically.
std::optional<double> FrozenTime(bool simulated) {
  const char* value = Env("GPUSCOPE_SIM_FROZEN_TIME");
  if (!simulated || value == nullptr || *value == '\0') return std::nullopt;
  char* end = nullptr;
  const double t = std::strtod(value, &end);
  if (*end != '\0' || !std::isfinite(t)) return std::nullopt;
  return t;
}

// A scenario the simulator cannot read (missing, or its YAML: "FILE:LINE:
// problem") never gets better: serve says so and exits as health does, instead
// of serving no GPUs and retrying forever. One extra init of the scenario; the
// simulator's injected GPUSCOPE_SIM_INIT_ERROR is still retried by the agent.
Status CheckScenarioReads(const std::string& library) {
  if (Env("GPUSCOPE_SIM_INIT_ERROR") != nullptr) return Status::Ok();
  Result<std::unique_ptr<nvml::Library>> opened = nvml::Library::Open(library);
  if (opened.ok()) return Status::Ok();
  return opened.status().Context("cannot read the GPUs");
}

// What serve was configured with, and the assembly it runs.
struct Service {
  ServeConfig config;
  std::unique_ptr<serve::Agent> agent;
};

// A user's counters file gets its warnings; the built-in default (dcgm-exporter's
// default-counters.csv, which lists a vGPU field no NVML host serves) must
// start without any, so its notes are debug lines.
void LogCounterWarnings(const std::string& counters_path, const prom::CounterSet& counters) {
  for (const std::string& warning : counters.warnings) {
    if (counters_path.empty()) {
      log::Debug("default counters: {}", warning);
    } else {
      log::Warn("{}", warning);
    }
  }
}

void Reload(Service& s) {
  log::Info("SIGHUP: reloading the counters file and the web-config file");
  Result<prom::CounterSet> counters = LoadCounters(s.config.counters_path);
  if (!counters.ok()) {
    log::Error("reload: keeping the previous counters: {}", counters.status().message());
  } else {
    LogCounterWarnings(s.config.counters_path, *counters);
    s.agent->SetCounters(std::move(*counters));
  }
  Status web = s.agent->ReloadWebConfig();
  if (!web.ok()) log::Error("reload: keeping the previous web-config: {}", web.message());
}

// Waits for SIGTERM/SIGINT, handling SIGHUP and late event-thread starts.
void WaitForSignals(Service& s, const sigset_t& signals) {
  while (true) {
    const timespec tick{1, 0};
    const int signal = sigtimedwait(&signals, nullptr, &tick);
    if (signal == SIGTERM || signal == SIGINT) {
      log::Info("{}: stopping", signal == SIGTERM ? "SIGTERM" : "SIGINT");
      return;
    }
    if (signal == SIGHUP) Reload(s);
    s.agent->Poll();
  }
}

Status Configure(Invocation& inv, Service& s) {
  Result<Settings> settings = LoadSettings(inv.all_args);
  if (!settings.ok()) return settings.status();
  Result<ServeConfig> config = BuildServeConfig(*settings);
  if (!config.ok()) return config.status();
  s.config = std::move(*config);
  serve::AgentOptions& agent = s.config.agent;
  log::SetLevel(log::ParseLevel(s.config.log_level).value_or(log::Level::kOff));
  Result<prom::CounterSet> counters = LoadCounters(s.config.counters_path);
  if (!counters.ok()) return counters.status();
  LogCounterWarnings(s.config.counters_path, *counters);
  agent.render.counters = std::move(*counters);
  if (!s.config.kpi_mapping_file.empty()) {
    Result<otlp::Conventions> conventions = otlp::Conventions::Load(s.config.kpi_mapping_file);
    if (!conventions.ok()) return conventions.status();
    agent.otlp.conventions = std::move(*conventions);
  }
  Result<std::string> library = PrepareNvml(s.config.nvml, SimStart::kScenarioStart);
  if (!library.ok()) return library.status();
  agent.sampler.nvml_path = *library;
  const std::string scenario = ScenarioName(s.config.nvml, Env);
  const bool simulated = !scenario.empty();
  if (simulated) GPUSCOPE_RETURN_IF_ERROR(CheckScenarioReads(*library));
  agent.source = simulated ? "the simulator (scenario " + scenario + ")" : "NVML " + *library;
  agent.scenario = scenario;
  agent.frozen_time = FrozenTime(simulated);
  return Status::Ok();
}

Status Serve(Service& s, const sigset_t& signals) {
  s.agent = std::make_unique<serve::Agent>(s.config.agent);
  GPUSCOPE_RETURN_IF_ERROR(s.agent->Start());
  WaitForSignals(s, signals);
  s.agent->Stop();
  return Status::Ok();
}

bool WantsHelp(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "-h" || arg == "--help") return true;
  }
  return false;
}

}  // namespace

Status RunServe(Invocation& inv) {
  if (WantsHelp(inv.all_args)) {
    *inv.out << ServeUsage();
    return Status::Ok();
  }
  // One glibc malloc arena per thread that allocates (up to 8 per core) holds memory the
  // agent's mostly idle threads never give back; two serve it (tcache absorbs small
  // allocations). MALLOC_ARENA_MAX, when set, decides.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
  Service service;
  GPUSCOPE_RETURN_IF_ERROR(Configure(inv, service));
  // Blocked before any thread starts, so every thread inherits the mask and
  // the signals are only ever taken by sigtimedwait in this thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Status status = Serve(service, signals);
  pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
  return status;
}

std::string ServeUsage() {
  std::string text =
      "Usage: gpuscope serve [OPTIONS]\n"
      "Prometheus exporter, compatible with dcgm-exporter (names, labels, flags, counters "
      "CSV).\nSettings come from flags, then GPUSCOPE_* environment variables, then the YAML "
      "file of --config, then defaults.\nDurations take 250ms, 10s, 5m, 1h; a bare number is "
      "milliseconds (dcgm-exporter's -c).\n\n";
  for (const SettingDef& def : kServeSettings) {
    std::string flags = (def.short_flag.empty() ? "    " : std::string(def.short_flag) + ", ") +
                        "--" + std::string(def.key) + (def.is_switch() ? "" : " VALUE");
    text += "  " + flags + "\n      " + std::string(def.help) + "\n      env " +
            std::string(def.env) +
            (def.default_value.empty() ? "" : ", default " + std::string(def.default_value)) + "\n";
  }
  return text;
}

std::string ConfigurationDoc() {
  return "# Configuring `gpuscope serve`\n\n"
         "<!-- Generated from src/cli/settings.cc by ConfigurationDoc() (src/cli/serve.cc); "
         "regenerate with\n     GPUSCOPE_UPDATE_DOCS=1 build/<dir>/cli_tests "
         "--gtest_filter='ServeDocs.*' -->\n\n"
         "Every setting has a command-line flag (dcgm-exporter's short flags where it has one), "
         "a `GPUSCOPE_*`\nenvironment variable and a key in the optional YAML file given with "
         "`--config`. Flags win over\nthe environment, which wins over the file, which wins "
         "over the defaults. Durations accept\n`250ms`, `10s`, `5m`, `1h` or bare "
         "milliseconds. Every value is checked against its range below at start (NaN,\n"
         "infinities and out-of-range numbers are errors naming the setting and where it "
         "came from).\n\n" +
         SettingsMarkdown(kServeSettings) +
         "\n## Example file\n\n```yaml\naddress: \":9400\"\ncollect-interval: 1s\n"
         "collectors: /etc/dcgm-exporter/default-counters.csv\nmetrics: both\n"
         "web-config-file: /etc/gpuscope/web-config.yml\n```\n\n"
         "## Configuration files fail closed\n\n"
         "`--config`, `-f` and `--web-config-file` must name a regular, non-empty UTF-8 file "
         "(at most 4 MiB).\nA directory, a FIFO or device, an empty or blank file, an "
         "unreadable file or bytes that are not\nUTF-8 stop `gpuscope serve` at start with "
         "an error naming the file; a web-config without any\nsetting and a counters file "
         "that lists no field are errors too, so a mistake never serves plain\nHTTP without "
         "authentication or silently drops the DCGM families.\n\n"
         "## Signals\n\n"
         "- `SIGHUP` re-reads the counters file (`-f`) and the web-config file without closing "
         "the listening\n  socket; a bad new file (including one swapped for a directory or an "
         "empty file) keeps the\n  previous one and logs the error.\n"
         "- `SIGTERM` and `SIGINT` stop serving and exit with status 0.\n\n"
         "## Endpoints\n\n"
         "- `/metrics`: the exposition (0.0.4 text, or OpenMetrics when asked for).\n"
         "- `/health`: 200 `OK` while at least one GPU has fresh data, 503 with the reason "
         "otherwise: no\n  cycle yet, NVML down, the last cycle older than `stale-after`, or "
         "no GPU read within\n  `stale-after` (every GPU hung, lost or none watched). One hung "
         "or lost GPU among others keeps\n  200; `gpuscope_collector_up` and "
         "`gpuscope_collector_stale` say which.\n"
         "- `/ready`: the same verdict as `/health`, answered `ready` or `not ready` with no "
         "detail, and\n  without basic auth, for probes that cannot send credentials (a "
         "kubelet `httpGet`). TLS still\n  applies: a probe uses `scheme: HTTPS` (kubelet does "
         "not verify the certificate); with\n  `client_auth_type` requiring client "
         "certificates a kubelet cannot connect at all, so use a\n  `tcpSocket` probe there. "
         "deploy/k8s/daemonset.yaml probes `/ready`.\n\n"
         "## Notes\n\n"
         "- `gpuscope_scrapes_total` is counted per scrape and published with the next "
         "sampling cycle, so\n  a scrape stays a copy of a body rendered at most once per cycle.\n"
         "- On the simulator, `GPUSCOPE_SIM_FROZEN_TIME=<seconds>` freezes the simulator and "
         "serve's clock,\n  which makes `/metrics` byte-identical across runs (golden "
         "tests).\n";
}

}  // namespace gpuscope::cli

#include "cli/query_args.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "cli/agent_source.h"
#include "cli/options.h"
#include "cli/sim_clock.h"
#include "collect/selection.h"

namespace gpuscope::cli {
namespace {

enum class Opt {
  kQueryGpu,
  kQueryApps,
  kQueryVgpu,
  kFormat,
  kLoop,
  kLoopMs,
  kId,
  kFile,
  kHelp,
  kHelpGpu,
  kHelpApps,
  kHelpVgpu,
  kVgpuDetail,
  kAgent,  // --agent and its TLS/auth options (cli/agent_source.h)
};

struct OptionSpec {
  std::string_view short_name;  // "-i"; empty when none
  std::string_view long_name;   // "--id"
  Opt opt;
  enum { kNone, kRequired, kOptionalNumber } value;
};

constexpr OptionSpec kOptions[] = {
    {"", "--query-gpu", Opt::kQueryGpu, OptionSpec::kRequired},
    {"", "--query-compute-apps", Opt::kQueryApps, OptionSpec::kRequired},
    {"", "--query-vgpu", Opt::kQueryVgpu, OptionSpec::kRequired},
    {"", "--format", Opt::kFormat, OptionSpec::kRequired},
    {"-l", "--loop", Opt::kLoop, OptionSpec::kOptionalNumber},
    {"-lms", "--loop-ms", Opt::kLoopMs, OptionSpec::kRequired},
    {"-i", "--id", Opt::kId, OptionSpec::kRequired},
    {"-f", "--filename", Opt::kFile, OptionSpec::kRequired},
    {"-h", "--help", Opt::kHelp, OptionSpec::kNone},
    {"", "--help-query-gpu", Opt::kHelpGpu, OptionSpec::kNone},
    {"", "--help-query-compute-apps", Opt::kHelpApps, OptionSpec::kNone},
    {"", "--help-query-vgpu", Opt::kHelpVgpu, OptionSpec::kNone},
    {"-q", "--query", Opt::kVgpuDetail, OptionSpec::kNone},
    {"", "--agent", Opt::kAgent, OptionSpec::kRequired},
    {"", "--ca-file", Opt::kAgent, OptionSpec::kRequired},
    {"", "--cert-file", Opt::kAgent, OptionSpec::kRequired},
    {"", "--key-file", Opt::kAgent, OptionSpec::kRequired},
    {"", "--basic-auth-user", Opt::kAgent, OptionSpec::kRequired},
    {"", "--basic-auth-password-file", Opt::kAgent, OptionSpec::kRequired},
};

// nvidia-smi's -l without a number loops every 5 seconds.
constexpr std::string_view kDefaultLoopSeconds = "5";

bool IsNumber(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Result<long> PositiveNumber(std::string_view flag, std::string_view value) {
  long n = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n <= 0) {
    return Status::InvalidArgument("Invalid value \"" + std::string(value) + "\" for " +
                                   std::string(flag) + ": expected a positive whole number.");
  }
  return n;
}

// Finds the option `arg` names; sets *inline_value for "--opt=value".
const OptionSpec* Match(std::string_view arg, std::optional<std::string_view>* inline_value) {
  for (const OptionSpec& spec : kOptions) {
    for (std::string_view name : {spec.short_name, spec.long_name}) {
      if (name.empty() || !arg.starts_with(name)) continue;
      if (arg.size() == name.size()) return &spec;
      if (arg[name.size()] == '=' && spec.value != OptionSpec::kNone) {
        *inline_value = arg.substr(name.size() + 1);
        return &spec;
      }
    }
  }
  return nullptr;
}

void SplitInto(std::string_view list, std::vector<std::string>* out) {
  while (true) {
    std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    if (!item.empty()) out->emplace_back(item);
    if (comma == std::string_view::npos) return;
    list.remove_prefix(comma + 1);
  }
}

Status Apply(Opt opt, std::string_view flag, std::string_view value, QueryArgs* out) {
  switch (opt) {
    case Opt::kQueryGpu:
      out->gpu_fields = value;
      break;
    case Opt::kQueryApps:
      out->app_fields = value;
      break;
    case Opt::kQueryVgpu:
      out->vgpu_fields = value;
      break;
    case Opt::kFormat: {
      Result<CsvOptions> csv = ParseFormat(value);
      if (!csv.ok()) return csv.status();
      out->csv = *csv;
      break;
    }
    case Opt::kLoop:
    case Opt::kLoopMs: {
      Result<long> n = PositiveNumber(flag, value);
      if (!n.ok()) return n.status();
      out->loop = std::chrono::milliseconds(opt == Opt::kLoop ? *n * 1000 : *n);
      break;
    }
    case Opt::kId:
      SplitInto(value, &out->ids);
      break;
    case Opt::kFile:
      out->filename = value;
      break;
    case Opt::kHelp:
      out->help = QueryArgs::Help::kUsage;
      break;
    case Opt::kHelpGpu:
      out->help = QueryArgs::Help::kGpuFields;
      break;
    case Opt::kHelpApps:
      out->help = QueryArgs::Help::kAppFields;
      break;
    case Opt::kHelpVgpu:
      out->help = QueryArgs::Help::kVgpuFields;
      break;
    case Opt::kVgpuDetail:
      out->vgpu_detail = true;
      break;
    case Opt::kAgent: {
      std::string name(flag.substr(0, flag.find('=')));
      out->agent.Take(Option{name, std::string(value), false, std::string(flag)});
      break;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<CsvOptions> ParseFormat(std::string_view value) {
  CsvOptions csv;
  bool saw_csv = false;
  std::vector<std::string> items;
  SplitInto(value, &items);
  for (const std::string& item : items) {
    if (item == "csv") {
      saw_csv = true;
    } else if (item == "noheader") {
      csv.header = false;
    } else if (item == "nounits") {
      csv.units = false;
    } else {
      return Status::InvalidArgument("Invalid --format value \"" + item +
                                     "\": use csv, optionally with noheader and nounits.");
    }
  }
  if (!saw_csv) {
    return Status::InvalidArgument("--format needs csv (for example --format=csv,noheader).");
  }
  return csv;
}

Result<QueryArgs> ParseQueryArgs(const std::vector<std::string>& args) {
  QueryArgs out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (i == 0 && arg == "vgpu") {  // `gpuscope query vgpu`, as `nvidia-smi vgpu`
      out.vgpu_table = true;
      continue;
    }
    std::optional<std::string_view> value;
    const OptionSpec* spec = Match(arg, &value);
    if (spec == nullptr) {
      return Status::InvalidArgument(UnknownOptionMessage(arg, "query", FlagsInHelp(QueryUsage())));
    }
    if (!value && spec->value == OptionSpec::kRequired) {
      if (i + 1 >= args.size()) {
        return Status::InvalidArgument("Option " + std::string(arg) +
                                       " needs a value; see gpuscope query --help.");
      }
      value = args[++i];
    } else if (!value && spec->value == OptionSpec::kOptionalNumber) {
      value = (i + 1 < args.size() && IsNumber(args[i + 1])) ? std::string_view(args[++i])
                                                             : kDefaultLoopSeconds;
    }
    GPUSCOPE_RETURN_IF_ERROR(Apply(spec->opt, arg, value.value_or(""), &out));
  }
  if (out.help != QueryArgs::Help::kNone) return out;
  GPUSCOPE_RETURN_IF_ERROR(out.agent.Check());
  const int lists = !out.gpu_fields.empty() + !out.app_fields.empty() + !out.vgpu_fields.empty();
  if (out.vgpu_detail && (!out.vgpu_table || lists != 0)) {
    return Status::InvalidArgument("-q goes with the word vgpu alone: gpuscope query vgpu -q.");
  }
  if (out.vgpu_table && lists == 1 && !out.vgpu_fields.empty()) out.vgpu_table = false;
  if (out.vgpu_table ? lists != 0 : lists != 1) {
    return Status::InvalidArgument(
        "gpuscope query needs exactly one of --query-gpu=FIELDS, --query-compute-apps=FIELDS "
        "or --query-vgpu=FIELDS (or the word vgpu alone for the vGPU table).");
  }
  return out;
}

Result<std::vector<std::size_t>> SelectGpus(const Snapshot& snapshot,
                                            const std::vector<std::string>& ids) {
  collect::DeviceSelection selection;
  selection.kind = collect::DeviceSelection::Kind::kSmiIds;
  selection.ids = ids;
  if (ids.empty()) selection.kind = collect::DeviceSelection::Kind::kFlex;
  Result<std::vector<std::size_t>> picked = collect::SelectDevices(snapshot.gpus, selection);
  if (!picked.ok()) return picked.status().Context("-i");
  // --query-gpu lists whole GPUs; MIG instances are not rows of their own.
  std::vector<std::size_t> out;
  for (std::size_t i : *picked) {
    if (!snapshot.gpus[i].gpu_instance_id) out.push_back(i);
  }
  return out;
}

std::string QueryUsage() {
  return "Usage: gpuscope query --query-gpu=FIELD,... [options]\n"
         "       gpuscope query --query-compute-apps=FIELD,... [options]\n"
         "       gpuscope query --query-vgpu=FIELD,... [options]\n"
         "       gpuscope query vgpu [-q] [-i ID] [-l N] [-f FILE]\n"
         "nvidia-smi compatible CSV output; `vgpu`: nvidia-smi vgpu's table of virtual GPUs.\n"
         "  --format=csv[,noheader][,nounits]  output format (default csv)\n"
         "  -l [N], --loop=N                   repeat every N seconds (default 5) until Ctrl-C\n"
         "  -lms N, --loop-ms=N                repeat every N milliseconds until Ctrl-C\n"
         "  -i ID, --id=ID                     GPU index, UUID or PCI bus id (comma list)\n"
         "  -f FILE, --filename=FILE           write to FILE instead of stdout\n"
         "  --nvml-lib PATH                    NVML library to load\n"
         "  --simulate NAME|PATH               run on the simulator with this scenario\n"
         "  --help-query-gpu                   list the --query-gpu fields\n"
         "  --help-query-compute-apps          list the --query-compute-apps fields\n"
         "  -q, --query                        with vgpu: each instance in detail (nvidia-smi vgpu "
         "-q)\n"
         "  --help-query-vgpu                  list the --query-vgpu fields (vGPU host)\n" +
         AgentOptionHelp("the values") + kSimMomentHelp;
}

}  // namespace gpuscope::cli

#include "scenario.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "fabric.h"
#include "yaml_fields.h"

namespace gpuscope::sim {
namespace {

constexpr double kMaxTime = 1e9;

struct KindDefaults {
  const char* name;
  WorkloadKind kind;
  Segment levels;
};

Segment Levels(double util, double sm, double occ, double tensor, double dram, double fp64,
               double fp32, double fp16, double pcie_tx, double pcie_rx, double nvlink,
               double noise) {
  Segment s;
  s.util = util, s.sm_activity = sm, s.sm_occupancy = occ, s.tensor_activity = tensor;
  s.dram_activity = dram, s.fp64_activity = fp64, s.fp32_activity = fp32;
  s.fp16_activity = fp16, s.pcie_tx_mbps = pcie_tx, s.pcie_rx_mbps = pcie_rx;
  s.nvlink_tx_mbps = nvlink, s.nvlink_rx_mbps = nvlink, s.noise = noise;
  return s;
}

const KindDefaults kKinds[] = {
    {"idle", WorkloadKind::kIdle, Levels(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)},
    {"training", WorkloadKind::kTraining,
     Levels(0.98, 0.85, 0.45, 0.6, 0.55, 0, 0.2, 0.45, 1500, 3000, 80000, 0.02)},
    {"inference", WorkloadKind::kInference,
     Levels(0.6, 0.4, 0.3, 0.3, 0.45, 0, 0.1, 0.3, 800, 1200, 0, 0.05)},
    {"custom", WorkloadKind::kCustom,
     Levels(1.0, 0.85, 0.45, 0.6, 0.55, 0, 0.2, 0.45, 1500, 3000, 80000, 0.02)},
};

class Parser {
 public:
  explicit Parser(std::string source) : src_(std::move(source)) {}

  Result<Scenario> Top(const YAML::Node& root);

 private:
  Status Error(const YAML::Node& n, const std::string& m) const { return YamlError(src_, n, m); }
  Status Gpu(const YAML::Node& node, Scenario* sc);
  Status Board(FieldReader& r, const YAML::Node& node, GpuSpec* g, unsigned* count);
  Status UniqueMinor(const YAML::Node& node, const Scenario& sc, const GpuSpec& g,
                     unsigned count) const;
  Status Processes(const YAML::Node& node, GpuSpec* g);
  Status Segments(const YAML::Node& node, GpuSpec* gpu);
  Status OneSegment(const YAML::Node& node, Segment* seg);
  Status Points(const YAML::Node& node, Segment* seg);
  Status Process(const YAML::Node& node, ProcessSpec* p);
  Status Mig(const YAML::Node& node, GpuSpec* gpu);
  Status Fault(const YAML::Node& node, FaultSpec* f, unsigned* gpu_index);
  Status FaultParams(FieldReader& r, FaultSpec* f);
  Status Faults(const YAML::Node& node, bool top, Scenario* sc, GpuSpec* gpu);

  std::string src_;
};

Result<Scenario> Parser::Top(const YAML::Node& root) {
  Scenario sc;
  sc.source = src_;
  FieldReader r(src_, root, "scenario");
  GPUSCOPE_RETURN_IF_ERROR(r.CheckIsMap());
  std::string ignored;
  GPUSCOPE_RETURN_IF_ERROR(r.String("description", &ignored));
  GPUSCOPE_RETURN_IF_ERROR(r.U64("seed", &sc.seed));
  GPUSCOPE_RETURN_IF_ERROR(r.Double("time_scale", &sc.time_scale, 1e-3, 1e6));
  GPUSCOPE_RETURN_IF_ERROR(r.String("driver_version", &sc.driver_version));
  GPUSCOPE_RETURN_IF_ERROR(r.String("nvml_version", &sc.nvml_version));
  unsigned cuda = 12080;
  GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("cuda_version", &cuda, 1000, 99999));
  sc.cuda_version = static_cast<int>(cuda);
  GPUSCOPE_RETURN_IF_ERROR(r.Double("driver_uptime_s", &sc.driver_uptime_s, 0, 10 * 365 * 86400.0));
  if (sc.nvml_version.empty()) sc.nvml_version = "12." + sc.driver_version;
  YAML::Node gpus = r.Get("gpus");
  if (!gpus.IsDefined() || gpus.IsNull()) return Error(root, "missing 'gpus' list");
  if (!gpus.IsSequence()) return Error(gpus, "'gpus' must be a list");
  for (const YAML::Node& g : gpus) GPUSCOPE_RETURN_IF_ERROR(Gpu(g, &sc));
  if (sc.gpus.size() > 64) return Error(gpus, "at most 64 GPUs");
  GPUSCOPE_RETURN_IF_ERROR(Faults(r.Get("faults"), true, &sc, nullptr));
  GPUSCOPE_RETURN_IF_ERROR(r.Finish());
  for (GpuSpec& g : sc.gpus) g.driver_uptime_s = sc.driver_uptime_s;
  return sc;
}

Status Parser::Gpu(const YAML::Node& node, Scenario* sc) {
  FieldReader r(src_, node, "gpu");
  GPUSCOPE_RETURN_IF_ERROR(r.CheckIsMap());
  GpuSpec g;
  unsigned count = 1;
  GPUSCOPE_RETURN_IF_ERROR(Board(r, node, &g, &count));
  GPUSCOPE_RETURN_IF_ERROR(Segments(r.Get("workload"), &g));
  YAML::Node procs = r.Get("processes");
  GPUSCOPE_RETURN_IF_ERROR(Processes(procs, &g));
  GPUSCOPE_RETURN_IF_ERROR(Mig(r.Get("mig"), &g));
  for (const ProcessSpec& p : g.processes) {
    if (p.gpu_instance >= static_cast<int>(g.mig_instances.size())) {
      return Error(procs, "process " + std::to_string(p.pid) + ": gpu_instance out of range");
    }
  }
  GPUSCOPE_RETURN_IF_ERROR(Faults(r.Get("faults"), false, sc, &g));
  GPUSCOPE_RETURN_IF_ERROR(ParseVgpuKeys(src_, r.Get("vgpu"), r.Get("vgpu_guest"), &g));
  GPUSCOPE_RETURN_IF_ERROR(r.Finish());
  if (sc->gpus.size() + count > 64) return Error(node, "at most 64 GPUs");
  GPUSCOPE_RETURN_IF_ERROR(
      UniqueMinor(r.Has("minor_number") ? r.Get("minor_number") : node, *sc, g, count));
  for (unsigned i = 0; i < count; ++i) {
    GpuSpec copy = g;
    for (ProcessSpec& p : copy.processes) p.pid += i;  // distinct pids per replica
    sc->gpus.push_back(std::move(copy));
  }
  return Status::Ok();
}

// Two GPUs never share a device file: the `count` GPUs of entry `g`, about to
// follow sc.gpus, get minors no GPU before them has (a GPU without
// minor_number has its index).
Status Parser::UniqueMinor(const YAML::Node& node, const Scenario& sc, const GpuSpec& g,
                           unsigned count) const {
  for (unsigned i = 0; i < count; ++i) {
    const unsigned index = static_cast<unsigned>(sc.gpus.size()) + i;
    const unsigned minor = MinorNumber(g, index);
    for (unsigned other = 0; other < sc.gpus.size(); ++other) {
      if (MinorNumber(sc.gpus[other], other) != minor) continue;
      return Error(node, "minor_number " + std::to_string(minor) + " of GPU " +
                             std::to_string(index) + " is GPU " + std::to_string(other) +
                             "'s already (a GPU without minor_number has its index)");
    }
  }
  return Status::Ok();
}

// Model, replica count, identity overrides and limits of a gpu entry.
Status Parser::Board(FieldReader& r, const YAML::Node& node, GpuSpec* g, unsigned* count) {
  std::string model;
  GPUSCOPE_RETURN_IF_ERROR(r.String("model", &model));
  g->preset = FindPreset(model);
  if (!g->preset) {
    return Error(r.Has("model") ? r.Get("model") : node,
                 "unknown or missing model '" + model + "' (known: " + PresetKeyList() + ")");
  }
  GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("count", count, 1, 64));
  GPUSCOPE_RETURN_IF_ERROR(r.String("uuid", &g->uuid));
  GPUSCOPE_RETURN_IF_ERROR(r.String("serial", &g->serial));
  if (r.Has("minor_number")) {
    unsigned minor = 0;
    GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("minor_number", &minor, 0, 255));
    g->minor_number = minor;
  }
  if (*count > 1 && (!g->uuid.empty() || !g->serial.empty() || g->minor_number)) {
    return Error(node, "uuid/serial/minor_number overrides need count 1");
  }
  if (!g->uuid.empty() && (g->uuid.size() != 40 || g->uuid.rfind("GPU-", 0) != 0)) {
    return Error(r.Get("uuid"), "uuid must look like GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
  }
  GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("pci_bus", &g->pci_bus, 1, 255));
  GPUSCOPE_RETURN_IF_ERROR(
      r.Double("power_limit_w", &g->power_limit_w, g->preset->power_min_w, g->preset->power_max_w));
  GPUSCOPE_RETURN_IF_ERROR(r.Double("hbm_offset_c", &g->hbm_offset_c, 0, 60));
  GPUSCOPE_RETURN_IF_ERROR(r.Bool("pcie_parking", &g->pcie_parking));
  return r.Double("ambient_c", &g->ambient_c, -20, 40);
}

Status Parser::Processes(const YAML::Node& node, GpuSpec* g) {
  if (!node.IsDefined() || node.IsNull()) return Status::Ok();
  if (!node.IsSequence()) return Error(node, "'processes' must be a list");
  for (const YAML::Node& p : node) {
    g->processes.emplace_back();
    GPUSCOPE_RETURN_IF_ERROR(Process(p, &g->processes.back()));
  }
  return Status::Ok();
}

Status Parser::Segments(const YAML::Node& node, GpuSpec* gpu) {
  if (!node.IsDefined() || node.IsNull()) return Status::Ok();
  if (!node.IsSequence()) return Error(node, "'workload' must be a list of segments");
  double last = -1;
  for (const YAML::Node& s : node) {
    Segment seg;
    GPUSCOPE_RETURN_IF_ERROR(OneSegment(s, &seg));
    if (seg.at < last) return Error(s, "workload segments must be in time order");
    last = seg.at;
    gpu->workload.push_back(std::move(seg));
  }
  return Status::Ok();
}

Status Parser::OneSegment(const YAML::Node& node, Segment* seg) {
  FieldReader r(src_, node, "segment");
  GPUSCOPE_RETURN_IF_ERROR(r.CheckIsMap());
  std::string kind;
  GPUSCOPE_RETURN_IF_ERROR(r.String("kind", &kind));
  const KindDefaults* def = nullptr;
  for (const KindDefaults& k : kKinds) {
    if (kind == k.name) def = &k;
  }
  if (!def) {
    return Error(r.Has("kind") ? r.Get("kind") : node,
                 "segment kind must be idle, training, inference or custom, got '" + kind + "'");
  }
  *seg = def->levels;
  seg->kind = def->kind;
  GPUSCOPE_RETURN_IF_ERROR(r.Double("at", &seg->at, 0, kMaxTime));
  struct {
    const char* key;
    double* v;
    double hi;
  } fields[] = {
      {"util", &seg->util, 1},
      {"sm_activity", &seg->sm_activity, 1},
      {"sm_occupancy", &seg->sm_occupancy, 1},
      {"tensor_activity", &seg->tensor_activity, 1},
      {"dram_activity", &seg->dram_activity, 1},
      {"fp64_activity", &seg->fp64_activity, 1},
      {"fp32_activity", &seg->fp32_activity, 1},
      {"fp16_activity", &seg->fp16_activity, 1},
      {"pcie_tx_mbps", &seg->pcie_tx_mbps, 64000},
      {"pcie_rx_mbps", &seg->pcie_rx_mbps, 64000},
      {"nvlink_tx_mbps", &seg->nvlink_tx_mbps, 2e6},
      {"nvlink_rx_mbps", &seg->nvlink_rx_mbps, 2e6},
      {"period_s", &seg->period_s, kMaxTime},
      {"duty", &seg->duty, 1},
      {"low", &seg->low, 1},
      {"noise", &seg->noise, 0.5},
      {"burst_every_s", &seg->burst_every_s, kMaxTime},
      {"burst_s", &seg->burst_s, kMaxTime},
      {"burst_power", &seg->burst_power, 3},
  };
  for (auto& f : fields) GPUSCOPE_RETURN_IF_ERROR(r.Double(f.key, f.v, 0, f.hi));
  if (r.Has("memory_used_gib")) {
    double gib = 0;
    GPUSCOPE_RETURN_IF_ERROR(r.Double("memory_used_gib", &gib, 0, 1e4));
    seg->memory_used_gib = gib;
  }
  if (seg->kind == WorkloadKind::kCustom) {
    GPUSCOPE_RETURN_IF_ERROR(r.Bool("repeat", &seg->repeat));
    GPUSCOPE_RETURN_IF_ERROR(Points(r.Get("points"), seg));
    if (seg->points.empty()) return Error(node, "custom segment needs 'points'");
  }
  return r.Finish();
}

Status Parser::Points(const YAML::Node& node, Segment* seg) {
  if (!node.IsDefined() || node.IsNull()) return Status::Ok();
  if (!node.IsSequence()) return Error(node, "'points' must be a list of [t, factor]");
  for (const YAML::Node& p : node) {
    double t = 0, v = 0;
    if (!p.IsSequence() || p.size() != 2 || !YAML::convert<double>::decode(p[0], t) ||
        !YAML::convert<double>::decode(p[1], v)) {
      return Error(p, "each point must be [seconds, factor]");
    }
    if (v < 0 || v > 1) return Error(p, "point factor must be within [0, 1]");
    if (!seg->points.empty() && t <= seg->points.back().first) {
      return Error(p, "point times must increase");
    }
    seg->points.emplace_back(t, v);
  }
  return Status::Ok();
}

Status Parser::Process(const YAML::Node& node, ProcessSpec* p) {
  FieldReader r(src_, node, "process");
  GPUSCOPE_RETURN_IF_ERROR(r.CheckIsMap());
  if (!r.Has("pid")) return Error(node, "process needs a pid");
  GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("pid", &p->pid, 1, 4194304));
  p->name = "python3";
  GPUSCOPE_RETURN_IF_ERROR(r.String("name", &p->name));
  GPUSCOPE_RETURN_IF_ERROR(r.Double("used_memory_gib", &p->used_memory_gib, 0, 1e4));
  GPUSCOPE_RETURN_IF_ERROR(r.Double("start", &p->start, 0, kMaxTime));
  GPUSCOPE_RETURN_IF_ERROR(r.Double("end", &p->end, 0, kForever));
  unsigned gi = 0;
  if (r.Has("gpu_instance")) {
    GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("gpu_instance", &gi, 0, 6));
    p->gpu_instance = static_cast<int>(gi);
  }
  if (p->end <= p->start) return Error(node, "process end must be after start");
  GPUSCOPE_RETURN_IF_ERROR(r.Double("sm_share", &p->sm_share, 0, 1e6));
  std::string type = "compute";
  GPUSCOPE_RETURN_IF_ERROR(r.String("type", &type));
  if (type == "graphics") {
    p->compute = false, p->graphics = true;
  } else if (type == "compute+graphics") {
    p->graphics = true;
  } else if (type == "mps") {
    p->compute = false, p->mps = true;
  } else if (type != "compute") {
    return Error(node["type"],
                 "process type '" + type + "' is not compute, graphics, compute+graphics or mps");
  }
  return r.Finish();
}

// Real drivers place instances by size; these first ids mimic that.
unsigned FirstGpuInstanceId(unsigned slices) {
  switch (slices) {
    case 7:
      return 0;
    case 4:
    case 3:
      return 1;
    case 2:
      return 3;
    default:
      return 7;
  }
}

Status Parser::Mig(const YAML::Node& node, GpuSpec* gpu) {
  if (!node.IsDefined() || node.IsNull()) return Status::Ok();
  FieldReader r(src_, node, "mig");
  GPUSCOPE_RETURN_IF_ERROR(r.CheckIsMap());
  if (gpu->preset->mig_profiles.empty()) {
    return Error(node, std::string("model ") + gpu->preset->key + " does not support MIG");
  }
  gpu->mig_enabled = true;
  GPUSCOPE_RETURN_IF_ERROR(r.Bool("enabled", &gpu->mig_enabled));
  YAML::Node list = r.Get("instances");
  GPUSCOPE_RETURN_IF_ERROR(r.Finish());
  if (!list.IsDefined() || list.IsNull()) return Status::Ok();
  if (!list.IsSequence()) return Error(list, "'instances' must be a list of profile names");
  unsigned slices = 0;
  std::set<unsigned> used_ids;
  for (const YAML::Node& n : list) {
    const MigProfile* prof = n.IsScalar() ? FindMigProfile(*gpu->preset, n.Scalar()) : nullptr;
    if (!prof) return Error(n, "unknown MIG profile '" + n.Scalar() + "' for this model");
    unsigned same = 0;
    for (const MigInstanceSpec& m : gpu->mig_instances) same += m.profile == prof;
    slices += prof->slices;
    if (same + 1 > prof->max_count || slices > 7) {
      return Error(n, "MIG instances do not fit on one GPU");
    }
    unsigned id = FirstGpuInstanceId(prof->slices);
    while (used_ids.count(id)) ++id;
    used_ids.insert(id);
    gpu->mig_instances.push_back({prof, id});
  }
  if (!gpu->mig_enabled && !gpu->mig_instances.empty()) {
    return Error(node, "MIG instances need enabled: true");
  }
  return Status::Ok();
}

Status Parser::Faults(const YAML::Node& node, bool top, Scenario* sc, GpuSpec* gpu) {
  if (!node.IsDefined() || node.IsNull()) return Status::Ok();
  if (!node.IsSequence()) return Error(node, "'faults' must be a list");
  for (const YAML::Node& n : node) {
    FaultSpec f;
    unsigned index = 0;
    GPUSCOPE_RETURN_IF_ERROR(Fault(n, &f, top ? &index : nullptr));
    if (!top) {
      gpu->faults.push_back(f);
    } else if (index >= sc->gpus.size()) {
      return Error(n, "fault gpu " + std::to_string(index) + " out of range (" +
                          std::to_string(sc->gpus.size()) + " GPUs)");
    } else {
      sc->gpus[index].faults.push_back(f);
    }
  }
  return Status::Ok();
}

Status Parser::Fault(const YAML::Node& node, FaultSpec* f, unsigned* gpu_index) {
  FieldReader r(src_, node, "fault");
  GPUSCOPE_RETURN_IF_ERROR(r.CheckIsMap());
  std::string kind;
  GPUSCOPE_RETURN_IF_ERROR(r.String("kind", &kind));
  if (!ParseFaultKind(kind, &f->kind)) {
    return Error(r.Has("kind") ? r.Get("kind") : node, "unknown fault kind '" + kind + "'");
  }
  if (gpu_index) {
    if (!r.Has("gpu")) return Error(node, "a top-level fault needs 'gpu: <index>'");
    GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("gpu", gpu_index, 0, 63));
  }
  GPUSCOPE_RETURN_IF_ERROR(r.Double("at", &f->at, 0, kMaxTime));
  GPUSCOPE_RETURN_IF_ERROR(r.Double("until", &f->until, 0, kForever));
  if (f->until <= f->at) return Error(node, "fault 'until' must be after 'at'");
  GPUSCOPE_RETURN_IF_ERROR(FaultParams(r, f));
  return r.Finish();
}

Status Parser::FaultParams(FieldReader& r, FaultSpec* f) {
  switch (f->kind) {
    case FaultKind::kXid:
      if (!r.Has("xid")) return r.Error(r.Get("kind"), "xid fault needs 'xid'");
      return r.Unsigned("xid", &f->xid, 1, 1000);
    case FaultKind::kXidStorm:
      if (!r.Has("xid")) return r.Error(r.Get("kind"), "xid-storm fault needs 'xid'");
      GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("xid", &f->xid, 1, 1000));
      return r.Double("rate", &f->rate, 0.001, 100000);
    case FaultKind::kEccSbe:
    case FaultKind::kEccDbe:
      return r.Unsigned("count", &f->count, 1, 1000000);
    case FaultKind::kCoolingFailure:
      return r.Double("factor", &f->factor, 1, 100);
    case FaultKind::kPowerCap:
      if (!r.Has("watts")) return r.Error(r.Get("kind"), "power-cap fault needs 'watts'");
      return r.Double("watts", &f->watts, 1, 5000);
    case FaultKind::kPcieDowngrade:
      GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("gen", &f->gen, 1, 6));
      GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("width", &f->width, 1, 16));
      return r.Double("replay_rate", &f->replay_rate, 0, 1e6);
    case FaultKind::kNvlinkErrors:
    case FaultKind::kNvlinkDown: {
      if (f->kind == FaultKind::kNvlinkDown) f->link = 0;
      if (r.Has("link") && r.Get("link").IsScalar() && r.Get("link").Scalar() == "all") {
        f->link = -1;
      } else if (r.Has("link")) {
        unsigned link = 0;
        GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("link", &link, 0, 17));
        f->link = static_cast<int>(link);
      }
      if (f->kind == FaultKind::kNvlinkDown) return r.Double("train_s", &f->train_s, 0, 3600);
      GPUSCOPE_RETURN_IF_ERROR(r.Double("crc_rate", &f->crc_rate, 0, 1e6));
      GPUSCOPE_RETURN_IF_ERROR(r.Double("replay_rate", &f->replay_rate, 0, 1e6));
      return r.Double("recovery_rate", &f->recovery_rate, 0, 1e6);
    }
    case FaultKind::kMemoryLeak:
      return r.Double("rate_mib_s", &f->rate_mib_s, 0, 1e6);
    case FaultKind::kHang:
      GPUSCOPE_RETURN_IF_ERROR(r.String("function", &f->function));
      return r.Double("seconds", &f->seconds, 0, 3600);
    case FaultKind::kFail: {
      GPUSCOPE_RETURN_IF_ERROR(r.String("function", &f->function));
      unsigned code = 999;
      GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("code", &code, 1, 999));
      f->code = static_cast<int>(code);
      return Status::Ok();
    }
    case FaultKind::kRecoveryAction: {
      std::string action;
      GPUSCOPE_RETURN_IF_ERROR(r.String("action", &action));
      if (!ParseRecoveryAction(action, &f->action)) {
        return r.Error(r.Get("action"),
                       "action must be 0..4 or none, gpu-reset, node-reboot, "
                       "drain-p2p, drain-and-reset");
      }
      return Status::Ok();
    }
    case FaultKind::kFabric:
      return FabricFaultParams(r, &f->fabric);
    default:
      return Status::Ok();
  }
}

}  // namespace

Result<Scenario> ParseScenario(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  try {
    return Parser(source).Top(root);
  } catch (const YAML::Exception& e) {  // defensive: yaml-cpp throws on odd shapes
    return Status::InvalidArgument(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

Result<Scenario> LoadScenarioFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot open scenario file");
  std::stringstream text;
  text << in.rdbuf();
  return ParseScenario(text.str(), path);
}

unsigned MinorNumber(const GpuSpec& spec, unsigned index) {
  return spec.minor_number.value_or(index);
}

bool IsEarly535(const std::string& driver_version) {
  unsigned major = 0, minor = 0;
  if (std::sscanf(driver_version.c_str(), "%u.%u", &major, &minor) != 2) return false;
  return major == 535 && minor < 98;
}

}  // namespace gpuscope::sim

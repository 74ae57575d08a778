// Exported entry points: GPM (GPU performance monitoring, Hopper and newer).
// A sample records the GPU's cumulative activity integrals at the current
// scenario time; metrics are the averages between two samples.
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "exports_common.h"

// NVML leaves this type opaque; the simulator defines it.
struct nvmlGpmSample_st {
  bool filled = false;
  unsigned gpu = 0;
  int instance = -1;  // the GPU instance id of a MIG sample, -1 for the whole GPU
  unsigned links = 0;
  gpuscope::sim::GpmTotals totals;
};

using namespace gpuscope::sim;  // NOLINT: C entry points at global scope

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct SampleRegistry {
  std::mutex mu;
  std::set<nvmlGpmSample_t> live;
};

SampleRegistry& Samples() {
  static SampleRegistry* r = new SampleRegistry;  // never destroyed
  return *r;
}

bool Live(nvmlGpmSample_t s) {
  std::lock_guard lock(Samples().mu);
  return Samples().live.count(s) > 0;
}

struct MetricName {
  unsigned id;
  const char *short_name, *long_name, *unit;
};

constexpr MetricName kNames[] = {
    {1, "gr_util", "graphics utilization", "%"},
    {2, "sm_util", "SM utilization", "%"},
    {3, "sm_occupancy", "SM occupancy", "%"},
    {4, "integer_util", "integer pipe utilization", "%"},
    {5, "any_tensor_util", "any tensor pipe utilization", "%"},
    {6, "dfma_tensor_util", "DFMA tensor pipe utilization", "%"},
    {7, "hmma_tensor_util", "HMMA tensor pipe utilization", "%"},
    {9, "imma_tensor_util", "IMMA tensor pipe utilization", "%"},
    {10, "dram_bw_util", "DRAM bandwidth utilization", "%"},
    {11, "fp64_util", "FP64 pipe utilization", "%"},
    {12, "fp32_util", "FP32 pipe utilization", "%"},
    {13, "fp16_util", "FP16 pipe utilization", "%"},
    {20, "pcie_tx", "PCIe transmit throughput", "MiB/sec"},
    {21, "pcie_rx", "PCIe receive throughput", "MiB/sec"},
    {60, "nvlink_rx", "NVLink receive throughput, all links", "MiB/sec"},
    {61, "nvlink_tx", "NVLink transmit throughput, all links", "MiB/sec"},
};

double Sum(const std::array<double, kMaxLinks>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// The metric's value from the integrals' difference d over dt seconds.
bool MetricValue(unsigned id, const GpmTotals& a, const GpmTotals& b, unsigned links, double* out) {
  double dt = b.seconds - a.seconds;
  auto pct = [&](double GpmTotals::*field) {
    return dt > 0 ? (b.*field - a.*field) / dt * 100 : 0;
  };
  auto rate = [&](double bytes) { return dt > 0 ? bytes / dt / kMiB : 0; };
  switch (id) {
    case 1:
      *out = pct(&GpmTotals::graphics);
      return true;
    case 2:
      *out = pct(&GpmTotals::sm);
      return true;
    case 3:
      *out = pct(&GpmTotals::occupancy);
      return true;
    case 4:
      *out = pct(&GpmTotals::integer);
      return true;
    case 5:
      *out = pct(&GpmTotals::tensor);
      return true;
    case 6:
      *out = 0;
      return true;  // no FP64 tensor work in the workload model
    case 7:
      *out = pct(&GpmTotals::tensor) * 0.95;
      return true;
    case 9:
      *out = pct(&GpmTotals::tensor) * 0.05;
      return true;
    case 10:
      *out = pct(&GpmTotals::dram);
      return true;
    case 11:
      *out = pct(&GpmTotals::fp64);
      return true;
    case 12:
      *out = pct(&GpmTotals::fp32);
      return true;
    case 13:
      *out = pct(&GpmTotals::fp16);
      return true;
    case 20:
      *out = rate(b.pcie_tx - a.pcie_tx);
      return true;
    case 21:
      *out = rate(b.pcie_rx - a.pcie_rx);
      return true;
  }
  if (links == 0 || id < 60) return false;
  if (id == 60) return *out = rate(Sum(b.nvlink_rx) - Sum(a.nvlink_rx)), true;
  if (id == 61) return *out = rate(Sum(b.nvlink_tx) - Sum(a.nvlink_tx)), true;
  unsigned link = (id - 62) / 2;
  if (link >= links) return false;
  bool rx = (id - 62) % 2 == 0;
  *out = rx ? rate(b.nvlink_rx[link] - a.nvlink_rx[link])
            : rate(b.nvlink_tx[link] - a.nvlink_tx[link]);
  return true;
}

void FillInfo(nvmlGpmMetric_t& m) {
  m.metricInfo = {nullptr, nullptr, nullptr};
  for (const MetricName& n : kNames) {
    if (n.id != m.metricId) continue;
    m.metricInfo = {const_cast<char*>(n.short_name), const_cast<char*>(n.long_name),
                    const_cast<char*>(n.unit)};
  }
}

// A MIG instance's own activity integrals. An instance works while one of
// its processes is alive, at the GPU's workload levels; otherwise it idles.
// Its integrals grow by the GPU's growth since the last MIG sample of any
// caller, times whether it worked then, so they never jump or go back.
struct InstanceTotals {
  GpmTotals gpu;       // the GPU's integrals at the last MIG sample
  GpmTotals instance;  // the instance's own
};

struct InstanceRegistry {
  std::mutex mu;
  std::map<std::tuple<const Sim*, unsigned, unsigned>, InstanceTotals> totals;
};

InstanceRegistry& Instances() {
  static InstanceRegistry* r = new InstanceRegistry;  // never destroyed
  return *r;
}

bool InstanceWorks(const DeviceCall& c, int instance) {
  for (const ProcessSpec& p : c.sim->Processes(c.gpu)) {
    if (p.gpu_instance == instance && c.now >= p.start && c.now < p.end) return true;
  }
  return false;
}

void Accumulate(const GpmTotals& from, const GpmTotals& to, double share, GpmTotals& out) {
  out.seconds += to.seconds - from.seconds;
  for (double GpmTotals::*f :
       {&GpmTotals::graphics, &GpmTotals::sm, &GpmTotals::occupancy, &GpmTotals::integer,
        &GpmTotals::tensor, &GpmTotals::dram, &GpmTotals::fp64, &GpmTotals::fp32, &GpmTotals::fp16,
        &GpmTotals::pcie_tx, &GpmTotals::pcie_rx}) {
    out.*f += (to.*f - from.*f) * share;
  }
  for (size_t l = 0; l < kMaxLinks; ++l) {
    out.nvlink_tx[l] += (to.nvlink_tx[l] - from.nvlink_tx[l]) * share;
    out.nvlink_rx[l] += (to.nvlink_rx[l] - from.nvlink_rx[l]) * share;
  }
}

GpmTotals InstanceTotalsAt(const DeviceCall& c, int instance, unsigned gpu_instance_id) {
  std::lock_guard lock(Instances().mu);
  auto [it, fresh] = Instances().totals.try_emplace({c.sim.get(), c.gpu, gpu_instance_id});
  InstanceTotals& t = it->second;
  if (fresh || c.st.gpm.seconds < t.gpu.seconds) {  // first sample, or a reloaded scenario
    t = InstanceTotals{};
    t.gpu = c.st.gpm;
    t.instance.seconds = c.st.gpm.seconds;
    return t.instance;
  }
  Accumulate(t.gpu, c.st.gpm, InstanceWorks(c, instance) ? 1 : 0, t.instance);
  t.gpu = c.st.gpm;
  return t.instance;
}

nvmlReturn_t FillSample(const DeviceCall& c, nvmlGpmSample_t sample) {
  if (!c.preset().gpm) return rc::kNotSupported;
  if (!Live(sample)) return rc::kInvalidArgument;
  sample->filled = true;
  sample->gpu = c.gpu;
  sample->instance = -1;
  sample->links = c.preset().nvlink_links;
  sample->totals = c.st.gpm;
  return rc::kSuccess;
}

}  // namespace

SIM_EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t* support) {
  SIM_DEVICE_CALL(nvmlGpmQueryDeviceSupport, d);
  if (!support) return rc::kInvalidArgument;
  if (support->version != 1) return rc::kArgumentVersionMismatch;
  support->isSupportedDevice = c.preset().gpm ? 1 : 0;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlGpmSampleAlloc, &sim)) return r;
  if (!sample) return rc::kInvalidArgument;
  *sample = new nvmlGpmSample_st;
  std::lock_guard lock(Samples().mu);
  Samples().live.insert(*sample);
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  CountCall(kFn_nvmlGpmSampleFree);
  {
    std::lock_guard lock(Samples().mu);
    if (!Samples().live.erase(sample)) return rc::kInvalidArgument;
  }
  delete sample;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t sample) {
  SIM_DEVICE_CALL(nvmlGpmSampleGet, d);
  return FillSample(c, sample);
}

SIM_EXPORT nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t d, unsigned int gpu_instance_id,
                                            nvmlGpmSample_t sample) {
  SIM_DEVICE_CALL(nvmlGpmMigSampleGet, d);
  if (!c.spec().mig_enabled) return c.preset().gpm ? rc::kInvalidArgument : rc::kNotSupported;
  const auto& instances = c.spec().mig_instances;
  for (size_t i = 0; i < instances.size(); ++i) {
    if (instances[i].gpu_instance_id != gpu_instance_id) continue;
    if (nvmlReturn_t r = FillSample(c, sample)) return r;
    sample->totals = InstanceTotalsAt(c, static_cast<int>(i), gpu_instance_id);
    sample->instance = static_cast<int>(gpu_instance_id);
    return rc::kSuccess;
  }
  return rc::kNotFound;
}

SIM_EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* get) {
  std::shared_ptr<Sim> sim;
  if (nvmlReturn_t r = BeginCall(kFn_nvmlGpmMetricsGet, &sim)) return r;
  if (!get) return rc::kInvalidArgument;
  if (get->version != 1) return rc::kArgumentVersionMismatch;
  if (get->numMetrics > kNvmlGpmMetricsMax || !Live(get->sample1) || !Live(get->sample2)) {
    return rc::kInvalidArgument;
  }
  const nvmlGpmSample_st& a = *get->sample1;
  const nvmlGpmSample_st& b = *get->sample2;
  if (!a.filled || !b.filled || a.gpu != b.gpu || a.instance != b.instance) {
    return rc::kInvalidArgument;
  }
  for (unsigned i = 0; i < get->numMetrics; ++i) {
    nvmlGpmMetric_t& m = get->metrics[i];
    m.value = 0;
    bool ok = MetricValue(m.metricId, a.totals, b.totals, a.links, &m.value);
    m.nvmlReturn = ok ? rc::kSuccess : rc::kNotSupported;
    FillInfo(m);
  }
  return rc::kSuccess;
}

// The reader table: which reader fills each catalog Source, in call order,
// with compile-time proof that every Source a catalog row names has one.
#include <cstddef>
#include <iterator>

#include "collect/catalog_rows.h"
#include "collect/readers.h"

namespace gpuscope::collect {
namespace {

using Reader = void (*)(ReadContext&, GpmState&);

struct ReaderEntry {
  Source source;
  Reader read;
  // Filled off the device read path (named in the comment), with no reader.
  // A flag of its own: comparing a function's address with nullptr is not a
  // constant expression under -fsanitize, so the static_asserts cannot use it.
  bool elsewhere = false;
};

template <void (*F)(ReadContext&)>
void Plain(ReadContext& ctx, GpmState& /*gpm*/) {
  F(ctx);
}

void PcieThroughput(ReadContext& ctx, GpmState& gpm) { ReadPcieThroughput(ctx, gpm); }

// Call order matters where a reader looks at what an earlier one left: the
// field batch comes before the NVLink total and the fallbacks for refused ids,
// and GPM before nvmlDeviceGetPcieThroughput (GPM rates replace it).
constexpr ReaderEntry kReaders[] = {
    {Source::kFieldValue, Plain<ReadFieldValues>},
    {Source::kNvLinkThroughput, Plain<ReadNvLinkBandwidth>},
    {Source::kUtilization, Plain<ReadUtilization>},
    {Source::kEncoder, Plain<ReadEncoder>},
    {Source::kDecoder, Plain<ReadDecoder>},
    {Source::kMemoryInfo, Plain<ReadMemoryInfo>},
    {Source::kTemperature, Plain<ReadTemperature>},
    {Source::kPower, Plain<ReadPower>},
    {Source::kClocks, Plain<ReadClocks>},
    {Source::kClockEventReasons, Plain<ReadClockEventReasons>},
    {Source::kPerformanceState, Plain<ReadPerformanceState>},
    {Source::kGpm, ReadGpm},
    {Source::kPcieThroughput, PcieThroughput},
    {Source::kThresholds, Plain<ReadThresholds>},
    {Source::kPowerLimits, Plain<ReadPowerLimits>},
    {Source::kMaxClocks, Plain<ReadMaxClocks>},
    {Source::kFan, Plain<ReadFan>},
    {Source::kPcieLink, Plain<ReadPcieLink>},
    {Source::kBar1, Plain<ReadBar1>},
    {Source::kModes, Plain<ReadModes>},
    {Source::kGpuCount, Plain<ReadDeviceCount>},
    {Source::kInforom, Plain<ReadInforom>},
    {Source::kFabric, Plain<ReadFabric>},
    {Source::kVgpuLicense, Plain<ReadGuestLicense>},
    {Source::kVgpuScheduler, Plain<ReadVgpuScheduler>},
    {Source::kFieldValue, Plain<ReadFieldFallbacks>},
    {Source::kIntegral, nullptr, true},  // the sampler's integrals (integrals.cc)
    {Source::kPeak, nullptr, true},      // the sampler's trailing-window peaks
    {Source::kEvents, nullptr, true},    // the event thread (src/health/events.cc)
};
constexpr std::size_t kReaderCount = std::size(kReaders);

// First entry for `source` with a reader (or without one when `with_reader`
// is false); kReaderCount when none.
constexpr std::size_t Position(Source source, bool with_reader = true) {
  for (std::size_t i = 0; i < kReaderCount; ++i) {
    if (kReaders[i].source == source && !kReaders[i].elsewhere == with_reader) return i;
  }
  return kReaderCount;
}

constexpr bool EveryRowHasReader() {
  for (const MetricDef& def : catalog_rows::kRows) {
    if (Position(def.source) == kReaderCount && Position(def.source, false) == kReaderCount) {
      return false;
    }
  }
  return true;
}
static_assert(EveryRowHasReader(), "a catalog row names a Source that kReaders has no entry for");
static_assert(Position(Source::kFieldValue) < Position(Source::kNvLinkThroughput),
              "the NVLink total needs the field batch first");
static_assert(Position(Source::kModes) < Position(Source::kVgpuLicense),
              "the guest licence is read only in a guest: the virtualization mode first");
static_assert(Position(Source::kModes) < Position(Source::kVgpuScheduler),
              "the vGPU scheduler is read only on a host: the virtualization mode first");
static_assert(Position(Source::kGpm) < Position(Source::kPcieThroughput),
              "GPM PCIe rates replace nvmlDeviceGetPcieThroughput: GPM first");

}  // namespace

void ReadAll(ReadContext& ctx, GpmState& gpm, ProcessState& processes, VgpuState& vgpus,
             const ReadPlan& plan) {
  for (const ReaderEntry& entry : kReaders) {
    if (!entry.elsewhere) entry.read(ctx, gpm);
  }
  if (ctx.reading().tiers.slow) {
    ReadNvLinkLinks(ctx, plan.nvlink_links);
    if (plan.processes) ReadProcesses(ctx, processes);
    ReadVgpus(ctx, vgpus);
  }
}

}  // namespace gpuscope::collect

// Renders a Snapshot to the Prometheus text format 0.0.4 and to OpenMetrics
// 1.0.0, once per sampler cycle; scrapes then serve the shared bodies as they
// are (DESIGN principle 3).
//
// What is written, in this order:
//   1. DCGM families (metrics set dcgm or both): one per counters-file entry of
//      kind kMetric, in file order, with the file's name, type and help; values
//      converted with the catalog's dcgm Scale, integer fields as integers.
//      Labels: gpu, UUID, pci_bus_id, device (nvidia<index>, as dcgm-exporter),
//      modelName, [GPU_I_PROFILE, GPU_I_ID on MIG instances], Hostname (or the
//      configured name; absent with no_hostname or an empty hostname), then
//      the file's label fields in name order (each only when its value is
//      known), then dcgm-exporter's attribution labels container, namespace,
//      pod, hpc_job (each only when known); DCGM_FI_DEV_XID_ERRORS adds
//      err_code and err_msg.
//   2. Native families (metrics set native or both): gpuscope_gpu_info,
//      gpuscope_gpu_lost, gpuscope_gpu_last_sample_timestamp_seconds, then
//      every catalog native
//      family in catalog order, then gpuscope_nvlink_link_active,
//      gpuscope_nvlink_link_errors_total and gpuscope_xid_errors_total, then
//      with process_series > 0 the gpuscope_process_* families (their own
//      labels: the process's holder, pid, type, [process_name]; see
//      builtin_families.h).
//      Labels: gpu, uuid (the MIG UUID on a MIG instance), [gpu_instance,
//      mig_profile, compute_instance on MIG], then the attribution labels
//      namespace, pod, container, hpc_job, workload (each only when known),
//      then the row's fixed labels.
//   The holders come from Snapshot::attribution. A device with several holders (a shared GPU:
//   several pods, or one job per line of an HPC mapping file) gets every series once per holder,
//   each with that holder's labels, so series stay unique and every tenant is visible.
//   With attribution_labels kInfo the holders' labels leave every series above
//   (and the extra families' GPU prefixes): each device has one series per
//   row, and gpuscope_gpu_holder_info{gpu, uuid, [MIG labels], namespace, pod,
//   container, hpc_job, workload} = 1, one per holder, written after the DCGM
//   families and before the native ones (with any metric set), carries who
//   holds the device; queries join on uuid (docs/fleet.md). A new job then
//   adds one series per GPU, not one per series of the GPU.
//   3. The caller's extra Families, in the order given (serve adds the health
//      module's, among them gpuscope_collector_stale).
// Series of a family are ordered by GPU (index, then MIG instance), then by
// catalog row (fixed labels) or link/XID number; extra families' samples by
// GPU, then labels. A metric whose present bit is clear has no series; a
// family without series is omitted entirely. A lost GPU keeps only gpu_info,
// gpu_lost, last-sample time and XID counts; a stale one keeps its last values.
//
// Thread safety: a Renderer is not thread-safe (the sampler thread owns it);
// the bodies it returns are immutable and safe to share across threads. The
// Renderer reuses a body's buffer only after every reader has released it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "export/counters.h"
#include "export/family.h"
#include "export/profile.h"
#include "export/writer.h"
#include "gpuscope/attribution.h"
#include "gpuscope/snapshot.h"

namespace gpuscope::prom {

inline constexpr std::string_view kTextContentType = "text/plain; version=0.0.4; charset=utf-8";
inline constexpr std::string_view kOpenMetricsContentType =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

enum class MetricSet : uint8_t { kBoth, kDcgm, kNative };

// "both", "dcgm" or "native".
std::optional<MetricSet> ParseMetricSet(std::string_view text);

// Where attribution goes: kSeries, labels on every GPU series (dcgm-exporter's
// way); kInfo, one gpuscope_gpu_holder_info series per holder.
enum class AttributionLabels : uint8_t { kSeries, kInfo };

// "series" or "info".
std::optional<AttributionLabels> ParseAttributionLabels(std::string_view text);

struct RenderOptions {
  MetricSet metrics = MetricSet::kBoth;       // default both
  CounterSet counters = DefaultCounterSet();  // default: dcgm-exporter's default file
  bool no_hostname = false;                   // -n: no hostname label on DCGM series
  std::string hostname_label = "Hostname";    // "hostname" for dcgm-exporter >= 4.8 users
  Profile profile = Profile::kLean;           // export/profile.h
  bool nvlink_per_link = false;               // lean: every link's series, not only errored ones
  // Per-process series per device (gpuscope_process_*): the N processes using
  // the most memory, the rest summed into one pid="other" series; 0: none.
  unsigned process_series = 0;
  bool process_names = false;  // the process_name label (privacy: off)
  AttributionLabels attribution_labels = AttributionLabels::kSeries;  // default series
  // The catalog rows whose native series are rendered (default: kCatalog);
  // a test renders a table with a row of its own.
  std::span<const MetricDef> catalog = kCatalog;
};

struct Bodies {
  std::shared_ptr<const std::string> text;         // kTextContentType
  std::shared_ptr<const std::string> openmetrics;  // kOpenMetricsContentType
};

class Renderer {
 public:
  explicit Renderer(RenderOptions options);
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  // Both formats in one pass (series lines are written once and copied):
  // Observe, then write.
  Bodies Render(const Snapshot& snapshot, std::span<const Family> extra = {});
  // One format only: Observe, then Write.
  std::shared_ptr<const std::string> Render(const Snapshot& snapshot, std::span<const Family> extra,
                                            Format format);

  // The lean profile's memory: a sparse series is shown from the first cycle
  // its value was non-zero (a counter: grew) on. Serve observes every cycle and
  // writes a body only when a scrape asks for one, so what a body shows does not
  // depend on which cycles were scraped.
  void Observe(const Snapshot& snapshot, std::span<const Family> extra = {});
  // One format, as observed so far (no Observe).
  std::shared_ptr<const std::string> Write(const Snapshot& snapshot, std::span<const Family> extra,
                                           Format format);

  const RenderOptions& options() const { return options_; }

  struct Sparse;  // lean profile's memory of shown series (render_internal.h)

 private:
  struct Plan;
  struct Cache;
  class Writer;

  void RenderAll(const Snapshot& snapshot, std::span<const Family> extra, Writer& writer);
  void RenderDcgm(const Snapshot& snapshot, Writer& writer);
  void RenderNative(const Snapshot& snapshot, Writer& writer);
  void RenderState(const Snapshot& snapshot, Writer& writer);
  void RenderHolders(Writer& writer);
  void RenderNvLink(const Snapshot& snapshot, Writer& writer);
  void RenderXid(const Snapshot& snapshot, Writer& writer);
  void RenderFabric(const Snapshot& snapshot, Writer& writer);
  void RenderProcesses(const Snapshot& snapshot, Writer& writer);
  void RenderHolderShares(const Snapshot& snapshot, Writer& writer);
  void RenderVgpus(const Snapshot& snapshot, Writer& writer);
  void RenderVgpusDcgm(const Snapshot& snapshot, Writer& writer);
  void RenderExtra(const Family& family, Writer& writer);
  void SortExtra(const Family& family, std::vector<uint32_t>& order) const;
  bool Wants(LabelBase base) const;
  bool Lean() const { return options_.profile == Profile::kLean; }
  static std::string ExtraKey(const Family& family, const Sample& sample);
  std::shared_ptr<std::string> Buffer(Format format);

  RenderOptions options_;
  std::unique_ptr<Plan> plan_;      // families and headers, fixed per options
  std::unique_ptr<Cache> cache_;    // per-GPU label prefixes, per inventory and attribution
  std::unique_ptr<Sparse> sparse_;  // lean profile: sparse series shown so far
  // Bodies handed out earlier, reused once no reader holds them: a cycle then
  // neither allocates nor faults in fresh pages.
  std::array<std::vector<std::shared_ptr<std::string>>, 2> pools_;
  std::array<std::size_t, 2> last_size_{};
};

}  // namespace gpuscope::prom

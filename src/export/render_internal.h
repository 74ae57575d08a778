// Internals of the Renderer shared by its .cc files: the family plan (fixed
// per options), the per-inventory label cache and the two-format writer.
// Not a public interface. Thread safety: as Renderer (single owner).
#pragma once

#include <array>
#include <bitset>
#include <string>
#include <unordered_set>
#include <vector>

#include "export/builtin_families.h"
#include "export/render.h"

namespace gpuscope::prom {

// A family whose HELP/TYPE lines are rendered once, per format.
struct PlannedFamily {
  struct Row {
    Metric metric{};
    Scale scale = Scale::kIdentity;
    bool integer = false;
    std::string_view fixed_labels;  // already escaped: pipe="tensor"
    bool sparse = false;            // lean profile: only once non-zero (counters: grown)
    bool no_gpm = false;            // lean profile: only without GPM DRAM activity
    bool xid_labels = false;        // DCGM_FI_DEV_XID_ERRORS: err_code, err_msg
  };
  std::string name;
  FamilyType type = FamilyType::kGauge;
  std::array<std::string, 2> header;  // indexed by Format
  std::vector<Row> rows;
};

struct Renderer::Plan {
  std::vector<PlannedFamily> dcgm;    // counters-file order
  std::vector<PlannedFamily> native;  // catalog order
  std::vector<const CounterEntry*> label_fields;
  std::array<PlannedFamily, kLeadingBuiltins.size()> leading;
  std::array<PlannedFamily, kTrailingBuiltins.size()> trailing;
  std::array<PlannedFamily, kProcessBuiltins.size()> processes;
  PlannedFamily holder_info;  // attribution_labels kInfo
  PlannedFamily holder_share;
  std::array<PlannedFamily, kVgpuBuiltins.size()> vgpus;
  PlannedFamily vgpu_memory_usage;  // DCGM_FI_DEV_VGPU_MEMORY_USAGE
};

// What the lean profile has shown of its sparse series, per slot of
// Snapshot::gpus; kept across cache rebuilds (an attribution refresh must not
// hide a series that was shown). Counters run since the driver loaded, so a
// sparse counter shows once it has grown past its first value seen here, not
// once it is non-zero: a board's lifetime history alone adds no series.
struct Renderer::Sparse {
  struct Rows {
    std::bitset<kMetricCount> shown, started;
    std::array<double, kMetricCount> start{};  // counters: first value seen
  };
  struct Links {
    uint64_t shown = 0, started = 0;   // by link number (< 64)
    std::array<uint64_t, 64> start{};  // first error total seen
  };
  std::vector<Rows> rows;                 // catalog rows
  std::vector<Links> links;               // NVLink links
  std::unordered_set<std::string> extra;  // family, slot, labels

  void Fit(std::size_t slots) {
    if (rows.size() < slots) rows.resize(slots), links.resize(slots);
  }
};

// Label prefixes per slot of Snapshot::gpus, one per holder of the device (or
// one without attribution labels when it has none or attribution_labels is
// kInfo), rebuilt when the
// inventory, the driver facts and hostname, or the attribution change:
// `{gpu="0",UUID="...",...` without the closing brace, so a series appends its
// own labels and "} value".
struct Renderer::Cache {
  using Prefixes = std::vector<std::vector<std::string>>;  // slot -> one per holder
  bool valid = false;
  SystemInfo system;
  std::vector<GpuInfo> gpus;
  AttributionPtr attribution;
  Prefixes dcgm, native;
  std::vector<std::string> device;        // slot -> the native prefix without holder labels
  std::vector<std::string> dcgm_device;   // slot -> the DCGM prefix without holder labels
  std::vector<std::string> info;          // every gpuscope_gpu_info line of a slot
  std::vector<std::string> holder_lines;  // kInfo: every gpuscope_gpu_holder_info line of a slot
  std::vector<uint32_t> order;            // slots by GPU index, then MIG instance
  std::vector<uint32_t> rank;             // slot -> position in order
  std::vector<uint32_t> scratch;          // reused by sorts

  bool Matches(const Snapshot& snapshot, const AttributionPtr& attribution) const;
  void Rebuild(const Snapshot& snapshot, const AttributionPtr& attribution,
               const RenderOptions& options, const Plan& plan);
};

// Writes families to the text body, the OpenMetrics body or both. Series go
// to one body and are copied to the other when the family ends, so each line
// is formatted once.
class Renderer::Writer {
 public:
  Writer(std::string* text, std::string* openmetrics)
      : text_(text), om_(openmetrics), out_(text ? text : openmetrics) {}

  void Begin(const PlannedFamily& family) {
    Mark();
    if (text_) text_->append(family.header[0]);
    if (om_) om_->append(family.header[1]);
    series_start_ = out_->size();
  }
  void Begin(std::string_view name, std::string_view help, FamilyType type) {
    Mark();
    if (text_) AppendHeader(name, help, type, Format::kText, text_);
    if (om_) AppendHeader(name, help, type, Format::kOpenMetrics, om_);
    series_start_ = out_->size();
  }
  std::string& out() { return *out_; }
  // Drops the headers when no series was written.
  void End() {
    if (out_->size() == series_start_) {
      if (text_) text_->resize(text_mark_);
      if (om_) om_->resize(om_mark_);
    } else if (text_ && om_) {
      om_->append(*text_, series_start_, text_->size() - series_start_);
    }
  }

 private:
  void Mark() {
    text_mark_ = text_ ? text_->size() : 0;
    om_mark_ = om_ ? om_->size() : 0;
  }
  std::string* text_;
  std::string* om_;
  std::string* out_;
  std::size_t text_mark_ = 0, om_mark_ = 0, series_start_ = 0;
};

// ",namespace=...,workload=..." for the holder's known labels, native order.
std::string NativeHolderLabels(const Holder& h);

// Builds a PlannedFamily's headers.
PlannedFamily PlanFamily(std::string_view name, std::string_view help, FamilyType type);

}  // namespace gpuscope::prom

// Counters files as dcgm-exporter reads them (issue 13): Go's encoding/csv
// with Comment '#', then its counters rules. Each case says what dcgm-exporter
// does with the same text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "export/counters.h"
#include "test_need.h"

namespace gpuscope::prom {
namespace {

using test_support::ReferenceDataPath;

std::string ErrorOf(std::string_view text) {
  Result<CounterSet> set = ParseCounters(text, "c.csv");
  EXPECT_FALSE(set.ok()) << text;
  return set.ok() ? "" : set.status().message();
}

CounterSet Parsed(std::string_view text) {
  Result<CounterSet> set = ParseCounters(text, "c.csv");
  EXPECT_TRUE(set.ok()) << (set.ok() ? "" : set.status().message());
  return set.ok() ? std::move(set).value() : CounterSet{};
}

bool Warned(const CounterSet& set, std::string_view needle) {
  for (const std::string& w : set.warnings) {
    if (w.find(needle) != std::string::npos) return true;
  }
  return false;
}

// Every counters file dcgm-exporter ships that the reference data holds (the
// two of etc/ at least) parses, and each record of it either serves a family,
// becomes a label, or is skipped with a warning naming its line: nothing is
// lost silently.
TEST(CountersCompat, EveryShippedFileParses) {
  GPUSCOPE_NEED_REFERENCE_DATA("default-counters.csv");
  GPUSCOPE_NEED_REFERENCE_DATA("dcp-metrics-included.csv");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(ReferenceDataPath(""))) {
    if (entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  ASSERT_GE(files.size(), 2u);
  for (const std::filesystem::path& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    Result<CounterSet> set = ParseCounters(text.str(), path.filename().string());
    ASSERT_TRUE(set.ok()) << path << ": " << set.status().message();
    // Records: lines whose first byte is not '#' and that are not empty.
    std::size_t records = 0;
    std::istringstream lines(text.str());
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty() && line != "\r" && line[0] != '#') ++records;
    }
    EXPECT_EQ(set->entries.size() + set->warnings.size(), records) << path;
  }
}

// Canonical's hardware-observer lists DCGM_FI_PROF_PCIE_TX_BYTES twice, as a
// counter and later as a gauge. dcgm-exporter keeps both records, but only the
// first one ever matches the field, so it serves one family typed counter:
// gpuscope does the same and says so.
TEST(CountersCompat, DuplicatesKeepTheFirstEntryWithAWarning) {
  const CounterSet set = Parsed(
      "###############\n# [ WARNING ]\n\n\n"
      "DCGM_FI_PROF_PCIE_TX_BYTES,      counter, Total bytes transmitted through PCIe TX.\n"
      "DCGM_FI_DEV_GPU_UTIL,      gauge, GPU utilization (in %).\n"
      "\n# DCP metrics\n"
      "DCGM_FI_PROF_PCIE_TX_BYTES,      gauge, The rate of data transmitted over PCIe.\n");
  ASSERT_EQ(set.entries.size(), 2u);
  const CounterEntry* tx = set.Find("DCGM_FI_PROF_PCIE_TX_BYTES");
  ASSERT_NE(tx, nullptr);
  EXPECT_EQ(tx->type, CounterType::kCounter);
  EXPECT_EQ(tx->line, 5);
  ASSERT_EQ(set.warnings.size(), 1u);
  EXPECT_EQ(set.warnings[0],
            "c.csv:9: DCGM_FI_PROF_PCIE_TX_BYTES is listed again (first on line 5); "
            "dcgm-exporter accepts that, gpuscope serves the first entry only");
}

// Real DCGM fields NVML cannot give are skipped with a warning (dcgm-exporter
// would serve them from DCGM); the fields of this issue are served; a name no
// DCGM knows fails as in dcgm-exporter ("could not find DCGM field").
TEST(CountersCompat, UnknownFieldsWarnOrFail) {
  const CounterSet set = Parsed(
      "DCGM_FI_DEV_VGPU_UTILIZATIONS,   gauge, vGPUs utilization\n"
      "DCGM_FI_DEV_CC_MODE, gauge, CC\n"
      "DCGM_FI_DEV_BAR1_USED,  gauge, Used BAR1 (in MB)\n"
      "DCGM_FI_DEV_FB_USED_PERCENT, gauge, used\n"
      "DCGM_FI_DEV_COUNT, gauge, GPUs\n"
      "DCGM_FI_DEV_COMPUTE_MODE, gauge, m\nDCGM_FI_DEV_PERSISTENCE_MODE, gauge, m\n"
      "DCGM_FI_DEV_ECC_CURRENT, gauge, m\nDCGM_FI_DEV_VIRTUAL_MODE, gauge, m\n"
      "DCGM_FI_DEV_CLOCKS_EVENT_REASONS, gauge, bits\n"
      "DCGM_FI_DEV_INFOROM_CONFIG_VALID, gauge, v\n"
      "DCGM_FI_DEV_INFOROM_IMAGE_VER, label, image\n"
      "DCGM_FI_DEV_CUDA_COMPUTE_CAPABILITY, label, cc\n");
  EXPECT_EQ(set.entries.size(), 11u);
  EXPECT_EQ(set.warnings.size(), 2u);
  EXPECT_TRUE(Warned(set, "c.csv:1: DCGM_FI_DEV_VGPU_UTILIZATIONS is not available without DCGM"));
  EXPECT_TRUE(Warned(set, "c.csv:2: DCGM_FI_DEV_CC_MODE"));
  const CounterEntry* reasons = set.Find("DCGM_FI_DEV_CLOCKS_EVENT_REASONS");
  ASSERT_NE(reasons, nullptr);
  EXPECT_EQ(reasons->metric, Metric::kClockReasons);  // field 112 under its current name
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_NOT_A_FIELD, gauge, x\n"),
            "c.csv:1: DCGM_FI_DEV_NOT_A_FIELD is not a DCGM field");
}

// dcgm-exporter 1.x names (etc/1.x-compatibility-metrics.csv) resolve through
// go-dcgm's legacy table; the family keeps the file's name.
TEST(CountersCompat, LegacyNamesKeepTheirName) {
  const CounterSet set = Parsed(
      "dcgm_gpu_temp,    gauge, GPU temperature (in C).\n"
      "dcgm_pcie_tx_throughput,  counter, PCIe TX (in KB) via NVML.\n"
      "dcgm_xid_errors,            gauge, Value of the last XID error encountered.\n");
  ASSERT_EQ(set.entries.size(), 2u);
  EXPECT_EQ(set.entries[0].name, "dcgm_gpu_temp");
  EXPECT_EQ(set.entries[0].metric, Metric::kGpuTemp);
  EXPECT_EQ(set.entries[1].metric, Metric::kXidLast);
  EXPECT_TRUE(Warned(set, "c.csv:2: dcgm_pcie_tx_throughput is not available without DCGM"));
}

// Go's reader: only spaces are trimmed (by dcgm-exporter), '#' comments start
// in the first column, CR LF is LF, quoted fields may hold commas, quotes and
// newlines but must start right after the comma.
TEST(CountersCompat, GoCsvRecordRules) {
  const CounterSet set = Parsed(
      "# comment\r\n\r\n"
      "  DCGM_FI_DEV_GPU_UTIL ,  gauge ,  GPU utilization (in %).  \r\n"
      "DCGM_FI_DEV_FB_USED,gauge,\"Used, in MiB \"\"fb\"\"\"\n"
      "DCGM_FI_DEV_GPU_TEMP, gauge,\n");
  ASSERT_EQ(set.entries.size(), 3u);
  EXPECT_EQ(set.entries[0].help, "GPU utilization (in %).");
  EXPECT_EQ(set.entries[0].line, 3);
  EXPECT_EQ(set.entries[1].help, "Used, in MiB \"fb\"");
  EXPECT_EQ(set.entries[2].line, 5);
  EXPECT_EQ(set.entries[2].help, "GPU die temperature.");  // empty help: the catalog's

  // A quoted field may span lines (the next record's line counts them), but a
  // newline in a help text is refused: the one rule stricter than dcgm-exporter's.
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_FB_USED,gauge,\"two\nlines\"\nDCGM_FI_DEV_GPU_UTIL,gauge\n"),
            "c.csv:1: help text of DCGM_FI_DEV_FB_USED has a control character (byte 4)");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_GPU_UTIL, gauge, x\n  # indented comment\n"),
            "c.csv:2: expected 3 fields (FIELD, type, help), got 1 (a comment starts with # in "
            "the first column, as dcgm-exporter requires)");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_GPU_UTIL, gauge, x\n   \n"),
            "c.csv:2: expected 3 fields (FIELD, type, help), got 1 (a line of spaces is a record "
            "to dcgm-exporter; remove it)");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_GPU_UTIL, gauge, \"x, y\"\n"),
            "c.csv:1: a quote inside a field that does not start with one (quote the whole "
            "field, with no space before the opening quote)");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_GPU_UTIL,gauge,\"x\" y\n"),
            "c.csv:1: text after the closing quote of a quoted field");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_GPU_UTIL,gauge,\"x\n"),
            "c.csv:1: a quoted field is not closed before the end of the file");
  // A tab is not trimmed: "\tgauge" is no type.
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_GPU_UTIL,\tgauge, x\n"),
            "c.csv:1: unknown type \"\\tgauge\" for DCGM_FI_DEV_GPU_UTIL (want gauge, counter or "
            "label, in lower case)");
}

// Types: lower case only; histogram and summary accepted (dcgm-exporter then
// writes a family Prometheus cannot read) and served as gauges; DCGM_EXP_*
// families take any type, as dcgm-exporter never checks theirs.
TEST(CountersCompat, TypesAsDcgmExporterChecksThem) {
  EXPECT_NE(ErrorOf("DCGM_FI_DEV_GPU_UTIL, Gauge, x\n").find("unknown type \"Gauge\""),
            std::string::npos);
  const CounterSet set = Parsed(
      "DCGM_FI_DEV_GPU_UTIL, histogram, x\n"
      "DCGM_EXP_XID_ERRORS_COUNT, whatever, XIDs\n"
      "DCGM_FI_DEV_GPU_TEMP, label, temperature as a label\n"
      "DCGM_FI_DRIVER_VERSION, gauge, driver as a gauge\n");
  ASSERT_EQ(set.entries.size(), 2u);
  EXPECT_EQ(set.entries[0].type, CounterType::kGauge);
  EXPECT_EQ(set.entries[1].kind, CounterKind::kExporter);
  EXPECT_TRUE(Warned(set, "c.csv:1: DCGM_FI_DEV_GPU_UTIL: type histogram is accepted"));
  EXPECT_TRUE(Warned(set, "c.csv:3: DCGM_FI_DEV_GPU_TEMP is a numeric field declared label"));
  EXPECT_TRUE(Warned(set, "c.csv:4: DCGM_FI_DRIVER_VERSION is a string field declared gauge"));
}

}  // namespace
}  // namespace gpuscope::prom

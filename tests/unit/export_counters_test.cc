#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "export/counters.h"
#include "test_need.h"

namespace gpuscope::prom {
namespace {

using test_support::ReferenceDataPath;

std::string ReadReference(const std::string& name) {
  std::ifstream in(ReferenceDataPath(name), std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ErrorOf(std::string_view text) {
  Result<CounterSet> set = ParseCounters(text, "c.csv");
  EXPECT_FALSE(set.ok()) << text;
  return set.ok() ? "" : set.status().message();
}

TEST(Counters, DefaultFileParsesUnchanged) {
  GPUSCOPE_NEED_REFERENCE_DATA("default-counters.csv");
  std::string text = ReadReference("default-counters.csv");
  ASSERT_FALSE(text.empty()) << "reference data missing";
  Result<CounterSet> set = ParseCounters(text, "default-counters.csv");
  ASSERT_TRUE(set.ok()) << set.status().message();
  // 26 active records: 25 served metrics (VGPU_LICENSE_STATUS: in a vGPU guest), 1 label;
  // nothing to warn about at start-up.
  EXPECT_EQ(set->entries.size(), 26u);
  EXPECT_TRUE(set->warnings.empty()) << set->warnings.front();

  const CounterEntry& first = set->entries.front();
  EXPECT_EQ(first.name, "DCGM_FI_DEV_SM_CLOCK");
  EXPECT_EQ(first.type, CounterType::kGauge);
  EXPECT_EQ(first.help, "SM clock frequency (in MHz).");
  EXPECT_EQ(first.metric, Metric::kSmClock);
  EXPECT_EQ(first.line, 6);

  const CounterEntry* dec = set->Find("DCGM_FI_DEV_DEC_UTIL");  // "DEC_UTIL ," in the file
  ASSERT_NE(dec, nullptr);
  EXPECT_EQ(dec->metric, Metric::kDecoderUtil);

  const CounterEntry* energy = set->Find("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
  ASSERT_NE(energy, nullptr);
  EXPECT_EQ(energy->type, CounterType::kCounter);

  const CounterEntry* driver = set->Find("DCGM_FI_DRIVER_VERSION");
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->kind, CounterKind::kLabel);
  EXPECT_EQ(driver->label_field, LabelField::kDriverVersion);
  const CounterEntry* license = set->Find("DCGM_FI_DEV_VGPU_LICENSE_STATUS");
  ASSERT_NE(license, nullptr);
  EXPECT_EQ(license->metric, Metric::kVgpuLicensed);
  EXPECT_EQ(set->Find("DCGM_FI_DEV_POWER_VIOLATION"), nullptr);  // commented out

  std::bitset<kMetricCount> metrics = set->Metrics();
  EXPECT_EQ(metrics.count(), 25u);
  EXPECT_TRUE(metrics.test(Index(Metric::kPcieTxBytesRate)));
  EXPECT_FALSE(metrics.test(Index(Metric::kPowerViolation)));
}

TEST(Counters, DcpFileParsesUnchanged) {
  GPUSCOPE_NEED_REFERENCE_DATA("dcp-metrics-included.csv");
  std::string text = ReadReference("dcp-metrics-included.csv");
  ASSERT_FALSE(text.empty());
  Result<CounterSet> set = ParseCounters(text, "dcp-metrics-included.csv");
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->entries.size(), 26u);
  EXPECT_NE(set->Find("DCGM_FI_PROF_DRAM_ACTIVE"), nullptr);
}

TEST(Counters, EmbeddedDefaultIsTheReferenceFile) {
  GPUSCOPE_NEED_REFERENCE_DATA("default-counters.csv");
  EXPECT_EQ(kDefaultCountersCsv, ReadReference("default-counters.csv"));
  CounterSet set = DefaultCounterSet();
  EXPECT_EQ(set.entries.size(), 26u);
  EXPECT_EQ(set.source, "default-counters.csv");
}

TEST(Counters, LabelFieldsKeepFileOrder) {
  Result<CounterSet> set = ParseCounters(
      "DCGM_FI_DEV_SERIAL, label, Serial\n"
      "DCGM_FI_DRIVER_VERSION, label, Driver\n"
      "DCGM_FI_DEV_OEM_INFOROM_VER, label, OEM inforom version\n",
      "c.csv");
  ASSERT_TRUE(set.ok()) << set.status().message();
  ASSERT_EQ(set->entries.size(), 3u);
  EXPECT_EQ(set->entries[0].label_field, LabelField::kSerial);
  EXPECT_EQ(set->entries[1].label_field, LabelField::kDriverVersion);
  EXPECT_EQ(set->entries[2].label_field, LabelField::kInforomOem);
  EXPECT_TRUE(set->warnings.empty());
}

TEST(Counters, ExporterFieldsKeptForTheirModules) {
  Result<CounterSet> set = ParseCounters(
      "DCGM_EXP_XID_ERRORS_COUNT, counter, XIDs\nDCGM_EXP_P2P_STATUS, counter, P2P\n", "c.csv");
  ASSERT_TRUE(set.ok()) << set.status().message();
  ASSERT_EQ(set->entries.size(), 1u);
  EXPECT_EQ(set->entries[0].kind, CounterKind::kExporter);
  EXPECT_EQ(set->warnings.size(), 1u);
  EXPECT_TRUE(set->Metrics().none());
}

TEST(Counters, KnownUnsupportedNamesWarnOnce) {
  Result<CounterSet> set = ParseCounters(
      "DCGM_FI_DEV_NVLINK_BANDWIDTH_L0, counter, x\n"
      "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L17, counter, x\n"
      "DCGM_FI_PROF_NVLINK_L3_TX_BYTES, counter, x\n"
      "DCGM_FI_DEV_ECC_SBE_VOL_L1, counter, x\n",
      "c.csv");
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_TRUE(set->entries.empty());
  EXPECT_EQ(set->warnings.size(), 4u);
  EXPECT_EQ(set->warnings[2],
            "c.csv:3: DCGM_FI_PROF_NVLINK_L3_TX_BYTES is not available without "
            "DCGM; skipped");
}

TEST(Counters, ErrorsNameFileAndLine) {
  EXPECT_EQ(ErrorOf("# x\nDCGM_FI_DEV_GPU_UTIL, gauge\n"),
            "c.csv:2: expected 3 fields (FIELD, type, help), got 2");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_GPU_UTIL, gauge, a, b\n"),
            "c.csv:1: expected 3 fields (FIELD, type, help), got 4");
  EXPECT_EQ(ErrorOf("\nDCGM_FI_DEV_GPU_UTIL, gauges, x\n"),
            "c.csv:2: unknown type \"gauges\" for DCGM_FI_DEV_GPU_UTIL (want gauge, counter or "
            "label, in lower case)");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_GPU_UTILL, gauge, x\n"),
            "c.csv:1: DCGM_FI_DEV_GPU_UTILL is not a DCGM field (did you mean "
            "DCGM_FI_DEV_GPU_UTIL?)");
  EXPECT_EQ(ErrorOf("node_load1, gauge, x\n"), "c.csv:1: node_load1 is not a DCGM field");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_NVLINK_BANDWIDTH_L18, counter, x\n"),
            "c.csv:1: DCGM_FI_DEV_NVLINK_BANDWIDTH_L18 is not a DCGM field");
  EXPECT_EQ(ErrorOf(", gauge, x\n"), "c.csv:1: empty field name");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_GPU_UTIL, gauge, \"x\n"),
            "c.csv:1: a quote inside a field that does not start with one (quote the whole "
            "field, with no space before the opening quote)");
}

// Text that reaches the exposition or an error message is checked (issue 15):
// help that is not UTF-8 or holds control characters is refused, echoed input
// is cut short and escaped, and an over-long name is refused before the
// did-you-mean search (a 1 MB name took seconds).
TEST(Counters, RefusesBadTextAndEchoesItShort) {
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_GPU_UTIL, gauge, caf\xe9\n"),
            "c.csv:1: help text of DCGM_FI_DEV_GPU_UTIL is not valid UTF-8 (byte 4)");
  EXPECT_EQ(ErrorOf(std::string("DCGM_FI_DEV_GPU_UTIL, gauge, a\0b\n", 33)),
            "c.csv:1: help text of DCGM_FI_DEV_GPU_UTIL has a control character (byte 2)");
  EXPECT_EQ(ErrorOf("DCGM_\x01\xff, gauge, x\n"),
            "c.csv:1: field name \"DCGM_\\x01\\xff\" has characters outside [A-Za-z0-9_]");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_GPU_UTIL, \x1b[2Jgauge, x\n"),
            "c.csv:1: unknown type \"\\x1b[2Jgauge\" for DCGM_FI_DEV_GPU_UTIL (want gauge, "
            "counter or label, in lower case)");
  const std::string huge(1 << 20, 'A');
  const std::string error = ErrorOf(huge + ", gauge, x\n");
  EXPECT_EQ(error, "c.csv:1: field name \"" + std::string(64, 'A') +
                       "...\" is longer than 128 characters");
  EXPECT_NE(ErrorOf(std::string(129, 'D') + ", gauge, x\n").find("longer than 128"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(128, 'D') + ", gauge, x\n").find("is not a DCGM field"),
            std::string::npos);
  EXPECT_TRUE(ParseCounters("DCGM_FI_DEV_GPU_UTIL, gauge, caf\xc3\xa9\ttab\n", "c.csv").ok());
}

TEST(Counters, AFileThatListsNothingIsAnError) {
  EXPECT_EQ(ErrorOf(""), "c.csv: lists no fields (FIELD, type, help)");
  EXPECT_EQ(ErrorOf("# DCGM_FI_DEV_GPU_UTIL, gauge, x\n\n"),
            "c.csv: lists no fields (FIELD, type, help)");
}

TEST(Counters, LoadFileFailsClosed) {
  const std::string dir = ::testing::TempDir();
  Result<CounterSet> directory = LoadCountersFile(dir);
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("is a directory"), std::string::npos);
  const std::string empty = dir + "/counters_empty.csv";
  std::ofstream(empty).close();
  Result<CounterSet> set = LoadCountersFile(empty);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(), "counters file " + empty + ": is empty");
}

TEST(Counters, LoadFileReportsMissingFile) {
  Result<CounterSet> set = LoadCountersFile("/nonexistent/counters.csv");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), Status::Code::kNotFound);
  EXPECT_NE(set.status().message().find("/nonexistent/counters.csv"), std::string::npos);
}

TEST(Counters, LoadFileReadsTheReferenceFile) {
  GPUSCOPE_NEED_REFERENCE_DATA("default-counters.csv");
  Result<CounterSet> set = LoadCountersFile(ReferenceDataPath("default-counters.csv"));
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->entries.size(), 26u);
}

}  // namespace
}  // namespace gpuscope::prom

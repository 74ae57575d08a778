#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <set>

#include "cli/query_fields.h"
#include "cli/query_format.h"
#include "cli_test_snapshot.h"

namespace gpuscope::cli {
namespace {

// Timestamps are local time, as nvidia-smi prints them; pin the zone.
class QueryFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    saved_tz_ = tz ? std::optional<std::string>(tz) : std::nullopt;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (saved_tz_) {
      setenv("TZ", saved_tz_->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }

  std::string Csv(const std::string& fields, CsvOptions options = {},
                  std::vector<std::size_t> gpus = {0, 1}) {
    Result<std::vector<const GpuField*>> resolved = ResolveGpuFields(fields);
    EXPECT_TRUE(resolved.ok()) << resolved.status().message();
    if (!resolved.ok()) return "";
    return FormatGpuHeader(*resolved, options) + FormatGpuRows(snapshot_, gpus, *resolved, options);
  }

  Snapshot snapshot_ = testing::TwoGpuSnapshot();
  std::optional<std::string> saved_tz_;
};

TEST_F(QueryFormatTest, RunbookQueryMatchesNvidiaSmiBytes) {
  EXPECT_EQ(Csv("utilization.gpu,memory.used,temperature.gpu,power.draw"),
            "utilization.gpu [%], memory.used [MiB], temperature.gpu, power.draw [W]\n"
            "45 %, 1234 MiB, 56, 123.45 W\n"
            "100 %, 1234 MiB, [N/A], [N/A]\n");
}

TEST_F(QueryFormatTest, NoUnitsKeepsUnitsInHeaderOnly) {
  EXPECT_EQ(Csv("utilization.gpu,memory.used,power.draw", {true, false}),
            "utilization.gpu [%], memory.used [MiB], power.draw [W]\n"
            "45, 1234, 123.45\n"
            "100, 1234, [N/A]\n");
}

TEST_F(QueryFormatTest, NoHeaderPrintsRowsOnly) {
  EXPECT_EQ(Csv("index,enforced.power.limit", {false, true}), "0, 700.00 W\n1, 700.00 W\n");
  EXPECT_EQ(Csv("index,enforced.power.limit", {false, false}), "0, 700.00\n1, 700.00\n");
}

TEST_F(QueryFormatTest, AliasesPrintTheCanonicalHeader) {
  EXPECT_EQ(Csv("gpu_name,gpu_bus_id,clocks.sm,clocks_throttle_reasons.sw_power_cap", {}, {0}),
            "name, pci.bus_id, clocks.current.sm [MHz], clocks_event_reasons.sw_power_cap\n"
            "NVIDIA H100 80GB HBM3, 00000000:18:00.0, 1980 MHz, Active\n");
  EXPECT_EQ(FindGpuField("clocks.max.mem")->name, "clocks.max.memory");
  EXPECT_EQ(FindGpuField("clocks.gr")->name, "clocks.current.graphics");
  EXPECT_EQ(FindGpuField("gpu_uuid")->name, "uuid");
  EXPECT_EQ(FindGpuField("gpu_serial")->name, "serial");
}

TEST_F(QueryFormatTest, ClockReasonsInHexAndWords) {
  EXPECT_EQ(Csv("clocks_event_reasons.supported,clocks_event_reasons.active,"
                "clocks_event_reasons.gpu_idle,clocks_event_reasons.sw_power_cap",
                {false, true}, {0}),
            "0x00000000000001FF, 0x0000000000000004, Not Active, Active\n");
}

TEST_F(QueryFormatTest, IdentityAndModes) {
  EXPECT_EQ(Csv("count,index,uuid,pci.domain,pci.bus,pci.device_id,pci.sub_device_id,"
                "compute_cap,pstate,ecc.mode.current,persistence_mode,compute_mode,"
                "driver_version,vbios_version,remapped_rows.pending",
                {false, true}, {1}),
            "2, 1, GPU-00000001-1111-2222-3333-444444444444, 0x0000, 0x2A, 0x233010DE, "
            "0x16C110DE, 9.0, P0, Enabled, Enabled, Default, 570.133.20, 96.00.99.00.01, No\n");
}

TEST_F(QueryFormatTest, UnavailableFieldsPrintNaWithoutUnit) {
  EXPECT_EQ(
      Csv("fan.speed,display_mode,ecc.errors.corrected.volatile.dram,serial", {true, true}, {0}),
      "fan.speed [%], display_mode, ecc.errors.corrected.volatile.dram, serial\n"
      "[N/A], [N/A], [N/A], 1654123456780\n");
}

TEST_F(QueryFormatTest, DerivedTemperatureLimitAndCounters) {
  EXPECT_EQ(Csv("temperature.gpu.tlimit,clocks_event_reasons_counters.sw_power_cap", {true, true}),
            "temperature.gpu.tlimit, clocks_event_reasons_counters.sw_power_cap [us]\n"
            "31, 2500 us\n"
            "[N/A], 2500 us\n");
}

TEST_F(QueryFormatTest, TimestampIsLocalWithMilliseconds) {
  EXPECT_EQ(Csv("timestamp", {false, true}, {0}), "2024/05/01 12:34:56.789\n");
  EXPECT_EQ(FormatTimestamp(1714566896.9996), "2024/05/01 12:34:57.000");
}

TEST_F(QueryFormatTest, UnknownFieldIsNvidiaSmiSentence) {
  Result<std::vector<const GpuField*>> r = ResolveGpuFields("utilization.gpu,bogus.field");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "Field \"bogus.field\" is not a valid field to query.");
}

TEST_F(QueryFormatTest, NamesAreCaseSensitive) {
  EXPECT_EQ(FindGpuField("Utilization.GPU"), nullptr);
  EXPECT_EQ(ResolveGpuFields("NAME").status().message(),
            "Field \"NAME\" is not a valid field to query.");
}

TEST_F(QueryFormatTest, EveryReferenceFieldResolves) {
  // The canonical list of reference/nvidia-smi-compat.md, with units.
  const char* kExpected[] = {"timestamp",
                             "driver_version",
                             "count",
                             "name",
                             "serial",
                             "uuid",
                             "pci.bus_id",
                             "pcie.link.gen.current",
                             "pcie.link.width.max",
                             "index",
                             "gpu_recovery_action",
                             "fan.speed [%]",
                             "pstate",
                             "clocks_event_reasons.hw_power_brake_slowdown",
                             "clocks_event_reasons_counters.hw_thermal_slowdown [us]",
                             "memory.reserved [MiB]",
                             "memory.free [MiB]",
                             "compute_cap",
                             "utilization.decoder [%]",
                             "ecc.mode.pending",
                             "ecc.errors.uncorrected.aggregate.sram",
                             "ecc.errors.uncorrected.aggregate.total",
                             "retired_pages.double_bit.count",
                             "remapped_rows.failure",
                             "temperature.memory",
                             "power.management",
                             "power.draw.average [W]",
                             "power.draw.instant [W]",
                             "enforced.power.limit [W]",
                             "power.max_limit [W]",
                             "clocks.current.video [MHz]",
                             "clocks.max.sm [MHz]",
                             "mig.mode.pending"};
  for (const char* expected : kExpected) {
    std::string name(expected);
    name = name.substr(0, name.find(' '));
    const GpuField* field = FindGpuField(name);
    ASSERT_NE(field, nullptr) << name;
    std::string header = FormatGpuHeader({field}, {});
    EXPECT_EQ(header, std::string(expected) + "\n");
  }
  // 81 reference names with ECC expanded to 36, then catalog-only smi names.
  EXPECT_GE(GpuFields().size(), 80u + 36u);
  EXPECT_EQ(GpuFields()[80 + 36 - 1].name, "mig.mode.pending");
}

// A catalog row with an nvidia-smi name is queryable with no edit to the
// query field list: the name resolves, heads its column, and reads the row.
TEST_F(QueryFormatTest, EveryCatalogSmiNameResolves) {
  std::set<std::string_view> names;
  for (const GpuField& field : GpuFields()) {
    EXPECT_TRUE(names.insert(field.name).second) << "listed twice: " << field.name;
  }
  for (const MetricDef& def : kCatalog) {
    if (def.smi.name.empty()) continue;
    const GpuField* field = FindGpuField(def.smi.name);
    ASSERT_NE(field, nullptr) << def.smi.name << " (catalog key " << def.key << ")";
    EXPECT_EQ(field->name, def.smi.name);
    EXPECT_NE(field->kind, GpuField::Kind::kNotAvailable) << def.smi.name;
    if (field->kind == GpuField::Kind::kMetric) {
      EXPECT_EQ(field->metric, def.id) << def.smi.name;
      EXPECT_EQ(field->unit, def.smi.unit) << def.smi.name;
    }
  }
}

TEST_F(QueryFormatTest, ComputeApps) {
  Result<std::vector<const AppField*>> fields = ResolveAppFields(
      "timestamp,gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,pid,process_name,"
      "used_gpu_memory");
  ASSERT_TRUE(fields.ok());
  EXPECT_EQ(FormatAppHeader(*fields, {}),
            "timestamp, gpu_name, gpu_bus_id, gpu_serial, gpu_uuid, pid, process_name, "
            "used_gpu_memory [MiB]\n");
  Result<std::vector<const AppField*>> short_fields = ResolveAppFields("pid,name,used_memory");
  ASSERT_TRUE(short_fields.ok());
  EXPECT_EQ(FormatAppRows(snapshot_, {0, 1}, *short_fields, {}),
            "4242, python3, 1024 MiB\n4343, torchrun, [N/A]\n");
  EXPECT_EQ(FormatAppRows(snapshot_, {1}, *short_fields, {true, false}), "4343, torchrun, [N/A]\n");
  EXPECT_EQ(ResolveAppFields("pid,memory").status().message(),
            "Field \"memory\" is not a valid field to query.");
}

}  // namespace
}  // namespace gpuscope::cli

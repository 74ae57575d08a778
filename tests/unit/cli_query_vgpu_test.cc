// `gpuscope query` over vGPU instances, from hand-built snapshots (no NVML):
// what any snapshot source (the simulator, an agent) renders the same way.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/exit_codes.h"
#include "cli/query_command.h"
#include "cli/query_vgpu.h"
#include "cli_test_snapshot.h"

namespace gpuscope::cli {
namespace {

// GPU 0 hosts two VMs' vGPUs; GPU 1 is bare metal. No virtualization mode
// metric: the instances alone make a board a vGPU host (an agent's snapshot
// may not carry the mode).
Snapshot HostSnapshot() {
  Snapshot snap = testing::TwoGpuSnapshot();
  VgpuInstance a;
  a.id = 3251634176;
  a.uuid = "3f6fb3cc-ad3f-ec83-db70-000000000001";
  a.vm_id = "0c8f1a2e-1111-4a7b-9d3e-5a1b2c3d4e01";
  a.type = "GRID H100-20C";
  a.fb_total_bytes = 20480ULL << 20;
  a.fb_used_bytes = (14336ULL << 20) + 1000;  // floors to 14336 MiB
  a.license_state = 5;
  a.sm_utilization = 0.404;
  a.memory_utilization = 0.24;
  a.encoder_utilization = 0;
  a.decoder_utilization = 0.015;
  VgpuInstance b;  // a Xen-style domain id, a long VM name, no sample yet
  b.id = 7;
  b.vm_id = "12";
  b.vm_name = "a-very-long-virtual-machine-name";
  b.type = "GRID H100-80C-with-a-long-type-name";
  b.license_state = 2;
  snap.samples[0].vgpus = {a, b};
  return snap;
}

std::vector<const VgpuField*> Fields(std::string_view list) {
  Result<std::vector<const VgpuField*>> fields = ResolveVgpuFields(list);
  EXPECT_TRUE(fields.ok()) << fields.status().message();
  return fields.ok() ? *fields : std::vector<const VgpuField*>{};
}

TEST(QueryVgpuArgsTest, WordFlagsAndTheirConflicts) {
  Result<QueryArgs> table = ParseQueryArgs({"vgpu", "-i", "0"});
  ASSERT_TRUE(table.ok()) << table.status().message();
  EXPECT_TRUE(table->vgpu_table);
  EXPECT_FALSE(table->vgpu_detail);
  Result<QueryArgs> detail = ParseQueryArgs({"vgpu", "--query"});
  ASSERT_TRUE(detail.ok());
  EXPECT_TRUE(detail->vgpu_detail);
  Result<QueryArgs> csv = ParseQueryArgs({"vgpu", "--query-vgpu=vm_id", "--format=csv"});
  ASSERT_TRUE(csv.ok());
  EXPECT_FALSE(csv->vgpu_table);  // fields given: CSV rows, not the table
  EXPECT_EQ(csv->vgpu_fields, "vm_id");
  Result<QueryArgs> help = ParseQueryArgs({"--help-query-vgpu"});
  ASSERT_TRUE(help.ok());
  EXPECT_EQ(help->help, QueryArgs::Help::kVgpuFields);
  for (std::vector<std::string> bad :
       std::vector<std::vector<std::string>>{{"-q"},
                                             {"--query-gpu=index", "-q"},
                                             {"--query-vgpu=vm_id", "--query-gpu=index"},
                                             {"vgpu", "--query-compute-apps=pid"},
                                             {"vgpu", "-q", "--query-vgpu=vm_id"},
                                             {"-i", "0", "vgpu"}}) {
    Result<QueryArgs> parsed = ParseQueryArgs(bad);
    EXPECT_FALSE(parsed.ok()) << bad[0];
    if (!parsed.ok()) {
      EXPECT_EQ(parsed.status().code(), Status::Code::kInvalidArgument);
    }
  }
}

TEST(QueryVgpuFieldsTest, UnknownAndGpuFieldsAreNvidiaSmisError) {
  for (std::string_view list : {"vm_id,bogus", "VM_ID", "pci.bus_id", "vm_id,"}) {
    Result<std::vector<const VgpuField*>> fields = ResolveVgpuFields(list);
    ASSERT_FALSE(fields.ok()) << list;
    EXPECT_EQ(fields.status().code(), Status::Code::kInvalidArgument);
  }
  EXPECT_EQ(ResolveVgpuFields("vm_id, bogus").status().message(),
            "Field \"bogus\" is not a valid field to query.");
  // Every field is described in --help-query-vgpu.
  std::string help = VgpuFieldHelp();
  for (const VgpuField& f : VgpuFields()) {
    EXPECT_NE(help.find("\n\"" + std::string(f.name) + "\"\n"), std::string::npos) << f.name;
    EXPECT_FALSE(f.help.empty()) << f.name;
  }
}

TEST(QueryVgpuFormatTest, CsvRowsUnitsAndNotAvailable) {
  Snapshot snap = HostSnapshot();
  Result<std::vector<std::size_t>> hosts = VgpuHosts(snap, {0, 1});
  ASSERT_TRUE(hosts.ok());
  EXPECT_EQ(*hosts, std::vector<std::size_t>{0});
  auto fields = Fields(
      "gpu_index,vgpu_id,vgpu_uuid,vm_id,vm_name,license_status,fb_memory_usage.used,"
      "fb_memory_usage.free,utilization.gpu,utilization.decoder");
  EXPECT_EQ(FormatVgpuHeader(fields, {}),
            "gpu_index, vgpu_id, vgpu_uuid, vm_id, vm_name, license_status, "
            "fb_memory_usage.used [MiB], fb_memory_usage.free [MiB], utilization.gpu [%], "
            "utilization.decoder [%]\n");
  EXPECT_EQ(FormatVgpuHeader(fields, {.header = false}), "");
  EXPECT_EQ(FormatVgpuRows(snap, *hosts, fields, {}),
            "0, 3251634176, 3f6fb3cc-ad3f-ec83-db70-000000000001, "
            "0c8f1a2e-1111-4a7b-9d3e-5a1b2c3d4e01, [N/A], Licensed, 14336 MiB, 6143 MiB, 40 %, "
            "2 %\n"
            "0, 7, [N/A], 12, a-very-long-virtual-machine-name, Unlicensed (Unrestricted), "
            "[N/A], [N/A], [N/A], [N/A]\n");
  EXPECT_EQ(FormatVgpuRows(snap, *hosts, Fields("vgpu_id,fb_memory_usage.used"),
                           {.header = true, .units = false}),
            "3251634176, 14336\n7, [N/A]\n");
}

TEST(QueryVgpuFormatTest, NoVgpuBoardIsNotSupported) {
  Snapshot snap = testing::TwoGpuSnapshot();
  Result<std::vector<std::size_t>> hosts = VgpuHosts(snap, {0, 1});
  ASSERT_FALSE(hosts.ok());
  EXPECT_EQ(hosts.status().code(), Status::Code::kNotSupported);
  EXPECT_EQ(hosts.status().message(), "No supported devices in vGPU mode.");
  // A board in host vGPU mode with no VM running is listed, with no rows.
  snap.samples[1].Set(Metric::kVirtualizationMode, 3);
  hosts = VgpuHosts(snap, {0, 1});
  ASSERT_TRUE(hosts.ok());
  EXPECT_EQ(*hosts, std::vector<std::size_t>{1});
  EXPECT_EQ(FormatVgpuRows(snap, *hosts, Fields("vgpu_id"), {}), "");
}

TEST(QueryVgpuFormatTest, TableShortensAsNvidiaSmi) {
  Snapshot snap = HostSnapshot();
  std::string table = FormatVgpuTable(snap, {0});
  std::istringstream lines(table);
  std::string line;
  std::vector<std::string> all;
  while (std::getline(lines, line)) all.push_back(line);
  ASSERT_EQ(all.size(), 11u) << table;
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_EQ(all[i].size(), 79u) << all[i];
  EXPECT_EQ(all[7],
            "|   0  NVIDIA H100 80GB HBM3      | 00000000:18:00.0             |  45%       |");
  EXPECT_EQ(all[8],
            "|      3251634176  GRID H100-20C  | 0c8f...  N/A                 |     40%    |");
  EXPECT_EQ(all[9],
            "|      7           GRID H100-8... | 12       a-very-long-virt... |     N/A    |");
  EXPECT_EQ(all[10],
            "+---------------------------------+------------------------------+------------+");
}

TEST(QueryVgpuFormatTest, DetailNamesTheVmIdByItsShape) {
  std::string detail = FormatVgpuDetail(HostSnapshot(), {0});
  EXPECT_EQ(detail.rfind("GPU 00000000:18:00.0\n"
                         "    Active vGPUs                          : 2\n"
                         "    vGPU ID                               : 3251634176\n",
                         0),
            0u);
  EXPECT_NE(detail.find("        VM UUID                           : 0c8f1a2e-1111-"),
            std::string::npos);
  EXPECT_NE(detail.find("        VM ID                             : 12\n"), std::string::npos);
  EXPECT_NE(detail.find("            Used                          : N/A\n"), std::string::npos);
  EXPECT_NE(detail.find("            GPU                           : 40 %\n"), std::string::npos);
}

TEST(QueryVgpuLoopTest, RowsFromEachSnapshot) {
  Result<QueryArgs> args = ParseQueryArgs({"--query-vgpu=vgpu_id,vm_id", "--format=csv"});
  ASSERT_TRUE(args.ok());
  Result<QueryPlan> plan = PlanQuery(*args);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::ostringstream out;
  Status status = RunQueryLoop(
      *plan, [] { return Result<SnapshotPtr>(std::make_shared<Snapshot>(HostSnapshot())); },
      [](auto) { return false; }, out);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(out.str(), "vgpu_id, vm_id\n3251634176, 0c8f1a2e-1111-4a7b-9d3e-5a1b2c3d4e01\n7, 12\n");
  // Bare metal: the query fails with nvidia-smi's sentence (exit 3).
  std::ostringstream bare;
  status = RunQueryLoop(
      *plan,
      [] { return Result<SnapshotPtr>(std::make_shared<Snapshot>(testing::TwoGpuSnapshot())); },
      [](auto) { return false; }, bare);
  EXPECT_EQ(status.code(), Status::Code::kNotSupported);
  EXPECT_EQ(bare.str(), "");
}

TEST(QueryVgpuLoopTest, ALostHostIsLostNotUnsupported) {
  Result<QueryArgs> args = ParseQueryArgs({"vgpu"});
  ASSERT_TRUE(args.ok());
  Result<QueryPlan> plan = PlanQuery(*args);
  ASSERT_TRUE(plan.ok());
  Snapshot snap = HostSnapshot();
  snap.samples[0].vgpus.clear();  // a lost board is not read
  snap.samples[0].state = GpuState::kLost;
  std::ostringstream out;
  Status status = RunQueryLoop(
      *plan, [&snap] { return Result<SnapshotPtr>(std::make_shared<Snapshot>(snap)); },
      [](auto) { return false; }, out);
  EXPECT_EQ(ExitFor(status), Exit::kGpuLost) << status.message();
}

}  // namespace
}  // namespace gpuscope::cli

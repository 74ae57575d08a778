// dcgm-exporter's labels and values (issue 13): XID err_code/err_msg, label
// fields in name order, blank values left out, compute capability encoding,
// legacy family names, exact watts.
#include <gtest/gtest.h>

#include <string>

#include "export/render.h"
#include "export/xid_messages.h"
#include "export_test_util.h"

namespace gpuscope::prom {
namespace {

using testing::MakeGpu;
using testing::MakeSystem;

RenderOptions Counters(std::string_view csv) {
  RenderOptions options;
  options.metrics = MetricSet::kDcgm;
  Result<CounterSet> set = ParseCounters(csv, "t.csv");
  EXPECT_TRUE(set.ok()) << set.status().message();
  if (set.ok()) options.counters = std::move(set).value();
  return options;
}

Snapshot OneGpu() {
  Snapshot snapshot;
  snapshot.system = MakeSystem();
  snapshot.gpus.push_back(MakeGpu(0, "GPU-aaaa", "NVIDIA H100 80GB HBM3"));
  snapshot.gpus[0].inforom_image = "G520.0200.00.05";
  GpuSample sample;
  sample.Set(Metric::kXidLast, 79);
  sample.Set(Metric::kPowerUsage, 614310 / 1000.0);  // as the reader stores 614310 mW
  sample.Set(Metric::kGpuTemp, 41);
  snapshot.samples.push_back(sample);
  return snapshot;
}

TEST(DcgmLabels, XidErrorsCarryCodeAndMessage) {
  std::string text =
      *Renderer(Counters("DCGM_FI_DEV_XID_ERRORS, gauge, Last XID\n")).Render(OneGpu()).text;
  EXPECT_NE(text.find("Hostname=\"node-1\",err_code=\"79\",err_msg=\"GPU has fallen off the "
                      "bus\"} 79\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(XidErrorMessage(0), "No Error");
  EXPECT_EQ(XidErrorMessage(48), "Double Bit ECC Error");
  EXPECT_EQ(XidErrorMessage(172), "Uncorrectable SRAM Error");
  EXPECT_EQ(XidErrorMessage(173), "Unknown Error");
  EXPECT_EQ(XidErrorMessage(-1), "Unknown Error");
}

// dcgm-exporter ranges over a Go map: label fields come out in name order,
// whatever the file's order; a value NVML could not give is left out.
TEST(DcgmLabels, LabelFieldsInNameOrderBlankOnesLeftOut) {
  std::string text = *Renderer(Counters("DCGM_FI_DEV_GPU_TEMP, gauge, t\n"
                                        "DCGM_FI_DRIVER_VERSION, label, d\n"
                                        "DCGM_FI_DEV_POWER_INFOROM_VER, label, p\n"
                                        "DCGM_FI_DEV_INFOROM_IMAGE_VER, label, i\n"
                                        "DCGM_FI_DEV_CUDA_COMPUTE_CAPABILITY, label, c\n"))
                          .Render(OneGpu())
                          .text;
  EXPECT_NE(text.find("Hostname=\"node-1\",DCGM_FI_DEV_CUDA_COMPUTE_CAPABILITY=\"38654705664\","
                      "DCGM_FI_DEV_INFOROM_IMAGE_VER=\"G520.0200.00.05\","
                      "DCGM_FI_DRIVER_VERSION=\"570.133.20\"} 41\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("POWER_INFOROM"), std::string::npos);
}

TEST(DcgmLabels, LegacyNamesAndExactWatts) {
  std::string text = *Renderer(Counters("dcgm_power_usage, gauge, Power draw (in W).\n"
                                        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS, gauge, bits\n"))
                          .Render(OneGpu())
                          .text;
  EXPECT_NE(text.find("# TYPE dcgm_power_usage gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find("} 614.31\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("614.3100000000001"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::prom

// BuildServeConfig: settings -> the Agent's options and the CLI's own, and its
// validation messages.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "cli/serve_config.h"

namespace gpuscope::cli {
namespace {

Result<ServeConfig> Build(std::vector<std::string> args,
                          std::map<std::string, std::string> env = {}) {
  auto lookup = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  Result<Settings> settings = ResolveSettings(kServeSettings, args, lookup, "", "");
  if (!settings.ok()) return settings.status();
  return BuildServeConfig(*settings);
}

TEST(ServeConfig, DefaultsMatchTheIssue) {
  auto c = Build({});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->agent.sampler.fast_interval_s, 1.0);
  EXPECT_EQ(c->agent.sampler.slow_interval_s, 10.0);
  EXPECT_EQ(c->agent.sampler.pcie_interval_s, 5.0);
  EXPECT_EQ(c->agent.sampler.window_span_s, 600.0);
  EXPECT_EQ(c->agent.server.listen_address, ":9400");
  EXPECT_EQ(c->agent.server.max_connections, 1024u);
  EXPECT_EQ(c->agent.server.max_connections_per_client, 32u);
  EXPECT_EQ(c->agent.server.connection_timeout, std::chrono::seconds(10));
  EXPECT_EQ(c->agent.server.head_timeout, std::chrono::milliseconds(5000));
  EXPECT_EQ(c->agent.render.metrics, prom::MetricSet::kBoth);
  EXPECT_EQ(c->agent.stale_after_s, 3.0);
  EXPECT_EQ(c->agent.xid_window_s, 300.0);
  EXPECT_FALSE(c->agent.monitor.gpu_hour_price.has_value());
  EXPECT_TRUE(c->counters_path.empty());
}

// Issue 31: the OTLP receiver takes unauthenticated writes, so by default it
// listens on loopback only; the operator opens it on purpose.
TEST(ServeConfig, OtlpReceiverListensOnLoopbackByDefault) {
  auto c = Build({});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->agent.otlp_listen_address, "127.0.0.1:4318");
  auto opened = Build({"--otlp-listen-address", ":4318"});
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_EQ(opened->agent.otlp_listen_address, ":4318");
}

TEST(ServeConfig, DcgmExporterFlags) {
  auto c = Build({"-a", "127.0.0.1:9500", "-c", "30000", "-f", "/etc/c.csv", "-n", "-d", "g:0,2",
                  "-x", "60000", "-k", "--kubernetes-gpu-id-type", "device-name",
                  "--web-config-file", "/etc/web.yml"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->agent.server.listen_address, "127.0.0.1:9500");
  EXPECT_EQ(c->agent.sampler.fast_interval_s, 30.0);
  // Slow and PCIe tiers never run faster than the fast tier.
  EXPECT_EQ(c->agent.sampler.slow_interval_s, 30.0);
  EXPECT_EQ(c->agent.sampler.pcie_interval_s, 30.0);
  EXPECT_EQ(c->agent.stale_after_s, 90.0);
  EXPECT_EQ(c->counters_path, "/etc/c.csv");
  EXPECT_TRUE(c->agent.render.no_hostname);
  EXPECT_EQ(c->agent.sampler.devices.kind, collect::DeviceSelection::Kind::kGpus);
  EXPECT_EQ(c->agent.sampler.devices.numbers, (std::vector<unsigned>{0, 2}));
  EXPECT_EQ(c->agent.xid_window_s, 60.0);
  EXPECT_TRUE(c->agent.attribution.kubernetes);
  EXPECT_EQ(c->agent.attribution.kubelet.socket, "/var/lib/kubelet/pod-resources/kubelet.sock");
  EXPECT_EQ(c->agent.server.web_config_file, "/etc/web.yml");
  EXPECT_TRUE(ValidateOptions(c->agent.sampler).ok());
}

TEST(ServeConfig, AttributionOptions) {
  auto c = Build({"--hpc-job-mapping-dir", "/run/jobs", "--attribution-refresh", "30s",
                  "--nvidia-resource-names", "nvidia.com/gpu.shared,,example.com/gpu"},
                 {{"GPUSCOPE_POD_RESOURCES_KUBELET_SOCKET", "/k/kubelet.sock"}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->agent.attribution.kubernetes);
  EXPECT_EQ(c->agent.attribution.hpc_job_dir, "/run/jobs");
  EXPECT_EQ(c->agent.attribution.refresh_s, 30.0);
  EXPECT_EQ(c->agent.attribution.kubelet.socket, "/k/kubelet.sock");
  EXPECT_EQ(c->agent.attribution.kubelet.extra_resources,
            (std::vector<std::string>{"nvidia.com/gpu.shared", "example.com/gpu"}));
  for (const char* bad : {"0", "50ms", "2h"}) {
    auto refused = Build({"--attribution-refresh", bad});
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find("attribution-refresh"), std::string::npos);
  }
}

TEST(ServeConfig, EnvironmentAndNativeOptions) {
  auto c = Build({"--metrics=native", "--gpu-hour-price", "2.5"},
                 {{"GPUSCOPE_HOSTNAME", "node-7"},
                  {"GPUSCOPE_SIMULATE", "idle-node"},
                  {"GPUSCOPE_HOSTNAME_LABEL", "hostname"}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->agent.render.metrics, prom::MetricSet::kNative);
  EXPECT_EQ(c->agent.render.hostname_label, "hostname");
  EXPECT_EQ(c->agent.hostname, "node-7");
  EXPECT_EQ(c->nvml.simulate, "idle-node");
  EXPECT_TRUE(c->nvml.nvml_lib.empty());  // default: let PrepareNvml choose
  ASSERT_TRUE(c->agent.monitor.gpu_hour_price.has_value());
  EXPECT_EQ(*c->agent.monitor.gpu_hour_price, 2.5);
}

TEST(ServeConfig, OtlpRequestLimits) {
  auto defaults = Build({});
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_EQ(defaults->agent.otlp.limits.max_points, 20000u);
  EXPECT_EQ(defaults->agent.otlp.limits.max_elements, 100000u);
  auto c = Build({"--otlp-max-points-per-request", "500"},
                 {{"GPUSCOPE_OTLP_MAX_ELEMENTS_PER_REQUEST", "4000"}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->agent.otlp.limits.max_points, 500u);
  EXPECT_EQ(c->agent.otlp.limits.max_elements, 4000u);
}

TEST(ServeConfig, BadValuesNameTheSetting) {
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const Case cases[] = {
      {{"-c", "50"}, "collect-interval"},
      {{"--metrics", "all"}, "metrics"},
      {{"-d", "z"}, "devices"},
      {{"--max-connections", "0"}, "max-connections"},
      {{"--max-connections-per-client", "2000"}, "max-connections-per-client"},
      {{"--max-connections-per-client", "-1"}, "max-connections-per-client"},
      {{"--request-head-timeout", "0"}, "request-head-timeout"},
      {{"--request-head-timeout", "2h"}, "request-head-timeout"},
      {{"--hostname-label", "host"}, "hostname-label"},
      {{"-x", "abc"}, "xid-count-window-size"},
      {{"--log-level", "loud"}, "log-level"},
      {{"--window", "5 parsecs"}, "window"},
      {{"--kubernetes-gpu-id-type", "name"}, "kubernetes-gpu-id-type"},
  };
  for (const Case& c : cases) {
    auto result = Build(c.args);
    ASSERT_FALSE(result.ok()) << c.args[0];
    EXPECT_NE(result.status().message().find(c.expect), std::string::npos)
        << result.status().message();
  }
}

TEST(ServeConfig, CountersDefaultAndFile) {
  auto defaults = LoadCounters("");
  ASSERT_TRUE(defaults.ok());
  EXPECT_NE(defaults->Find("DCGM_FI_DEV_GPU_TEMP"), nullptr);

  const std::string path = ::testing::TempDir() + "/serve_counters.csv";
  std::ofstream(path) << "# test\nDCGM_FI_DEV_GPU_TEMP, gauge, temp\n"
                         "DCGM_EXP_XID_ERRORS_COUNT, gauge, xids in window\n";
  auto file = LoadCounters(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_NE(file->Find("DCGM_EXP_XID_ERRORS_COUNT"), nullptr);

  std::ofstream(path) << "DCGM_FI_DEV_GPU_TEMP, gauge, temp\nDCGM_FI_DEV_GPU_TEMP gauge\n";
  auto bad = LoadCounters(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(path + ":2"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace gpuscope::cli

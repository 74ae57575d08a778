// gpuscopeSimLastChange: the scenario time of the last planned change (a
// workload phase, a fault's onset or end), from which the CLI's default
// scenario moment follows (cli/sim_clock.h).
#include <dlfcn.h>

#include "sim_test_support.h"

namespace gpuscope::sim::testing {
namespace {

using LastChangeFn = double (*)();

class SimLastChangeTest : public SimTest {
 protected:
  LastChangeFn last_change_ =
      reinterpret_cast<LastChangeFn>(dlsym(nv.handle, "gpuscopeSimLastChange"));
};

TEST_F(SimLastChangeTest, ShippedScenarios) {
  ASSERT_NE(last_change_, nullptr);
  EXPECT_EQ(last_change_(), 0);  // uninitialised
  ASSERT_EQ(Start("fault-drill"), 0);
  EXPECT_EQ(last_change_(), 5);  // GPU 3 falls off the bus at 5 s
  ASSERT_EQ(nv.nvmlShutdown(), 0);
  ASSERT_EQ(Start("mixed-node"), 0);
  EXPECT_EQ(last_change_(), 0);  // everything starts at 0 s
}

TEST_F(SimLastChangeTest, PhasesFaultEndsAndCurves) {
  const std::string path = WriteTempFile("last-change.yaml", R"(
gpus:
  - model: h100-sxm
    workload:
      - {at: 0, kind: training}
      - {at: 120, kind: custom, points: [[0, 1], [30, 0.5]]}
    faults:
      - {at: 40, until: 200, kind: power-cap, watts: 400}
  - model: h100-sxm
    workload:
      - {at: 10, kind: custom, repeat: true, points: [[0, 1], [900, 0.5]]}
)");
  ASSERT_EQ(Start(path), 0) << nv.LastError();
  EXPECT_EQ(last_change_(), 200);  // the power cap's end; a repeating curve never ends
}

}  // namespace
}  // namespace gpuscope::sim::testing

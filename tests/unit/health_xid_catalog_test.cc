#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "health/xid_catalog.h"
#include "test_paths.h"

namespace gpuscope::health {
namespace {

TEST(XidCatalog, CoversTheCodesOperatorsMeet) {
  for (unsigned code : {8u,   13u,  31u,  32u,  38u,  43u,  44u,  45u,  46u,  48u, 61u,
                        62u,  63u,  64u,  68u,  69u,  74u,  79u,  92u,  94u,  95u, 109u,
                        110u, 119u, 120u, 121u, 136u, 140u, 143u, 144u, 150u, 154u}) {
    EXPECT_TRUE(IsKnownXid(code)) << code;
    const XidInfo info = LookupXid(code);
    EXPECT_EQ(info.code, code);
    EXPECT_FALSE(info.name.empty()) << code;
    EXPECT_FALSE(info.action.empty()) << code;
  }
}

TEST(XidCatalog, SeveritiesFollowDcgmPolicy) {
  // DCGM fails on these regardless of configuration.
  for (unsigned code : {48u, 74u, 79u, 95u, 119u, 120u, 140u}) {
    EXPECT_EQ(LookupXid(code).severity, Severity::kCritical) << code;
  }
  EXPECT_EQ(LookupXid(94).severity, Severity::kWarn);
  EXPECT_EQ(LookupXid(63).severity, Severity::kWarn);
  EXPECT_EQ(LookupXid(64).severity, Severity::kCritical);
  EXPECT_EQ(LookupXid(43).severity, Severity::kInfo);
}

TEST(XidCatalog, ApplicationErrorsAreMarked) {
  // Kubernetes' device plugin keeps the GPU healthy on these.
  for (unsigned code : {13u, 31u, 43u, 45u, 68u}) EXPECT_TRUE(LookupXid(code).application) << code;
  for (unsigned code : {48u, 79u, 74u}) EXPECT_FALSE(LookupXid(code).application) << code;
}

TEST(XidCatalog, UnknownCodesGetAGenericWarning) {
  EXPECT_FALSE(IsKnownXid(999));
  const XidInfo info = LookupXid(999);
  EXPECT_EQ(info.code, 999u);
  EXPECT_EQ(info.severity, Severity::kWarn);
  EXPECT_EQ(info.name, "unknown XID");
  EXPECT_EQ(LookupXid(4000000000u).code, 4000000000u);
}

TEST(XidCatalog, RepeatedPbdmaErrorsEscalate) {
  EXPECT_EQ(XidSeverity(32, 1), Severity::kWarn);
  EXPECT_EQ(XidSeverity(32, 2), Severity::kWarn);
  EXPECT_EQ(XidSeverity(32, 3), Severity::kCritical);
  EXPECT_EQ(XidSeverity(13, 50), Severity::kWarn);  // no escalation rule
}

TEST(XidCatalog, RowsAreUniqueAndSorted) {
  std::set<unsigned> seen;
  unsigned last = 0;
  for (const XidInfo& row : XidCatalog()) {
    EXPECT_TRUE(seen.insert(row.code).second) << row.code;
    EXPECT_GT(row.code, last);
    last = row.code;
  }
  EXPECT_GE(seen.size(), 40u);
}

TEST(XidCatalog, DocumentedInDocsXidMd) {
  std::ifstream in(test_support::SourceDir() + "/docs/xid.md");
  ASSERT_TRUE(in) << "docs/xid.md missing";
  std::stringstream text;
  text << in.rdbuf();
  for (const XidInfo& row : XidCatalog()) {
    const std::string line = "| " + std::to_string(row.code) + " | " + std::string(row.name) + " |";
    EXPECT_NE(text.str().find(line), std::string::npos) << "docs/xid.md lacks: " << line;
  }
}

TEST(XidCatalog, SeverityNames) {
  EXPECT_EQ(SeverityName(Severity::kInfo), "info");
  EXPECT_EQ(SeverityName(Severity::kWarn), "warn");
  EXPECT_EQ(SeverityName(Severity::kCritical), "critical");
}

}  // namespace
}  // namespace gpuscope::health

// Builders of OTLP requests for the receiver's tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "export/writer.h"
#include "otlp/otlp_metrics.pb.h"
#include "otlp/receiver.h"
#include "otlp/store.h"

namespace gpuscope::otlp::testing {

inline void Attr(google::protobuf::RepeatedPtrField<pb::KeyValue>* out, const std::string& key,
                 const std::string& value) {
  pb::KeyValue* kv = out->Add();
  kv->set_key(key);
  kv->mutable_value()->set_string_value(value);
}

// One resource with the given attributes and one scope; returns the scope's metric list.
inline pb::ScopeMetrics* AddResource(
    pb::ExportMetricsServiceRequest& request,
    const std::vector<std::pair<std::string, std::string>>& attrs) {
  pb::ResourceMetrics* rm = request.add_resource_metrics();
  for (const auto& [k, v] : attrs) Attr(rm->mutable_resource()->mutable_attributes(), k, v);
  return rm->add_scope_metrics();
}

inline void AddGauge(pb::ScopeMetrics* scope, const std::string& name, double value) {
  pb::Metric* m = scope->add_metrics();
  m->set_name(name);
  m->mutable_gauge()->add_data_points()->set_as_double(value);
}

inline void AddCounter(pb::ScopeMetrics* scope, const std::string& name, int64_t value,
                       bool delta = false) {
  pb::Metric* m = scope->add_metrics();
  m->set_name(name);
  pb::Sum* sum = m->mutable_sum();
  sum->set_is_monotonic(true);
  sum->set_aggregation_temporality(delta ? pb::AGGREGATION_TEMPORALITY_DELTA
                                         : pb::AGGREGATION_TEMPORALITY_CUMULATIVE);
  sum->add_data_points()->set_as_int(value);
}

inline pb::HistogramDataPoint* AddHistogram(pb::ScopeMetrics* scope, const std::string& name,
                                            const std::string& unit,
                                            const std::vector<double>& bounds,
                                            const std::vector<uint64_t>& counts, double sum,
                                            bool delta = false) {
  pb::Metric* m = scope->add_metrics();
  m->set_name(name);
  m->set_unit(unit);
  pb::Histogram* h = m->mutable_histogram();
  h->set_aggregation_temporality(delta ? pb::AGGREGATION_TEMPORALITY_DELTA
                                       : pb::AGGREGATION_TEMPORALITY_CUMULATIVE);
  pb::HistogramDataPoint* dp = h->add_data_points();
  uint64_t count = 0;
  for (double b : bounds) dp->add_explicit_bounds(b);
  for (uint64_t c : counts) {
    dp->add_bucket_counts(c);
    count += c;
  }
  dp->set_count(count);
  dp->set_sum(sum);
  return dp;
}

// The receiver's answer to `request` posted as protobuf (EXPECTs a 200), from `peer` (the
// client's address; "" unknown).
inline pb::ExportMetricsServiceResponse Post(Receiver& receiver,
                                             const pb::ExportMetricsServiceRequest& request,
                                             const std::string& peer = "") {
  const std::string body = request.SerializeAsString();
  http::Request r;
  r.method = "POST";
  r.path = kMetricsPath;
  r.peer = peer;
  r.content_type = "application/x-protobuf";
  r.body = body;
  http::Response response = receiver.Handle(r);
  EXPECT_EQ(response.status, 200) << *response.body;
  pb::ExportMetricsServiceResponse reply;
  EXPECT_TRUE(reply.ParseFromString(*response.body));
  return reply;
}

// The store's application families as /metrics writes them (HELP, TYPE, lines; unattributed).
inline std::string Exposition(Store& store, double now) {
  std::string out;
  for (const prom::Family& f : store.Families(Snapshot{}, now)) {
    if (!f.lines || f.lines->empty()) continue;
    prom::AppendHeader(f.name, f.help, f.type, prom::Format::kText, &out);
    out += *f.lines;
  }
  return out;
}

// The receiver's answer to a POST of `body` on /v1/metrics.
inline http::Response PostTo(Receiver& receiver, const std::string& body,
                             const std::string& type = "application/x-protobuf",
                             const std::string& encoding = "", bool too_large = false) {
  http::Request r;
  r.method = "POST";
  r.path = kMetricsPath;
  r.content_type = type;
  r.content_encoding = encoding;
  r.body = body;
  r.body_too_large = too_large;
  return receiver.Handle(r);
}

// Every application line the store renders for a snapshot without GPUs.
inline std::string AppLines(Store& store, double now) {
  std::string out;
  for (const prom::Family& f : store.Families(Snapshot{}, now)) {
    if (f.lines) out += *f.lines;
  }
  return out;
}

}  // namespace gpuscope::otlp::testing

// An in-process checker of Prometheus text exposition (format 0.0.4) for the
// rules promtool and Prometheus' parser rely on, and some promtool 2.42 does
// not check: every family declared once (HELP then TYPE), a family's name
// unique across the sample names of every family (a histogram `x` writes
// `x_count`, a counter `x_total` is the family `x` in OpenMetrics), samples
// inside their family, no duplicate series or label names, counters finite
// and not negative, histograms with increasing `le` ending at +Inf, buckets
// that do not decrease and a +Inf bucket equal to `_count`; and OpenMetrics'
// rules for a histogram's sum, which prometheus_client's parser enforces (one
// broken series rejects the whole scrape): `_count` and `_sum` together or not
// at all, and no `_sum` when a bucket bound is negative or the sum itself is
// (the sum is a counter).
//
// Header-only (the OTLP fuzz target compiles it too). Thread safety: pure.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscope/metric_names.h"

namespace gpuscope::testing {

class ExpositionChecker {
 public:
  // "" when `body` is valid, else the first problem with its line.
  static std::string Problem(std::string_view body) {
    ExpositionChecker checker;
    std::size_t number = 0;
    while (!body.empty() && checker.problem_.empty()) {
      const std::size_t end = body.find('\n');
      if (end == std::string_view::npos) return "the body does not end with a newline";
      ++number;
      checker.Line(body.substr(0, end));
      if (!checker.problem_.empty()) {
        return "line " + std::to_string(number) + ": " + checker.problem_ + ": " +
               std::string(body.substr(0, std::min<std::size_t>(end, 200)));
      }
      body.remove_prefix(end + 1);
    }
    checker.EndFamily();
    return checker.problem_;
  }

 private:
  struct Histogram {
    std::vector<std::pair<double, double>> buckets;  // le, value
    bool has_count = false, has_sum = false;
    double count = 0, sum = 0;
  };

  static bool ValidName(std::string_view name) { return metric_names::Valid(name); }

  static bool ParseValue(std::string_view text, double* out) {
    if (text == "NaN") return *out = NAN, true;
    if (text == "+Inf") return *out = INFINITY, true;
    if (text == "-Inf") return *out = -INFINITY, true;
    if (text.empty()) return false;
    const std::string s(text);
    char* end = nullptr;
    *out = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size();
  }

  void Fail(std::string why) {
    if (problem_.empty()) problem_ = std::move(why);
  }

  // The names a family takes: its own, its samples' and its OpenMetrics name.
  void Claim(const std::string& name) {
    if (!claimed_.insert(name).second) Fail("the name '" + name + "' is taken by two families");
  }

  void Header(std::string_view line) {
    const bool help = line.starts_with("# HELP ");
    std::string_view rest = line.substr(7);
    const std::string name(rest.substr(0, rest.find(' ')));
    if (!ValidName(name)) return Fail("invalid family name");
    if (help) {
      EndFamily();
      if (!declared_.insert(name).second) return Fail("second HELP for '" + name + "'");
      family_ = name;
      type_.clear();
      return;
    }
    if (name != family_ || !type_.empty()) return Fail("TYPE without its HELP");
    type_ = std::string(rest.substr(rest.find(' ') + 1));
    Claim(name);
    if (type_ == "histogram") {
      for (const char* suffix : {"_bucket", "_count", "_sum", "_created"}) Claim(name + suffix);
    } else if (type_ == "counter") {
      if (!name.ends_with("_total")) return Fail("a counter without _total");
      const std::string stem = name.substr(0, name.size() - 6);
      Claim(stem);
      Claim(stem + "_created");
    } else if (type_ != "gauge" && type_ != "untyped") {
      Fail("unknown type '" + type_ + "'");
    }
  }

  // Parses `name{a="b",...} value`; labels sorted into `labels`.
  bool Sample(std::string_view line, std::string* name,
              std::vector<std::pair<std::string, std::string>>* labels, double* value) {
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    *name = std::string(line.substr(0, i));
    if (!ValidName(*name)) return Fail("invalid sample name"), false;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        std::size_t eq = line.find("=\"", i);
        if (eq == std::string_view::npos) return Fail("label without a value"), false;
        std::string label(line.substr(i, eq - i)), text;
        if (!ValidName(label) || label.starts_with("__")) return Fail("invalid label name"), false;
        for (i = eq + 2; i < line.size() && line[i] != '"'; ++i) {
          if (line[i] != '\\') {
            text += line[i];
            continue;
          }
          if (++i >= line.size()) return Fail("dangling escape"), false;
          const char c = line[i];
          if (c != '\\' && c != '"' && c != 'n') return Fail("invalid escape"), false;
          text += c == 'n' ? '\n' : c;
        }
        if (i >= line.size()) return Fail("unterminated label value"), false;
        labels->emplace_back(std::move(label), std::move(text));
        ++i;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) return Fail("unterminated label set"), false;
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') return Fail("no value"), false;
    if (!ParseValue(line.substr(i + 1), value)) return Fail("invalid value"), false;
    std::sort(labels->begin(), labels->end());
    for (std::size_t k = 1; k < labels->size(); ++k) {
      if ((*labels)[k].first == (*labels)[k - 1].first) return Fail("duplicate label"), false;
    }
    return true;
  }

  void Line(std::string_view line) {
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) return Header(line);
    if (line.starts_with("#")) return;  // a comment
    std::string name;
    std::vector<std::pair<std::string, std::string>> labels;
    double value = 0;
    if (!Sample(line, &name, &labels, &value)) return;
    if (type_.empty()) return Fail("a sample outside a family");
    std::string series = name;
    for (const auto& [k, v] : labels) series += '\x1f' + k + '=' + v;
    if (!series_.insert(series).second) return Fail("duplicate series");
    if (type_ == "histogram") return HistogramSample(name, std::move(labels), value);
    if (name != family_) return Fail("sample '" + name + "' outside its family");
    if (type_ == "counter" && !(std::isfinite(value) && value >= 0)) {
      Fail("a counter that is not finite or negative");
    }
  }

  void HistogramSample(const std::string& name,
                       std::vector<std::pair<std::string, std::string>> labels, double value) {
    std::string le;
    std::erase_if(labels,
                  [&](const auto& l) { return l.first == "le" ? (le = l.second, true) : false; });
    std::string key;
    for (const auto& [k, v] : labels) key += '\x1f' + k + '=' + v;
    Histogram& h = histograms_[key];
    if (!std::isfinite(value) && name != family_ + "_sum")
      return Fail("a count that is not finite");
    if (name == family_ + "_bucket") {
      double bound = 0;
      if (!ParseValue(le, &bound) || std::isnan(bound)) return Fail("a bucket without a valid le");
      if (!h.buckets.empty() && !(h.buckets.back().first < bound)) return Fail("le not increasing");
      if (!h.buckets.empty() && value < h.buckets.back().second) return Fail("buckets decrease");
      h.buckets.emplace_back(bound, value);
    } else if (name == family_ + "_count") {
      h.has_count = true;
      h.count = value;
    } else if (name == family_ + "_sum") {
      h.has_sum = true;
      h.sum = value;
    } else {
      Fail("sample '" + name + "' outside its histogram");
    }
  }

  void EndFamily() {
    for (const auto& [key, h] : histograms_) {
      if (h.buckets.empty() || !std::isinf(h.buckets.back().first)) {
        return Fail("histogram '" + family_ + "' without a +Inf bucket");
      }
      if (h.has_count != h.has_sum)
        return Fail("histogram '" + family_ + "' with only one of _count and _sum");
      if (h.has_sum && (h.buckets.front().first < 0 || h.sum < 0)) {
        return Fail("histogram '" + family_ + "' with a _sum and a negative bucket or sum");
      }
      if (h.has_count && h.buckets.back().second != h.count) {
        return Fail("histogram '" + family_ + "': +Inf bucket differs from _count");
      }
    }
    histograms_.clear();
  }

  std::string problem_, family_, type_;
  std::set<std::string> declared_, claimed_, series_;
  std::map<std::string, Histogram> histograms_;
};

}  // namespace gpuscope::testing

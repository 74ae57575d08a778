#include "yaml_fields.h"

#include <cmath>

namespace gpuscope::sim {

Status YamlError(const std::string& source, const YAML::Node& node, const std::string& problem) {
  int line = node.IsDefined() ? node.Mark().line : -1;
  return Status::InvalidArgument(source + ":" + std::to_string(line < 0 ? 1 : line + 1) + ": " +
                                 problem);
}

FieldReader::FieldReader(const std::string& source, const YAML::Node& map, std::string what)
    : source_(source), map_(map), what_(std::move(what)) {}

Status FieldReader::CheckIsMap() const {
  if (!map_.IsMap()) return Error(map_, what_ + " must be a mapping");
  return Status::Ok();
}

bool FieldReader::Has(const std::string& key) {
  YAML::Node n = Get(key);
  return map_.IsMap() && n.IsDefined() && !n.IsNull();
}

YAML::Node FieldReader::Get(const std::string& key) {
  known_.insert(key);
  if (!map_.IsMap()) return YAML::Node();
  const YAML::Node& cmap = map_;  // const lookup does not insert
  return cmap[key];
}

Status FieldReader::Double(const std::string& key, double* out, double lo, double hi) {
  if (!Has(key)) return Status::Ok();
  YAML::Node n = Get(key);
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v)) {
    return Error(n, what_ + "." + key + ": expected a number, got '" + n.Scalar() + "'");
  }
  if (v < lo || v > hi) {
    return Error(n, what_ + "." + key + ": " + n.Scalar() + " out of range [" +
                        YAML::Node(lo).Scalar() + ", " + YAML::Node(hi).Scalar() + "]");
  }
  *out = v;
  return Status::Ok();
}

Status FieldReader::Unsigned(const std::string& key, unsigned* out, unsigned lo, unsigned hi) {
  if (!Has(key)) return Status::Ok();
  YAML::Node n = Get(key);
  long long v = 0;
  if (!n.IsScalar() || !YAML::convert<long long>::decode(n, v)) {
    return Error(n, what_ + "." + key + ": expected an integer, got '" + n.Scalar() + "'");
  }
  if (v < lo || v > hi) {
    return Error(n, what_ + "." + key + ": " + n.Scalar() + " out of range [" + std::to_string(lo) +
                        ", " + std::to_string(hi) + "]");
  }
  *out = static_cast<unsigned>(v);
  return Status::Ok();
}

Status FieldReader::U64(const std::string& key, uint64_t* out) {
  if (!Has(key)) return Status::Ok();
  YAML::Node n = Get(key);
  unsigned long long v = 0;
  if (!n.IsScalar() || !YAML::convert<unsigned long long>::decode(n, v)) {
    return Error(n,
                 what_ + "." + key + ": expected a non-negative integer, got '" + n.Scalar() + "'");
  }
  *out = v;
  return Status::Ok();
}

Status FieldReader::String(const std::string& key, std::string* out) {
  if (!Has(key)) return Status::Ok();
  YAML::Node n = Get(key);
  if (!n.IsScalar()) return Error(n, what_ + "." + key + ": expected a string");
  *out = n.Scalar();
  return Status::Ok();
}

Status FieldReader::Bool(const std::string& key, bool* out) {
  if (!Has(key)) return Status::Ok();
  YAML::Node n = Get(key);
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
    return Error(n, what_ + "." + key + ": expected true or false, got '" + n.Scalar() + "'");
  }
  *out = v;
  return Status::Ok();
}

Status FieldReader::Finish() const {
  if (!map_.IsMap()) return Status::Ok();
  for (auto it = map_.begin(); it != map_.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (known_.count(key)) continue;
    std::string list;
    for (const std::string& k : known_) list += (list.empty() ? "" : ", ") + k;
    return YamlError(source_, it->first,
                     "unknown key '" + key + "' in " + what_ + " (known: " + list + ")");
  }
  return Status::Ok();
}

}  // namespace gpuscope::sim

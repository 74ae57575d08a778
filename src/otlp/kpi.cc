#include "otlp/kpi.h"

#include <yaml-cpp/yaml.h>

#include <array>

#include "base/config_file.h"

namespace gpuscope::otlp {
namespace {

struct KnownName {
  std::string_view otel;  // as the application sends it
  Kpi kpi;
};

// OpenTelemetry semantic-convention names are recognised as they are; the
// training names are gpuscope's own (OTel has no convention for them yet).
constexpr std::array kKnownNames = {
    KnownName{"training.step.duration", Kpi::kStepDuration},
    KnownName{"training.samples", Kpi::kSamples},
    KnownName{"training.tokens", Kpi::kTokens},
    KnownName{"gen_ai.server.request.duration", Kpi::kRequestDuration},
    KnownName{"gen_ai.client.operation.duration", Kpi::kRequestDuration},
    KnownName{"http.server.request.duration", Kpi::kRequestDuration},
    KnownName{"gen_ai.server.time_to_first_token", Kpi::kTimeToFirstToken},
    KnownName{"gen_ai.server.time_per_output_token", Kpi::kTimePerOutputToken},
};

constexpr std::array kKpiFamilies = {
    KpiFamily{Kpi::kStepDuration, "gpuscope_app_step_duration_seconds", Kind::kHistogram,
              "Training step duration reported by the application (OTLP), per GPU it runs on."},
    KpiFamily{Kpi::kSamples, "gpuscope_app_samples_total", Kind::kCounter,
              "Training samples processed, reported by the application (OTLP)."},
    KpiFamily{Kpi::kTokens, "gpuscope_app_tokens_total", Kind::kCounter,
              "Tokens processed, reported by the application (OTLP)."},
    KpiFamily{Kpi::kRequestDuration, "gpuscope_app_request_duration_seconds", Kind::kHistogram,
              "Inference (GenAI or HTTP server) request duration reported by the application "
              "(OTLP)."},
    KpiFamily{Kpi::kTimeToFirstToken, "gpuscope_app_time_to_first_token_seconds", Kind::kHistogram,
              "Time to first token reported by the application (OTLP)."},
    KpiFamily{Kpi::kTimePerOutputToken, "gpuscope_app_time_per_output_token_seconds",
              Kind::kHistogram, "Time per output token reported by the application (OTLP)."},
};

const KpiFamily* FamilyOf(Kpi kpi) {
  for (const KpiFamily& f : kKpiFamilies) {
    if (f.kpi == kpi) return &f;
  }
  return nullptr;
}

// Seconds per unit for time units; nullopt for any other unit.
std::optional<double> SecondsPer(std::string_view unit) {
  if (unit == "s" || unit.empty()) return 1.0;
  if (unit == "ms") return 1e-3;
  if (unit == "us") return 1e-6;
  if (unit == "ns") return 1e-9;
  return std::nullopt;
}

std::string Sanitize(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (ok) {
      out.push_back(c);
    } else if (out.empty() || out.back() != '_') {
      out.push_back('_');
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

std::string_view UnitSuffix(std::string_view unit) {
  if (unit == "s") return "_seconds";
  if (unit == "ms") return "_milliseconds";
  if (unit == "By") return "_bytes";
  return "";
}

Naming Generic(std::string_view name, std::string_view unit, Kind kind) {
  Naming n;
  n.family = "gpuscope_app_" + Sanitize(name);
  const std::string_view suffix = UnitSuffix(unit);
  if (!suffix.empty() && !n.family.ends_with(suffix)) n.family += suffix;
  if (kind == Kind::kCounter && !n.family.ends_with("_total")) n.family += "_total";
  n.help = "Application metric " + std::string(name) + " (OTLP).";
  return n;
}

Status Problem(std::string_view file, const YAML::Mark& mark, const std::string& what) {
  return Status::InvalidArgument(std::string(file) + ":" + std::to_string(mark.line + 1) + ": " +
                                 what);
}

}  // namespace

std::span<const KpiFamily> KpiFamilies() { return kKpiFamilies; }

std::string_view KpiName(Kpi kpi) {
  switch (kpi) {
    case Kpi::kStepDuration:
      return "step_duration";
    case Kpi::kSamples:
      return "samples";
    case Kpi::kTokens:
      return "tokens";
    case Kpi::kRequestDuration:
      return "request_duration";
    case Kpi::kTimeToFirstToken:
      return "time_to_first_token";
    case Kpi::kTimePerOutputToken:
      return "time_per_output_token";
    case Kpi::kNone:
      break;
  }
  return "";
}

bool HigherIsWorse(Kpi kpi) { return kpi != Kpi::kSamples && kpi != Kpi::kTokens; }

std::optional<Naming> Conventions::Name(std::string_view name, std::string_view unit,
                                        Kind kind) const {
  std::string_view lookup = name;
  if (auto it = renames_.find(name); it != renames_.end()) {
    lookup = it->second.to;
    if (!it->second.unit.empty()) unit = it->second.unit;
  }
  for (const KnownName& known : kKnownNames) {
    if (known.otel != lookup) continue;
    const KpiFamily* family = FamilyOf(known.kpi);
    const bool duration = family->kind == Kind::kHistogram;
    const std::optional<double> scale = duration ? SecondsPer(unit) : std::optional<double>(1.0);
    // The wrong kind or a non-time unit: kept under a generic name instead.
    if (family->kind != kind || !scale) break;
    return Naming{std::string(family->family), known.kpi, *scale, std::string(family->help)};
  }
  if (Sanitize(lookup).empty()) return std::nullopt;
  return Generic(lookup, unit, kind);
}

Result<Conventions> Conventions::Parse(std::string_view text, std::string_view name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Problem(name, e.mark, e.msg);
  }
  Conventions out;
  if (root.IsNull()) return out;
  if (!root.IsMap()) return Problem(name, root.Mark(), "expected a mapping with 'rename'");
  for (const auto& item : root) {
    const std::string key = item.first.IsScalar() ? item.first.Scalar() : "";
    if (key != "rename") return Problem(name, item.first.Mark(), "unknown key '" + key + "'");
    if (!item.second.IsMap() && !item.second.IsNull()) {
      return Problem(name, item.second.Mark(), "'rename' must map names to names");
    }
    for (const auto& entry : item.second) {
      GPUSCOPE_RETURN_IF_ERROR(out.AddRename(entry.first, entry.second, name));
    }
  }
  return out;
}

Status Conventions::AddRename(const YAML::Node& from, const YAML::Node& to, std::string_view file) {
  if (!from.IsScalar() || from.Scalar().empty()) {
    return Problem(file, from.Mark(), "a metric name must be a non-empty string");
  }
  Rename rename;
  if (to.IsScalar()) {
    rename.to = to.Scalar();
  } else if (to.IsMap()) {
    for (const auto& field : to) {
      const std::string key = field.first.IsScalar() ? field.first.Scalar() : "";
      if ((key != "to" && key != "unit") || !field.second.IsScalar()) {
        return Problem(file, field.first.Mark(),
                       "expected 'to: NAME' and optionally 'unit: s|ms|us|ns', not '" + key + "'");
      }
      (key == "to" ? rename.to : rename.unit) = field.second.Scalar();
    }
  }
  if (rename.to.empty()) {
    return Problem(file, to.Mark(), "'" + from.Scalar() + "' is renamed to nothing");
  }
  if (!rename.unit.empty() && !SecondsPer(rename.unit)) {
    return Problem(file, to.Mark(), "unit '" + rename.unit + "' is not one of s, ms, us, ns");
  }
  if (!renames_.emplace(from.Scalar(), std::move(rename)).second) {
    return Problem(file, from.Mark(), "'" + from.Scalar() + "' is renamed twice");
  }
  return Status::Ok();
}

Result<Conventions> Conventions::Load(const std::string& path) {
  Result<std::string> text = base::ReadConfigFile(path, "KPI mapping file");
  if (!text.ok()) return text.status();
  return Parse(*text, path);
}

}  // namespace gpuscope::otlp

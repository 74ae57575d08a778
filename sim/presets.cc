#include "presets.h"

#include <array>

#include "nvml/abi.h"

namespace gpuscope::sim {
namespace {

namespace n = gpuscope::nvml;

// Sizes of the real H100/A100 80GB instances where known, else scaled.
constexpr MigProfile kMig80gbHopper[] = {
    {"1g.10gb", 1, 9984, 16, 7},   {"1g.20gb", 1, 19968, 16, 4}, {"2g.20gb", 2, 20096, 32, 3},
    {"3g.40gb", 3, 40448, 60, 2},  {"4g.40gb", 4, 40448, 64, 1}, {"7g.80gb", 7, 80896, 132, 1},
};
constexpr MigProfile kMig80gbAmpere[] = {
    {"1g.10gb", 1, 9984, 14, 7},   {"1g.20gb", 1, 19968, 14, 4}, {"2g.20gb", 2, 20096, 28, 3},
    {"3g.40gb", 3, 40448, 42, 2},  {"4g.40gb", 4, 40448, 56, 1}, {"7g.80gb", 7, 80896, 98, 1},
};
constexpr MigProfile kMigH200[] = {
    {"1g.18gb", 1, 17920, 16, 7},  {"1g.35gb", 1, 35584, 16, 4},  {"2g.35gb", 2, 35584, 32, 3},
    {"3g.71gb", 3, 71424, 60, 2},  {"4g.71gb", 4, 71424, 64, 1},  {"7g.141gb", 7, 142848, 132, 1},
};
constexpr MigProfile kMigB200[] = {
    {"1g.23gb", 1, 23296, 18, 7},  {"1g.45gb", 1, 45568, 18, 4},  {"2g.45gb", 2, 45568, 36, 3},
    {"3g.90gb", 3, 90624, 70, 2},  {"4g.90gb", 4, 90624, 74, 1},  {"7g.180gb", 7, 181248, 148, 1},
};

const std::array<Preset, 6> kPresets = {{
    {"h100-sxm", "NVIDIA H100 80GB HBM3", n::kArchHopper, 9, 0, 0x233010DE, 0x16C110DE, 81559,
     479, "HBM3", 700, 200, 700, 1980, 2619, 345, 2619, 0, 92, 89, 87, 95, 5, 16, 18, 26.562,
     132, true, true, true, 70, 35, 630, 65, 760, n::kBrandNvidia, "96.00.99.00.01",
     kMig80gbHopper},
    {"h200", "NVIDIA H200", n::kArchHopper, 9, 0, 0x233510DE, 0x18BE10DE, 143771, 614, "HBM3e",
     700, 200, 700, 1980, 3201, 345, 3201, 0, 92, 89, 87, 95, 5, 16, 18, 26.562, 132, true,
     true, true, 75, 28, 630, 54, 760, n::kBrandNvidia, "96.00.A5.00.01", kMigH200},
    {"a100-sxm", "NVIDIA A100-SXM4-80GB", n::kArchAmpere, 8, 0, 0x20B210DE, 0x147E10DE, 81920,
     763, "HBM2e", 400, 100, 400, 1410, 1593, 210, 1593, 0, 92, 89, 85, 95, 4, 16, 12, 25.0,
     108, false, true, true, 60, 24, 380, 66, 440, n::kBrandTesla, "92.00.45.00.06",
     kMig80gbAmpere},
    {"l4", "NVIDIA L4", n::kArchAda, 8, 9, 0x27B810DE, 0x16CA10DE, 23034, 556, "GDDR6", 72, 40,
     72, 2040, 6251, 210, 405, 8, 92, 89, 87, 0, 4, 16, 0, 0.0, 58, false, false, true, 17, 33,
     70, 72, 80, n::kBrandNvidia, "95.04.29.00.06", {}},
    {"b200", "NVIDIA B200", n::kArchBlackwell, 10, 0, 0x290110DE, 0x199910DE, 183359, 728,
     "HBM3e", 1000, 200, 1000, 1965, 3996, 120, 3996, 0, 92, 89, 87, 95, 5, 16, 18, 53.125,
     148, true, true, true, 170, 35, 950, 62, 1080, n::kBrandNvidia, "97.00.5A.00.01",
     kMigB200},
    // Extra (not in gpu-models.md): a pre-Ampere board, for page retirement.
    {"v100-sxm2", "Tesla V100-SXM2-32GB", n::kArchVolta, 7, 0, 0x1DB510DE, 0x124910DE, 32768,
     258, "HBM2", 300, 150, 300, 1530, 877, 135, 877, 0, 90, 87, 83, 95, 3, 16, 6, 25.0, 80,
     false, true, false, 40, 33, 290, 68, 330, n::kBrandTesla, "88.00.80.00.01", {}},
}};

}  // namespace

const Preset* FindPreset(std::string_view key) {
  for (const Preset& p : kPresets) {
    if (key == p.key) return &p;
  }
  return nullptr;
}

std::string PresetKeyList() {
  std::string out;
  for (const Preset& p : kPresets) {
    if (!out.empty()) out += ", ";
    out += p.key;
  }
  return out;
}

const MigProfile* FindMigProfile(const Preset& preset, std::string_view name) {
  for (const MigProfile& m : preset.mig_profiles) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

}  // namespace gpuscope::sim

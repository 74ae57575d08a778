#include "otlp/wire.h"

#include "base/module.h"

namespace gpuscope::otlp {

const Result<const WireCodec*>& Wire() {
  const Result<const WireCodec*>& wire =
      ModuleTable(kWireModule, "gpuscope_otlp_wire", gpuscope_otlp_wire);
  if (wire.ok()) (*wire)->set_log_level(log::GetLevel());
  return wire;
}

}  // namespace gpuscope::otlp

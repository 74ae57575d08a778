#include "otlp/wire.h"

#include "base/module.h"

namespace gpuscope::otlp {

const Result<const WireCodec*>& Wire() {
  return ModuleTable(kWireModule, "gpuscope_otlp_wire", gpuscope_otlp_wire);
}

}  // namespace gpuscope::otlp

#include "reference/instantiations.h"

namespace flashproof::reference {
FLASHPROOF_REFERENCE_DEFINE(double)
}

// The backend names of case files and records, apart from the engines so that what only reads and
// writes case files (scripts/fuzz-parsers.sh's case-file target) links without them.
#include "reference/reference.h"

namespace flashproof::reference {

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::fast: return "fast";
    case Backend::mpfr: return "mpfr";
    case Backend::cpp_bin_float: return "cpp_bin_float";
  }
  return "?";
}

}  // namespace flashproof::reference

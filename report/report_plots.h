// The plots of one dtype's section: error against seqlen_k, head_dim and logit_scale, and the
// histogram of error/bound, from the merged records.
#pragma once

#include <string>
#include <vector>

#include "report/report_model.h"

namespace flashproof::report {

struct Figure {
  std::string svg;
  std::string caption;
};

std::vector<Figure> dtype_figures(const Report& report, const DtypeReport& d);

// The report's implementations in display order; an implementation's position is its plot style,
// so it has the same colour and marker in every plot.
std::vector<std::string> report_impls(const Report& report);

}  // namespace flashproof::report

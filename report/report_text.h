// Sentences the three outputs share: the one-line summary and the explanations of the tables.
#pragma once

#include <string>

#include "report/report_model.h"

namespace flashproof::report {

// "14 records from 2 inputs (1 duplicate dropped, 1 unparsable line skipped): 9 pass, 1 fail,
// 2 out-of-domain, 0 not judged, 2 crash; largest error/bound 0.9 (fp16 fa2 case 3 dV)".
std::string one_line_summary(const Report& report);

inline constexpr const char* kPercentileNote =
    "Each case contributes one value per tensor: its largest element error (errors.max_ulps, "
    "errors.max_rel). max, p50 and p99 are over those per-case values (nearest rank: p99 is the "
    "smallest value at or above 99% of the cases), over the cases judged pass or fail; "
    "out-of-domain cases and crashes are only counted.";
inline constexpr const char* kRatioNote =
    "error / naive's error: errors.max_abs / baseline_errors.max_abs per case (the naive "
    "implementation's error on the same inputs); cases where the naive error is 0, or where naive "
    "returned NaN or inf for a finite exact value (its error is unbounded there), are skipped. "
    "error / rule 3 tolerance: errors.max_abs / tolerance per case, over the cases where rule 3 "
    "applies (tolerance: k times naive's error plus a rounding-noise floor of 1 unit at the "
    "tensor's largest magnitude); 1 or more is a rule-3 report. A large ratio to naive's error "
    "with this ratio below 1 means naive's error was below the floor, which then sets the "
    "tolerance.";
inline constexpr const char* kBoundNote =
    "error / bound: rigorous_bound.max_error_over_bound, the largest ratio of an element's error "
    "to "
    "its proven error bound; 1 or more means an error reached its bound. \"no finite bound\": "
    "cases where the arithmetic model gives some compared element no finite bound (an intermediate "
    "may overflow the dtype, docs/error-bounds.md), so rule 2 cannot judge it; cases where no "
    "element has one are not in the buckets.";
inline constexpr const char* kWorstNote =
    "The cases with the largest error / bound (over their tensors; ties by ULPs). Each is saved "
    "under cases/; its replay command re-runs it.";

}  // namespace flashproof::report

// Sentences the three outputs share: the one-line summary and the explanations of the tables.
#pragma once

#include <string>

#include "report/report_model.h"

namespace flashproof::report {

// "14 records from 2 inputs (1 duplicate dropped, 1 unparsable line skipped): 9 pass, 1 fail
// (1 non-finite), 2 out-of-domain, 0 not judged, 2 crash; largest finite error/bound 0.9 (fp16 fa2
// case 3 dV)". "(N non-finite)" whenever some record failed: the fails with a NaN or inf where the
// exact value is finite (FuzzRecord::non_finite_failure), which no error/bound shows; the largest
// error/bound is over the values returned finite (largest_finite_error_over_bound).
std::string one_line_summary(const Report& report);

// Records with status fail and a non-finite failure, over the whole report.
std::size_t non_finite_failures(const Report& report);
// The largest error/bound over finite values among the dtypes (the first dtype's on a tie), and
// that dtype; nullptr when none has one.
const WorstCase* largest_finite_error_over_bound(const Report& report, const DtypeReport** dtype = nullptr);

inline constexpr const char* kPercentileNote =
    "Each case contributes one value per tensor: its largest element error (errors.max_ulps, "
    "errors.max_rel). max, p50 and p99 are over those per-case values (nearest rank: p99 is the "
    "smallest value at or above 99% of the cases), over the cases judged pass or fail; "
    "out-of-domain cases and crashes are only counted. Elements returned NaN or inf where the "
    "exact value is finite are in none of these errors: the \"non-finite fail\" columns count them.";
inline constexpr const char* kRatioNote =
    "error / naive's error: errors.max_abs / baseline_errors.max_abs per case (the naive "
    "implementation's error on the same inputs); cases where the naive error is 0, or where naive "
    "returned NaN or inf for a finite exact value (its error is unbounded there), are skipped. "
    "error / rule 3 tolerance: errors.max_abs / tolerance per case, over the cases where rule 3 "
    "applies (tolerance: k times naive's error plus a rounding-noise floor of 1 unit at the "
    "tensor's largest magnitude); 1 or more is a rule-3 report. A large ratio to naive's error "
    "with this ratio below 1 means naive's error was below the floor, which then sets the "
    "tolerance.";
inline constexpr const char* kJudgedNote =
    "judged: records (or tensors) whose verdict is pass or fail, decided by the rigorous bound "
    "(rule 2) with every element held to its envelope. not judged: nothing failed, but some "
    "element had no finite or no useful bound (docs/error-bounds.md \"Not judged\"), so only its "
    "envelope judged it; never a pass. Records by the largest visible |scale q.k| of their case "
    "(unknown: a crash whose case could not be scanned).";
inline constexpr const char* kBoundNote =
    "error / bound: rigorous_bound.max_error_over_bound, the largest ratio of an element's error "
    "to its proven error bound, over the elements returned finite; 1 or more means an error "
    "reached its bound. \"non-finite fail\": cases where the tensor failed with NaN or inf where "
    "the exact value is finite (errors.nan_mismatch, inf_mismatch): an unbounded error that the "
    "buckets and max, over the finite values, do not show. \"no finite bound\": "
    "cases where the arithmetic model gives some compared element no finite bound (an intermediate "
    "may overflow the dtype, docs/error-bounds.md), so rule 2 cannot judge it; cases where no "
    "element has one are not in the buckets.";
inline constexpr const char* kWorstNote =
    "The cases with the largest error / bound (over their tensors; ties by ULPs). A tensor that "
    "failed with NaN or inf where the exact value is finite ranks above every finite ratio, its "
    "error / bound shown as nan (some NaN) or inf, and the \"non-finite\" column counts its NaN and "
    "inf elements. Each is saved under cases/; its replay command re-runs it.";

}  // namespace flashproof::report

#include "properties/runner.h"

#include <rapidcheck.h>

#include <rapidcheck/detail/Configuration.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <sstream>

#include "harness/case_file.h"
#include "kernels/registry.h"
#include "properties/generators.h"

namespace flashproof::properties {

PropertyRun run_property(const Property& property, AttentionImpl& impl, const std::string& test_id,
                         int max_success, std::optional<std::uint64_t> seed) {
  GenLimits limits = limits_for(impl, property.backward);
  if (property.max_work > 0) limits.max_work = std::min(limits.max_work, property.max_work);
  limits.min_seqlen = std::min(std::max(limits.min_seqlen, property.min_seqlen), limits.max_seqlen);
  limits.min_seqlen_k = property.min_seqlen_k;
  PropertyRun run;
  // The last failing evaluation is the minimal counterexample: shrinking adopts a candidate only
  // when it fails, and stops at one none of whose shrinks fails.
  std::optional<Case> last_failure;
  std::string last_why;
  // A quarter of the cases of a tiled kernel run its other compiled tile set (kernels/registry.h;
  // an unregistered implementation's own with_alternate_tiles), where the property applies to it:
  // each compiled kernel is judged on generated cases.
  std::unique_ptr<AttentionImpl> own_variant;
  AttentionImpl* variant = tile_variant(impl);
  if (variant == nullptr && find_implementation(impl.name()) != &impl) {
    own_variant = impl.with_alternate_tiles();
    variant = own_variant.get();
  }
  if (variant != nullptr && property.applies != nullptr && !property.applies(*variant)) variant = nullptr;
  const auto check = [&] {
    Case c = *gen_case(impl, limits, property.mask);
    const bool alternate = variant != nullptr && *rc::gen::weightedElement<bool>({{3, false}, {1, true}});
    AttentionImpl& judged = alternate ? *variant : impl;
    c.impl = judged.name();
    RC_CLASSIFY(alternate, "alternate tiles");
    // Drawn, then fitted into what the implementation declares (core/support.h): counted in the
    // coverage report, never dropped; what is still outside it (a dtype, the backward) is discarded.
    const Problem drawn = c.problem;
    const bool fitted = fit_to_support(c.problem, judged.declared_support());
    RC_CLASSIFY(fitted, "fitted to the declared support");
    RC_PRE(!fitted || c.problem.seqlen_k >= limits.min_seqlen_k || drawn.seqlen_k < limits.min_seqlen_k);
    RC_PRE(refusal(judged, c.problem, c.backward).empty());
    const std::vector<std::string> tags = case_tags(c);
    RC_TAG(tags[1], tags[4]);  // mask kind and distribution: the coverage report
    Outcome o;
    try {
      o = property.check(judged, c);
    } catch (const RefusedAtRunTime& e) {  // refused when it ran: unsupported, not a failure
      RC_DISCARD(std::string("refused at run time: ") + e.what());
    } catch (const std::exception& e) {
      o = Outcome{false, std::string("threw: ") + e.what(), {}};
    }
    for (const std::string& t : o.tags) RC_CLASSIFY(true, t);
    if (!o.holds) {
      last_failure = c;
      last_why = o.why;
      RC_FAIL(o.why);
    }
  };
  rc::detail::TestMetadata metadata;
  metadata.id = test_id;
  metadata.description = std::string(property.name) + " on " + impl.name();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  if (max_success > 0) params.maxSuccess = max_success;
  if (seed) params.seed = *seed;
  const rc::detail::TestResult result = rc::detail::checkTestable(check, metadata, params);
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  run.message = message.str();
  if (result.is<rc::detail::SuccessResult>()) {
    run.cases = result.get<rc::detail::SuccessResult>().numSuccess;
    run.passed = run.cases > 0;
    if (run.cases == 0) run.message += "\nno case ran (RC_PARAMS max_success = 0?): a property that ran zero cases fails";
  } else if (result.is<rc::detail::FailureResult>()) {
    const auto& failure = result.get<rc::detail::FailureResult>();
    run.cases = failure.numSuccess;
    run.counterexample = last_failure;
    run.why = last_why;
    rc::detail::Configuration config;
    config.reproduce[test_id] = failure.reproduce;
    run.reproduce = "RC_PARAMS=\"" + rc::detail::configToMinimalString(config) + "\"";
    if (last_failure) {
      const char* dir_env = std::getenv("FLASHPROOF_CASE_DIR");
      const std::filesystem::path dir = dir_env != nullptr && *dir_env != 0 ? dir_env : "failed-cases";
      std::string file = test_id;
      for (char& ch : file)
        if (ch == '/' || ch == ':' || ch == ' ') ch = '_';
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      run.case_file = (dir / (file + ".json")).string();
      try {
        write_case_file(run.case_file, *last_failure, {},
                        std::string(property.name) + " fails: " + last_why + "; re-run the search with " + run.reproduce,
                        property.name);
      } catch (const std::exception& e) {
        run.case_file = std::string("(not saved: ") + e.what() + ")";
      }
      run.message += "\n" + run.reproduce + "\ncase file: " + run.case_file + " (flashproof replay " + run.case_file + ")";
    }
  } else if (result.is<rc::detail::GaveUpResult>()) {
    run.cases = result.get<rc::detail::GaveUpResult>().numSuccess;
  }
  return run;
}

}  // namespace flashproof::properties

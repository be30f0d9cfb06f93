// flashproof._core: the harness's C++ (harness/, fuzz/, properties/, kernels/registry.h) for the
// Python package. Everything user-facing (argument parsing, NumPy/torch conversions, error
// wording) is in python/flashproof/; this file exposes the harness calls with bytes for tensors.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include "cli/entry.h"
#include "core/kv_cache.h"
#include "fuzz/campaign.h"
#include "harness/case_cost.h"
#include "harness/case_file.h"
#include "harness/check.h"
#include "harness/check_render.h"
#include "harness/support_record.h"
#include "kernels/registry.h"
#include "properties/runner.h"
#include "report/report_command.h"
#include "python_attention.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace flashproof::python {
namespace {

// A case as the package holds it: the harness's Case, the generator's kind (generated cases) and,
// for a case read from a case file, its check options and property.
struct CaseBox {
  Case c;
  std::string kind;
  CheckOptions options;
  std::string note, property;
  bool fitted = false;  // generated, then fitted into a declared support (core/support.h)
};

// A declared support from its JSON form (harness/support_record.h); "" declares everything.
Support support_arg(const std::string& text) {
  if (text.empty()) return {};
  return json::parse(text).get<Support>();
}

DType dtype_arg(const std::string& name) {
  const auto t = parse_dtype(name);
  if (!t) throw std::invalid_argument("unsupported dtype '" + name + "' (fp16, bf16, fp32)");
  return *t;
}

CaseBox make_case(std::int64_t batch, std::int64_t heads_q, std::int64_t heads_kv, std::int64_t seqlen_q,
                  std::int64_t seqlen_k, std::int64_t head_dim, const std::string& dtype, std::int64_t window_left,
                  std::int64_t window_right, std::optional<double> scale, const std::string& distribution,
                  std::uint64_t seed, bool backward, const std::vector<std::int64_t>& cu_seqlens_q,
                  const std::vector<std::int64_t>& cu_seqlens_k, std::optional<double> softcap,
                  const std::vector<double>& alibi_slopes, const std::vector<std::int64_t>& cache_seqlens,
                  std::int64_t page_size, std::optional<std::int64_t> num_pages, const std::vector<std::int64_t>& block_table,
                  std::int64_t num_splits, std::int64_t seqlen_new) {
  CaseBox box;
  Problem& p = box.c.problem;
  // A KV cache (docs/spec.md "KV caches"): pages default to one per table entry, in order.
  p.cache_seqlens = cache_seqlens, p.page_size = page_size, p.num_splits = num_splits, p.seqlen_new = seqlen_new;
  p.block_table = block_table;
  if (page_size > 0 && seqlen_k > 0 && seqlen_k % page_size == 0 && batch > 0 && batch <= Problem::max_elements / seqlen_k) {
    p.num_pages = num_pages.value_or(batch * (seqlen_k / page_size));
    // A pool past K's element limit gets no table: validate() below names it, nothing is allocated.
    if (block_table.empty() && p.num_pages > 0 && p.num_pages <= Problem::max_elements / page_size)
      p.block_table = page_table(batch, seqlen_k / page_size, p.num_pages, 0);
  } else if (num_pages) {
    p.num_pages = *num_pages;  // validate() names what is wrong
  }
  p.batch = batch, p.heads_q = heads_q, p.heads_kv = heads_kv, p.seqlen_q = seqlen_q, p.seqlen_k = seqlen_k;
  // A packed batch (docs/spec.md "Packed batches"); validate() below gives bad offsets' one line.
  p.cu_seqlens_q = cu_seqlens_q, p.cu_seqlens_k = cu_seqlens_k;
  p.head_dim = head_dim;
  p.dtype = dtype_arg(dtype);
  p.window_left = window_left < 0 ? -1 : window_left;
  p.window_right = window_right < 0 ? -1 : window_right;
  if (scale) {
    const float s = static_cast<float>(*scale);
    if (static_cast<double>(s) != *scale)
      throw std::invalid_argument("scale " + std::to_string(*scale) + " is not an fp32 value (round it with numpy.float32 first)");
    p.scale = s;
  }
  // The soft cap and ALiBi's slopes (docs/spec.md "Soft cap and ALiBi"), fp32 values as the scale.
  const auto fp32 = [](const char* name, double x) {
    const float f = static_cast<float>(x);
    if (std::isfinite(x) && static_cast<double>(f) != x)
      throw std::invalid_argument(std::string(name) + " " + std::to_string(x) +
                                  " is not an fp32 value (round it with numpy.float32 first)");
    return f;
  };
  if (softcap) p.softcap = fp32("softcap", *softcap);
  for (double x : alibi_slopes) p.alibi_slopes.push_back(fp32("alibi slope", x));
  if (const std::string e = p.validate(); !e.empty()) throw std::invalid_argument(e);
  const auto d = parse_distribution(distribution);
  if (!d) {
    std::string names;
    for (const auto& n : distribution_names()) names += (names.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown distribution '" + distribution + "' (" + names + ")");
  }
  box.c.dist = *d;
  box.c.seed = seed;
  box.c.backward = backward;
  box.c.impl = "";
  return box;
}

// The limits `flashproof check` applies (harness/case_cost.h), in the package's argument names: a
// case past them raises one line instead of running for hours (with the GIL held) or meeting the
// OOM killer.
void check_case_cost(const CaseBox& b, bool backward, std::optional<double> max_work,
                     std::optional<double> max_memory_gib) {
  for (const auto& [name, v] : {std::pair{"max_work", max_work}, std::pair{"max_memory_gib", max_memory_gib}})
    if (v && !(*v > 0 && *v < 1e300)) throw std::invalid_argument(std::string(name) + " must be a positive number");
  const CaseCost cost = case_cost(b.c.problem, backward);
  const double work_limit = max_work.value_or(kDefaultMaxWork);
  const double memory_limit = max_memory_gib.value_or(physical_memory_gib());
  char line[320];
  if (cost.work > work_limit) {
    std::snprintf(line, sizeof line,
                  "the case needs %.3g multiply-adds (batch*heads*seqlen_q*seqlen_k*head_dim), more than "
                  "max_work=%.3g; pass a larger max_work to run it",
                  cost.work, work_limit);
    throw std::invalid_argument(line);
  }
  if (cost.memory_gib > memory_limit) {
    std::snprintf(line, sizeof line,
                  "the case needs about %.3g GiB, more than max_memory_gib=%.3g (%s); pass a larger "
                  "max_memory_gib to run it",
                  cost.memory_gib, memory_limit, max_memory_gib ? "given" : "this machine's memory");
    throw std::invalid_argument(line);
  }
}

CaseBox generate(std::uint64_t seed, std::uint64_t index, const std::vector<std::string>& dtypes,
                 const std::string& direction, std::int64_t max_seqlen, std::int64_t max_work,
                 const std::string& support) {
  fuzz::GeneratorSettings s;
  s.seed = seed;
  s.dtypes.clear();
  for (const auto& d : dtypes) s.dtypes.push_back(dtype_arg(d));
  if (s.dtypes.empty()) throw std::invalid_argument("dtypes must name at least one dtype");
  if (direction == "both") s.direction = fuzz::GeneratorSettings::Direction::both;
  else if (direction == "forward") s.direction = fuzz::GeneratorSettings::Direction::forward;
  else if (direction == "backward") s.direction = fuzz::GeneratorSettings::Direction::backward;
  else throw std::invalid_argument("direction must be forward, backward or both, got '" + direction + "'");
  if (max_seqlen < 1) throw std::invalid_argument("max_seqlen must be at least 1");
  if (max_work < 1) throw std::invalid_argument("max_work must be at least 1");
  s.max_seqlen = max_seqlen;
  s.max_work = max_work;
  fuzz::FuzzCase f = fuzz::generate_case(s, index);
  const bool fitted = fit_to_support(f.c.problem, support_arg(support));
  return CaseBox{f.c, f.kind, {}, {}, {}, fitted};
}

CaseBox read_case(const std::string& path) {
  CaseFile cf = read_case_file(path);
  return CaseBox{cf.c, {}, cf.options, cf.note, cf.property};
}

nb::bytes doubles(const std::vector<double>& v) {
  return nb::bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}

// A KV-cache case's K and V are its cache (NaN in unused slots) and its appended keys come apart,
// as check hands them to an implementation; Q and dO's bytes are the same in either layout.
nb::dict inputs_of(const CaseBox& box) {
  const Inputs in = generate_inputs(box.c.problem, box.c.dist, box.c.seed);
  nb::dict d;
  std::vector<std::pair<const char*, const HostTensor*>> tensors = {{"q", &in.q}, {"k", &in.k}, {"v", &in.v}, {"dout", &in.dout}};
  if (in.cache) {
    tensors[1].second = &in.cache->k, tensors[2].second = &in.cache->v;
    if (box.c.problem.appends()) tensors.insert(tensors.end(), {{"k_new", &in.cache->k_new}, {"v_new", &in.cache->v_new}});
  }
  for (const auto& [name, t] : tensors) {
    const std::size_t width = static_cast<std::size_t>(dtype_bytes(t->dtype()));
    std::string buffer(static_cast<std::size_t>(t->numel()) * width, '\0');
    t->for_each_bits([&](std::size_t x, std::uint32_t bits) {
      if (width == 4) std::memcpy(buffer.data() + x * 4, &bits, 4);
      else {
        const auto half = static_cast<std::uint16_t>(bits);
        std::memcpy(buffer.data() + x * 2, &half, 2);
      }
    });
    d[name] = nb::bytes(buffer.data(), buffer.size());
  }
  return d;
}

// The certified reference the check judges against: per tensor (value, bound, magnitude, checked)
// as float64 bytes in the tensor's logical order, plus the domain verdict of the inputs.
nb::dict reference_of(const CaseBox& box, bool backward, int threads) {
  Case c = box.c;
  c.backward = backward;
  CheckOptions opt = box.options;
  opt.reference.threads = threads;
  const CaseContext ctx = prepare_case(c, opt, false);
  nb::dict d;
  auto add = [&](const char* name, const reference::CertifiedTensor& t) {
    std::vector<double> checked(t.checked.begin(), t.checked.end());
    d[name] = nb::make_tuple(doubles(t.value), doubles(t.bound), doubles(t.magnitude), doubles(checked));
  };
  add("o", ctx.reference.forward.o);
  add("lse", ctx.reference.forward.lse);
  if (ctx.reference.backward) {
    add("dq", ctx.reference.backward->dq);
    add("dk", ctx.reference.backward->dk);
    add("dv", ctx.reference.backward->dv);
  }
  d["inputs_in_domain"] = ctx.domain_note.empty();
  d["domain_note"] = ctx.domain_note;
  return d;
}

reference::Backend backend_arg(const std::string& name) {
  if (name == "fast") return reference::Backend::fast;
  if (name == "mpfr") return reference::Backend::mpfr;
  if (name == "cpp_bin_float") return reference::Backend::cpp_bin_float;
  throw std::invalid_argument("unknown reference backend '" + name + "' (fast, mpfr, cpp_bin_float)");
}

AttentionImpl& resolve(nb::handle impl) {
  if (nb::isinstance<nb::str>(impl)) {
    const std::string name = nb::cast<std::string>(impl);
    AttentionImpl* found = find_implementation(name);
    if (!found) throw std::invalid_argument("unknown implementation '" + name + "' (flashproof.implementations())");
    return *found;
  }
  return *nb::cast<PythonAttention*>(impl);
}

// Runs f; when a Python callable raised inside, its exception (not the harness's one-line copy)
// reaches the caller.
template <class F>
auto with_python_errors(nb::handle impl, F&& f) {
  PythonAttention* py = nb::isinstance<PythonAttention>(impl) ? nb::cast<PythonAttention*>(impl) : nullptr;
  if (py) py->take_pending_error();
  try {
    return f();
  } catch (...) {
    if (py)
      if (std::exception_ptr pending = py->take_pending_error()) std::rethrow_exception(pending);
    throw;
  }
}

std::string check(const CaseBox& box, nb::handle impl, bool use_saved_options, const std::string& backend,
                  int threads) {
  AttentionImpl& target = resolve(impl);
  Case c = box.c;
  c.impl = target.name();
  CheckOptions opt = use_saved_options ? box.options : CheckOptions{};
  if (!use_saved_options) opt.reference.backend = backend_arg(backend);
  opt.reference.threads = threads;
  return with_python_errors(impl, [&] { return to_json(run_check(c, target, opt)); });
}

// A case file's property on its case (flashproof replay of a property's failure).
std::pair<bool, std::string> replay_property(const CaseBox& box, nb::handle impl) {
  const properties::Property* property = properties::find_property(box.property);
  if (!property) throw std::invalid_argument("unknown property '" + box.property + "' in the case file");
  AttentionImpl& target = resolve(impl);
  if (const std::string e = refusal(target, box.c.problem, box.c.backward); !e.empty())
    throw std::invalid_argument(target.name() + " does not support this case: " + e);
  const properties::Outcome o = with_python_errors(impl, [&] { return property->check(target, box.c); });
  return {o.holds, o.why};
}

// Registers (or re-binds) "python:<name>" for a campaign.
PythonAttention& registered(const PythonImplSettings& settings, nb::object runner) {
  if (AttentionImpl* existing = find_implementation(settings.name)) {
    auto* py = dynamic_cast<PythonAttention*>(existing);
    if (!py) throw std::invalid_argument("implementation name '" + settings.name + "' is taken by a built-in one");
    py->rebind(settings, std::move(runner));
    return *py;
  }
  auto impl = std::make_unique<PythonAttention>(settings, std::move(runner));
  PythonAttention& ref = *impl;
  register_implementation(std::move(impl));
  return ref;
}

nb::dict fuzz_campaign(nb::handle impl, std::uint64_t seed, std::optional<std::uint64_t> cases,
                       std::optional<double> minutes, const std::string& out, const std::vector<std::string>& dtypes,
                       const std::string& direction, std::int64_t max_seqlen, std::int64_t max_work,
                       double case_timeout, bool shrink, bool progress) {
  fuzz::CampaignSpec spec;
  const CaseBox probe = generate(seed, 0, dtypes, direction, max_seqlen, max_work, "");  // validates the settings
  (void)probe;
  spec.generator.seed = seed;
  spec.generator.dtypes.clear();
  for (const auto& d : dtypes) spec.generator.dtypes.push_back(dtype_arg(d));
  spec.generator.direction = direction == "forward"    ? fuzz::GeneratorSettings::Direction::forward
                             : direction == "backward" ? fuzz::GeneratorSettings::Direction::backward
                                                       : fuzz::GeneratorSettings::Direction::both;
  spec.generator.max_seqlen = max_seqlen;
  spec.generator.max_work = max_work;
  if (cases.has_value() == minutes.has_value()) throw std::invalid_argument("give exactly one of cases and minutes");
  if (minutes && !(*minutes > 0 && *minutes <= fuzz::kMaxMinutes))
    throw std::invalid_argument("minutes must be positive and at most ten years");
  if (!(case_timeout > 0)) throw std::invalid_argument("case_timeout must be positive");
  spec.cases = cases;
  spec.minutes = minutes;
  spec.out = out;
  spec.jobs = 1;  // one child at a time, forked from the thread that holds the GIL
  spec.case_timeout = case_timeout;
  spec.shrink = shrink;
  spec.impls = {resolve(impl).name()};
  std::ostringstream quiet;
  fuzz::CampaignResult r;
  {
    ForkGuard guard;
    r = fuzz::run_campaign(spec, progress ? static_cast<std::ostream&>(std::cerr) : quiet, false);
  }
  nb::dict d;
  d["run"] = r.run, d["resumed"] = r.resumed, d["pass"] = r.pass, d["fail"] = r.fail;
  d["out_of_domain"] = r.out_of_domain, d["not_judged"] = r.not_judged, d["crash"] = r.crash;
  d["pass_baseline_rule"] = r.pass_baseline_rule, d["fail_baseline_rule"] = r.fail_baseline_rule;
  d["failure_files"] = r.failure_files;
  std::uint64_t unsupported = 0;
  for (const auto& [name, n] : r.unsupported) unsupported += n;
  d["unsupported"] = unsupported;
  std::uint64_t fitted = 0;
  for (const auto& [name, n] : r.fitted) fitted += n;
  d["fitted"] = fitted;
  return d;
}

nb::list run_properties(nb::handle impl, const std::vector<std::string>& names, int cases,
                        std::optional<std::uint64_t> seed, bool has_backward, const std::string& id_prefix) {
  AttentionImpl& target = resolve(impl);
  nb::list results;
  for (const std::string& name : names) {
    const properties::Property* found = properties::find_property(name);
    if (!found) throw std::invalid_argument("unknown property '" + name + "' (flashproof.properties.names())");
    properties::Property property = *found;
    property.backward = property.backward && has_backward;  // forward-only callables: forward cases
    const properties::PropertyRun run = with_python_errors(
        impl, [&] { return properties::run_property(property, target, id_prefix + name, cases, seed); });
    nb::dict d;
    d["name"] = name, d["passed"] = run.passed, d["cases"] = run.cases, d["why"] = run.why;
    d["message"] = run.message, d["reproduce"] = run.reproduce, d["case_file"] = run.case_file;
    if (run.counterexample) d["counterexample"] = CaseBox{*run.counterexample, {}, {}, {}, name};
    else d["counterexample"] = nb::none();
    results.append(d);
  }
  return results;
}

// The properties that apply to an implementation (and need no backward it lacks), in suite order.
std::vector<std::string> property_names(nb::handle impl, bool has_backward) {
  AttentionImpl& target = resolve(impl);
  std::vector<std::string> names;
  for (const properties::Property& p : properties::all_properties()) {
    if (!p.applies(target)) continue;
    const std::string name = p.name;
    if (!has_backward && (name == "gradient-finite-differences" || name == "backward-determinism")) continue;
    names.push_back(name);
  }
  return names;
}

PythonImplSettings settings_of(const std::string& name, bool has_backward, const std::vector<std::string>& dtypes,
                               const std::string& model, const std::string& gqa, const std::string& support) {
  PythonImplSettings s;
  s.support = support_arg(support);
  s.name = name;
  s.description = "a Python callable (flashproof package)";
  s.has_backward = has_backward;
  for (const auto& d : dtypes) s.dtypes.insert(dtype_arg(d));
  if (model == "flash") s.model = ArithmeticModel::flash;
  else if (model == "naive") s.model = ArithmeticModel::naive;
  else throw std::invalid_argument("model must be 'flash' or 'naive', got '" + model + "'");
  if (gqa == "group_sum") s.gqa = GqaGradientReduction::group_sum;
  else if (gqa == "per_head_rounded") s.gqa = GqaGradientReduction::per_head_rounded;
  else throw std::invalid_argument("gqa must be 'group_sum' or 'per_head_rounded', got '" + gqa + "'");
  return s;
}

}  // namespace
}  // namespace flashproof::python

namespace flashproof::python { void bind_bounds(nb::module_& m); }  // bounds_binding.cpp: _core.bounds
NB_MODULE(_core, m) {
  using namespace flashproof;
  using namespace flashproof::python;
  m.doc() = "flashproof's harness (C++): cases, the certified reference, check, fuzz, properties";
  // nanobind reports every instance still alive when this module is torn down at interpreter exit.
  // A pytest session holds its parametrized cases (and its failures' tracebacks) past that point,
  // so a suite that checked a kernel, ran its properties and a campaign printed one "leaked
  // instance ... Case" line per case at exit, none of them a leak of flashproof's.
  // FLASHPROOF_LEAK_WARNINGS=1 turns the report back on for whoever hunts a real leak.
  const char* leak_warnings = std::getenv("FLASHPROOF_LEAK_WARNINGS");
  nb::set_leak_warnings(leak_warnings != nullptr && std::string_view(leak_warnings) == "1");
  bind_bounds(m);

  nb::class_<CaseBox>(m, "Case")
      .def_prop_ro("batch", [](const CaseBox& b) { return b.c.problem.batch; })
      .def_prop_ro("heads_q", [](const CaseBox& b) { return b.c.problem.heads_q; })
      .def_prop_ro("heads_kv", [](const CaseBox& b) { return b.c.problem.heads_kv; })
      .def_prop_ro("seqlen_q", [](const CaseBox& b) { return b.c.problem.seqlen_q; })
      .def_prop_ro("seqlen_k", [](const CaseBox& b) { return b.c.problem.seqlen_k; })
      .def_prop_ro("head_dim", [](const CaseBox& b) { return b.c.problem.head_dim; })
      .def_prop_ro("dtype", [](const CaseBox& b) { return std::string(dtype_name(b.c.problem.dtype)); })
      .def_prop_ro("scale", [](const CaseBox& b) {
        return b.c.problem.scale ? nb::cast(static_cast<double>(*b.c.problem.scale)) : nb::none();
      })
      .def_prop_ro("softmax_scale", [](const CaseBox& b) { return static_cast<double>(b.c.problem.softmax_scale()); })
      .def_prop_ro("window_left", [](const CaseBox& b) { return b.c.problem.window_left; })
      .def_prop_ro("window_right", [](const CaseBox& b) { return b.c.problem.window_right; })
      .def_prop_ro("distribution", [](const CaseBox& b) { return distribution_name(b.c.dist); })
      .def_prop_ro("seed", [](const CaseBox& b) { return b.c.seed; })
      .def_prop_ro("backward", [](const CaseBox& b) { return b.c.backward; })
      .def_prop_ro("kind", [](const CaseBox& b) { return b.kind; })
      .def_prop_ro("impl", [](const CaseBox& b) { return b.c.impl; })
      .def_prop_ro("note", [](const CaseBox& b) { return b.note; })
      .def_prop_ro("property", [](const CaseBox& b) { return b.property; })
      .def_prop_ro("fitted", [](const CaseBox& b) { return b.fitted; })
      // A packed batch's offsets (empty lists for a dense problem; Python's Case makes them None).
      .def_prop_ro("cu_seqlens_q", [](const CaseBox& b) { return b.c.problem.cu_seqlens_q; })
      .def_prop_ro("cu_seqlens_k", [](const CaseBox& b) { return b.c.problem.cu_seqlens_k; })
      // The soft cap (None without) and ALiBi's slopes (empty without).
      .def_prop_ro("softcap",
                   [](const CaseBox& b) -> std::optional<double> {
                     if (!b.c.problem.softcap) return std::nullopt;
                     return static_cast<double>(*b.c.problem.softcap);
                   })
      .def_prop_ro("alibi_slopes", [](const CaseBox& b) {
        return std::vector<double>(b.c.problem.alibi_slopes.begin(), b.c.problem.alibi_slopes.end());
      })
      // A KV cache's fields (empty lists and zeros without one).
      .def_prop_ro("cache_seqlens", [](const CaseBox& b) { return b.c.problem.cache_seqlens; })
      .def_prop_ro("page_size", [](const CaseBox& b) { return b.c.problem.page_size; })
      .def_prop_ro("num_pages", [](const CaseBox& b) { return b.c.problem.num_pages; })
      .def_prop_ro("block_table", [](const CaseBox& b) { return b.c.problem.block_table; })
      .def_prop_ro("num_splits", [](const CaseBox& b) { return b.c.problem.num_splits; })
      .def_prop_ro("seqlen_new", [](const CaseBox& b) { return b.c.problem.seqlen_new; })
      .def("describe", [](const CaseBox& b) { return b.c.problem.describe(); })
      .def("to_json", [](const CaseBox& b, const std::string& note) { return case_to_json(b.c, b.options, note, b.property); },
           "note"_a = "")
      .def("with_backward", [](const CaseBox& b, bool backward) { CaseBox r = b; r.c.backward = backward; return r; });

  nb::class_<PythonAttention>(m, "Implementation")
      .def("__init__",
           [](PythonAttention* self, const std::string& name, bool has_backward, const std::vector<std::string>& dtypes,
              const std::string& model, const std::string& gqa, const std::string& support, nb::object runner) {
             new (self) PythonAttention(settings_of(name, has_backward, dtypes, model, gqa, support), std::move(runner));
           })
      .def_prop_ro("name", &PythonAttention::name)
      .def("release", &PythonAttention::release);

  m.def("make_case", &make_case, "batch"_a, "heads_q"_a, "heads_kv"_a, "seqlen_q"_a, "seqlen_k"_a, "head_dim"_a,
        "dtype"_a, "window_left"_a, "window_right"_a, "scale"_a.none(), "distribution"_a, "seed"_a, "backward"_a,
        "cu_seqlens_q"_a = std::vector<std::int64_t>{}, "cu_seqlens_k"_a = std::vector<std::int64_t>{},
        "softcap"_a.none() = nb::none(), "alibi_slopes"_a = std::vector<double>{},
        "cache_seqlens"_a = std::vector<std::int64_t>{}, "page_size"_a = 0, "num_pages"_a.none() = nb::none(),
        "block_table"_a = std::vector<std::int64_t>{}, "num_splits"_a = 0, "seqlen_new"_a = 0);
  m.def("standard_alibi_slopes", [](std::int64_t heads) {
    if (heads < 1 || heads > 65535) throw std::invalid_argument("heads must be in [1, 65535]");
    const std::vector<float> s = standard_alibi_slopes(heads);
    return std::vector<double>(s.begin(), s.end());
  }, "heads"_a);
  m.def("generate_case", &generate, "seed"_a, "index"_a, "dtypes"_a, "direction"_a, "max_seqlen"_a, "max_work"_a,
        "support"_a);
  m.def("read_case_file", &read_case, "path"_a);
  m.def("write_case_file", [](const CaseBox& b, const std::string& path, const std::string& note) {
    write_case_file(path, b.c, b.options, note, b.property);
  }, "case"_a, "path"_a, "note"_a = "");
  m.def("check_case_cost", &check_case_cost, "case"_a, "backward"_a, "max_work"_a.none(), "max_memory_gib"_a.none());
  m.def("inputs", &inputs_of, "case"_a);
  m.def("reference", &reference_of, "case"_a, "backward"_a, "threads"_a);
  m.def("check", &check, "case"_a, "impl"_a, "use_saved_options"_a, "reference"_a, "threads"_a);
  m.def("replay_property", &replay_property, "case"_a, "impl"_a);
  m.def("fuzz", &fuzz_campaign, "impl"_a, "seed"_a, "cases"_a.none(), "minutes"_a.none(), "out"_a, "dtypes"_a,
        "direction"_a, "max_seqlen"_a, "max_work"_a, "case_timeout"_a, "shrink"_a, "progress"_a);
  m.def("register", [](const std::string& name, bool has_backward, const std::vector<std::string>& dtypes,
                       const std::string& model, const std::string& gqa, const std::string& support,
                       nb::object runner) -> PythonAttention& {
    return registered(settings_of(name, has_backward, dtypes, model, gqa, support), std::move(runner));
  }, nb::rv_policy::reference);
  m.def("describe_support", [](const std::string& support) { return describe(support_arg(support)); }, "support"_a);
  m.def("properties", &run_properties, "impl"_a, "names"_a, "cases"_a, "seed"_a.none(), "has_backward"_a, "id_prefix"_a);
  m.def("property_names", &property_names, "impl"_a, "has_backward"_a);
  m.def("property_descriptions", [] {
    std::vector<std::pair<std::string, std::string>> list;
    for (const properties::Property& p : properties::all_properties()) list.emplace_back(p.name, p.what);
    return list;
  });
  m.def("implementations", [] {
    std::vector<std::pair<std::string, std::string>> list;
    for (AttentionImpl* impl : implementations()) list.emplace_back(impl->name(), impl->where());
    return list;
  });
  // The flashproof command line (cli/entry.h) on argv[1:], printing on this process's stdout and
  // stderr; returns the exit status (the console command `flashproof`, flashproof._cli).
  m.def("main", [](const std::vector<std::string>& args) {
    const int status = cli::run_command_line(args);
    std::cout.flush();
    return status;
  }, "args"_a, nb::call_guard<nb::gil_scoped_release>());
  // `flashproof report DIRS --out OUT` (report/report_command.h): (exit status, what it printed on
  // stdout, on stderr).
  m.def("report", [](const std::vector<std::string>& dirs, const std::string& out) {
    std::ostringstream printed, errors;
    const int status = report::run_report(report::ReportArguments{dirs, out}, printed, errors);
    return std::make_tuple(status, printed.str(), errors.str());
  }, "dirs"_a, "out"_a, nb::call_guard<nb::gil_scoped_release>());
}

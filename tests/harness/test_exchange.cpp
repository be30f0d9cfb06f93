// The exchange format and the imported implementation: exported cases are the generator's (masks
// rewritten as asked), outputs written by a stand-in backend (the naive baseline) come back bit
// for bit and are judged like the naive run, a corrupted output fails, a missing one is
// unsupported, foreign inputs are refused; and the CLI end to end (export, FLASHPROOF_IMPORT with
// list, replay and fuzz, and bench/judge_imported.py feeding `flashproof report`).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/export_command.h"
#include "core/json.h"
#include "core/kv_cache.h"
#include "harness/case_file.h"
#include "harness/check_render.h"
#include "harness/exchange.h"
#include "harness/support_record.h"
#include "harness/imported_attention.h"
#include "kernels/naive/naive_attention.h"
#include "kernels/registry.h"

namespace flashproof {
namespace {

namespace fs = std::filesystem;
using cli::ExportedCase;
using cli::ExportSpec;
using cli::MaskRewrite;

fs::path scratch(const std::string& name) {
  const fs::path d = fs::path(testing::TempDir()) / ("exchange_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

ExportSpec small_spec(const fs::path& out, MaskRewrite masks = MaskRewrite::any) {
  ExportSpec s;
  s.generator.seed = 11;
  s.generator.max_seqlen = 40;
  s.generator.max_work = 1 << 14;
  s.cases = 8;
  s.masks = masks;
  s.out = out.string();
  return s;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool same_bits(const HostTensor& a, const HostTensor& b) {
  return exchange::tensor_bytes(a) == exchange::tensor_bytes(b);
}

// What a backend would write: the naive baseline's outputs on the stored inputs.
Outputs naive_outputs(const std::string& case_dir, const Case& c) {
  AttentionImpl* naive = find_implementation("naive");
  return run_implementation(*naive, c.problem, c.backward, exchange::read_inputs(case_dir, c.problem));
}

void write_naive_backend(const fs::path& root, const std::string& backend) {
  for (const exchange::StoredCase& sc : exchange::list_cases(root.string()))
    exchange::write_outputs(sc.dir, backend, naive_outputs(sc.dir, sc.c));
}

// An implementation judged under another arithmetic model, so that the imported outputs and the
// naive run can be held to the same bound.
class UnderModel final : public AttentionImpl {
 public:
  UnderModel(AttentionImpl& inner, ArithmeticModel model) : inner_(inner), model_(model) {}
  std::string name() const override { return inner_.name(); }
  std::string description() const override { return inner_.description(); }
  std::string where() const override { return inner_.where(); }
  Support declared_support() const override { return inner_.declared_support(); }
  ArithmeticModel arithmetic_model() const override { return model_; }
  std::string unsupported_reason(const Problem& p, bool b) const override { return inner_.unsupported_reason(p, b); }
  void forward(const Problem& p, const ForwardArgs& a) override { inner_.forward(p, a); }
  void backward(const Problem& p, const BackwardArgs& a) override { inner_.backward(p, a); }

 private:
  AttentionImpl& inner_;
  ArithmeticModel model_;
};

class Exchange : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new fs::path(scratch("suite"));
    entries_ = new std::vector<ExportedCase>(cli::export_cases(small_spec(*root_)));
    write_naive_backend(*root_, "fake-naive");
    register_imported_implementations(root_->string());
  }
  static const fs::path& root() { return *root_; }
  static const std::vector<ExportedCase>& entries() { return *entries_; }
  static std::string dir_of(const ExportedCase& e) { return (root() / e.directory).string(); }
  static Case with_impl(Case c, const std::string& impl) {
    c.impl = impl;
    return c;
  }
  // The first exported case the naive baseline passes in the domain, forward or backward.
  static const ExportedCase& passing_case(bool backward) {
    for (const ExportedCase& e : entries()) {
      if (e.c.backward != backward) continue;
      const CheckRecord r = run_check(with_impl(e.c, "naive"));
      if (r.verdict == Verdict::pass && r.in_domain) return e;
    }
    throw std::logic_error("no passing case in the export");
  }

 private:
  static inline fs::path* root_ = nullptr;
  static inline std::vector<ExportedCase>* entries_ = nullptr;
};

// An export is bounded before it writes: a count beyond kMaxExportCases and more bytes than the
// file system has free are refused with one line, and the estimate covers what is written.
TEST_F(Exchange, ExportRefusesCountsAndSizesBeyondItsLimits) {
  ExportSpec too_many = small_spec(scratch("too_many"));
  too_many.cases = cli::kMaxExportCases + 1;
  EXPECT_THROW(cli::export_cases(too_many), std::invalid_argument);
  EXPECT_FALSE(fs::exists(too_many.out)) << "refused before any directory is made";

  const ExportSpec spec = small_spec(root());
  const double estimate = cli::export_bytes_estimate(spec);
  std::uintmax_t written = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root()))
    if (entry.is_regular_file() && entry.path().parent_path().filename() != "fake-naive") written += entry.file_size();
  EXPECT_GE(estimate, static_cast<double>(written)) << "the estimate is an upper bound of the export";
  EXPECT_LE(estimate, 4.0 * static_cast<double>(written) + 8 * 4096.0) << "and not a wild one";
  EXPECT_NO_THROW(cli::check_export_space(spec, estimate, estimate));
  try {
    cli::check_export_space(spec, estimate, estimate / 2);
    ADD_FAILURE() << "an export larger than the free space was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("MiB free"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
  }
}

TEST_F(Exchange, ExportWritesTheGeneratorsCasesAndTheirInputs) {
  const ExportSpec spec = small_spec(root());
  ASSERT_EQ(entries().size(), spec.cases);
  const json::Value index = json::parse(read_text(root() / "index.json"));
  ASSERT_EQ(index.at("cases").size(), spec.cases);
  bool both_directions[2] = {false, false};
  for (const ExportedCase& e : entries()) {
    const fuzz::FuzzCase f = fuzz::generate_case(spec.generator, e.index);
    EXPECT_EQ(case_to_json(e.c), case_to_json(f.c)) << "masks any keeps the generator's case";
    EXPECT_EQ(e.directory, exchange::case_directory_name(e.c));
    const CaseFile stored = read_case_file(dir_of(e) + "/case.json");
    EXPECT_EQ(case_to_json(stored.c), case_to_json(e.c));
    const Inputs given = generate_inputs(e.c.problem, e.c.dist, e.c.seed);
    const Inputs read = exchange::read_inputs(dir_of(e), e.c.problem);
    EXPECT_TRUE(same_bits(read.q, given.q));
    EXPECT_TRUE(same_bits(read.dout, given.dout));
    const json::Value meta = json::parse(read_text(fs::path(dir_of(e)) / "meta.json"));
    EXPECT_EQ(json::number(meta.at("softmax_scale")), static_cast<double>(e.c.problem.softmax_scale()));
    EXPECT_EQ(meta.at("checksums").at("q"), exchange::hex64(exchange::fnv1a64(exchange::tensor_bytes(given.q))));
    both_directions[e.c.backward] = true;
  }
  EXPECT_TRUE(both_directions[0] && both_directions[1]) << "the export should hold forward and backward cases";
}

TEST_F(Exchange, MaskRewritesGiveSdpaExpressibleCases) {
  for (MaskRewrite m : {MaskRewrite::none, MaskRewrite::causal_square}) {
    const ExportSpec spec = small_spec(root(), m);
    for (std::uint64_t i = 0; i < 40; ++i) {
      const Problem p = cli::exported_case(spec, i).c.problem;
      const Problem original = fuzz::generate_case(spec.generator, i).c.problem;
      if (m == MaskRewrite::none) {
        EXPECT_FALSE(p.has_mask()) << i;
      } else {
        EXPECT_TRUE(p.causal()) << i;
        EXPECT_EQ(p.seqlen_q, std::min(original.seqlen_q, original.seqlen_k)) << i;
        EXPECT_EQ(p.seqlen_k, p.seqlen_q) << i;
      }
      EXPECT_LE(p.batch * p.heads_q * p.seqlen_q * p.seqlen_k * p.head_dim, spec.generator.max_work) << i;
    }
  }
}

TEST_F(Exchange, ImportedOutputsAreTheBackendsBitForBit) {
  AttentionImpl* imported = find_implementation("imported:fake-naive");
  ASSERT_NE(imported, nullptr);
  EXPECT_EQ(imported->where(), "file");
  EXPECT_EQ(imported->arithmetic_model(), ArithmeticModel::flash);
  for (const ExportedCase& e : entries()) {
    const Inputs in = generate_inputs(e.c.problem, e.c.dist, e.c.seed);
    const Outputs got = run_implementation(*imported, e.c.problem, e.c.backward, in);
    const Outputs want = run_implementation(*find_implementation("naive"), e.c.problem, e.c.backward, in);
    EXPECT_TRUE(same_bits(got.o, want.o)) << e.index;
    EXPECT_TRUE(same_bits(got.lse, want.lse)) << e.index;
    if (!e.c.backward) continue;
    EXPECT_TRUE(same_bits(got.dq, want.dq)) << e.index;
    EXPECT_TRUE(same_bits(got.dk, want.dk)) << e.index;
    EXPECT_TRUE(same_bits(got.dv, want.dv)) << e.index;
  }
}

TEST_F(Exchange, VerdictsAreTheNaiveRunsUnderTheSameModel) {
  AttentionImpl& imported = *find_implementation("imported:fake-naive");
  UnderModel as_naive(imported, ArithmeticModel::naive);
  for (const ExportedCase& e : entries()) {
    const CheckRecord naive = run_check(with_impl(e.c, "naive"));
    const CheckRecord same_model = run_check(with_impl(e.c, "imported:fake-naive"), as_naive);
    const CheckRecord flash_model = run_check(with_impl(e.c, "imported:fake-naive"));
    EXPECT_EQ(flash_model.impl_where, "file");
    EXPECT_EQ(same_model.verdict, naive.verdict) << e.index;
    ASSERT_EQ(same_model.tensors.size(), naive.tensors.size());
    for (std::size_t t = 0; t < naive.tensors.size(); ++t) {
      EXPECT_EQ(same_model.tensors[t].verdict, naive.tensors[t].verdict) << e.index << " " << naive.tensors[t].name;
      EXPECT_EQ(flash_model.tensors[t].errors.max_abs, naive.tensors[t].errors.max_abs) << e.index;
      EXPECT_EQ(flash_model.tensors[t].errors.max_ulps, naive.tensors[t].errors.max_ulps) << e.index;
    }
  }
}

// One element of O (the largest in magnitude) moved by 2048 units in the last place.
TEST_F(Exchange, ACorruptedOutputFails) {
  const ExportedCase& e = passing_case(false);
  Outputs out = naive_outputs(dir_of(e), e.c);
  std::int64_t worst = 0;
  double largest = -1;
  for (std::int64_t i = 0; i < out.o.storage_elements(); ++i)
    if (const double x = std::fabs(from_bits(out.o.dtype(), out.o.raw_bits(i))); x > largest) largest = x, worst = i;
  out.o.set_raw_bits(worst, out.o.raw_bits(worst) + 2048);
  exchange::write_outputs(dir_of(e), "fake-corrupt", out);
  const auto corrupt = make_imported_attention(root().string(), "fake-corrupt");
  EXPECT_EQ(run_check(with_impl(e.c, "imported:fake-naive")).verdict, Verdict::pass);
  const CheckRecord r = run_check(with_impl(e.c, "imported:fake-corrupt"), *corrupt);
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_EQ(r.tensors[0].name, "O");
  EXPECT_EQ(r.tensors[0].verdict, Verdict::fail);
}

// A backend declares how it reduces GQA gradients in its info.json ("gqa_gradients"); without one
// it is judged as summing the group in fp32; a value that is neither is a one-line error.
TEST_F(Exchange, ABackendDeclaresItsGqaReductionInInfoJson) {
  const ExportedCase& e = passing_case(false);
  const auto write = [&](const std::string& backend, const std::string& info) {
    exchange::write_outputs(dir_of(e), backend, naive_outputs(dir_of(e), e.c));
    if (!info.empty()) std::ofstream(fs::path(dir_of(e)) / backend / "info.json") << info;
  };
  write("fake-silent", "");
  write("fake-free-form", R"({"device": "H100", "gqa": "enable_gqa"})");
  write("fake-per-head", R"({"gqa_gradients": "per-head-rounded"})");
  write("fake-typo", R"({"gqa_gradients": "per-head"})");
  const auto declared = [&](const std::string& backend) {
    return make_imported_attention(root().string(), backend)->gqa_gradient_reduction();
  };
  EXPECT_EQ(declared("fake-silent"), GqaGradientReduction::group_sum);
  EXPECT_EQ(declared("fake-free-form"), GqaGradientReduction::group_sum);
  EXPECT_EQ(declared("fake-per-head"), GqaGradientReduction::per_head_rounded);
  try {
    declared("fake-typo");
    ADD_FAILURE() << "an unknown gqa_gradients value was accepted";
  } catch (const std::invalid_argument& x) {
    EXPECT_NE(std::string(x.what()).find("\"gqa_gradients\" must be"), std::string::npos) << x.what();
  }
  fs::remove_all(fs::path(dir_of(e)) / "fake-typo");  // the other tests register every backend of the root
}

// Outputs stored for a dense case never answer a packed batch of the same sizes (another
// attention): the stored case is matched on the packing too.
TEST_F(Exchange, ADenseCaseDoesNotAnswerAPackedBatchOfItsSizes) {
  const ExportedCase* dense = nullptr;
  for (const ExportedCase& e : entries())
    if (e.c.problem.batch == 1 && e.c.problem.seqlen_q >= 2 && e.c.problem.seqlen_k >= 2) dense = &e;
  ASSERT_NE(dense, nullptr) << "the export has no batch-1 case to pack";
  exchange::write_outputs(dir_of(*dense), "fake-dense-only", naive_outputs(dir_of(*dense), dense->c));
  const auto impl = make_imported_attention(root().string(), "fake-dense-only");
  EXPECT_EQ(impl->unsupported_reason(dense->c.problem, dense->c.backward), "");
  Problem packed = dense->c.problem;
  packed.cu_seqlens_q = {0, 1, packed.seqlen_q}, packed.cu_seqlens_k = {0, 1, packed.seqlen_k};
  ASSERT_EQ(packed.validate(), "");
  EXPECT_NE(impl->unsupported_reason(packed, dense->c.backward).find("no exported case has this problem"), std::string::npos);
  fs::remove_all(fs::path(dir_of(*dense)) / "fake-dense-only");  // the other tests register every backend of the root
}

TEST_F(Exchange, MissingOutputsAreUnsupportedOrNamed) {
  const ExportedCase& forward = passing_case(false);
  const ExportedCase& backward = passing_case(true);
  exchange::write_outputs(dir_of(forward), "fake-partial", naive_outputs(dir_of(forward), forward.c));
  Outputs partial = naive_outputs(dir_of(backward), backward.c);
  exchange::write_outputs(dir_of(backward), "fake-partial", partial);
  fs::remove(fs::path(dir_of(backward)) / "fake-partial" / "dq.bin");
  const auto impl = make_imported_attention(root().string(), "fake-partial");
  EXPECT_EQ(impl->unsupported_reason(forward.c.problem, false), "");
  EXPECT_EQ(impl->unsupported_reason(backward.c.problem, true), "");
  const ExportedCase* other = nullptr;
  for (const ExportedCase& e : entries()) {
    if (e.directory == forward.directory || e.directory == backward.directory) continue;
    EXPECT_EQ(impl->unsupported_reason(e.c.problem, e.c.backward), "no imported outputs of fake-partial for this case")
        << e.index;
    other = &e;
  }
  // A refusal's reason is shown; a problem nobody exported says so.
  ASSERT_NE(other, nullptr);
  fs::create_directories(fs::path(dir_of(*other)) / "fake-partial");
  std::ofstream(fs::path(dir_of(*other)) / "fake-partial" / "refused.txt") << "head_dim must be a multiple of 8\n";
  EXPECT_EQ(impl->unsupported_reason(other->c.problem, false),
            "no imported outputs of fake-partial for this case (refused: head_dim must be a multiple of 8)");
  Problem unknown = forward.c.problem;
  unknown.head_dim += 1;
  EXPECT_NE(impl->unsupported_reason(unknown, false).find("no exported case has this problem"), std::string::npos);
  // A removed dq.bin is a one-line error naming it, when the backward runs.
  const Inputs in = generate_inputs(backward.c.problem, backward.c.dist, backward.c.seed);
  try {
    run_implementation(*impl, backward.c.problem, true, in);
    ADD_FAILURE() << "a missing dq.bin should throw";
  } catch (const exchange::BadExchangeFile& err) {  // bad input, not an internal error
    EXPECT_NE(std::string(err.what()).find("fake-partial/dq.bin: no such file"), std::string::npos) << err.what();
    EXPECT_EQ(std::string(err.what()).find('\n'), std::string::npos);
  }
  // o.bin removed afterwards: unsupported from then on.
  fs::remove(fs::path(dir_of(forward)) / "fake-partial" / "o.bin");
  EXPECT_EQ(impl->unsupported_reason(forward.c.problem, false), "no imported outputs of fake-partial for this case");
}

// A .bin's size is checked before it is read: an o.bin that links to a 2 GiB sparse file is
// refused at once, in a process that could not even hold it (its address space capped 512 MiB
// above what it uses).
TEST_F(Exchange, AWronglySizedBinIsRefusedBeforeItIsRead) {
  const ExportedCase& e = passing_case(false);
  exchange::write_outputs(dir_of(e), "fake-huge", naive_outputs(dir_of(e), e.c));
  const fs::path huge = scratch("sparse.bin"), o = fs::path(dir_of(e)) / "fake-huge" / "o.bin";
  { std::ofstream(huge) << ""; }
  fs::resize_file(huge, std::uintmax_t{2} << 30);
  fs::remove(o);
  fs::create_symlink(huge, o);
  const auto impl = make_imported_attention(root().string(), "fake-huge");
  const Inputs in = generate_inputs(e.c.problem, e.c.dist, e.c.seed);
  const pid_t pid = ::fork();
  if (pid == 0) {
    long vm_kib = 0;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmSize:", 0) == 0) vm_kib = std::stol(line.substr(7));
    const rlim_t cap = (static_cast<rlim_t>(vm_kib) << 10) + (rlim_t{512} << 20);
    const rlimit limit{cap, cap};
    ::setrlimit(RLIMIT_AS, &limit);
    try {
      run_implementation(*impl, e.c.problem, false, in);
    } catch (const exchange::BadExchangeFile& err) {
      const std::string what = err.what();
      ::_exit(what.find("o.bin: holds 2147483648 bytes, expected ") != std::string::npos ? 0 : 1);
    } catch (...) {
      ::_exit(2);  // bad_alloc: it was read first
    }
    ::_exit(3);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  fs::remove(huge);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: another message, 2: an exception other than BadExchangeFile, 3: no error";
}

TEST_F(Exchange, ForeignInputsAreRefused) {
  const ExportedCase& e = entries()[0];
  AttentionImpl& imported = *find_implementation("imported:fake-naive");
  const Inputs other = generate_inputs(e.c.problem, e.c.dist, e.c.seed + 1);
  try {
    run_implementation(imported, e.c.problem, false, other);
    ADD_FAILURE() << "inputs that were not exported should throw";
  } catch (const std::invalid_argument& err) {
    EXPECT_NE(std::string(err.what()).find("the inputs differ from those exported"), std::string::npos) << err.what();
  }
  Case moved = with_impl(e.c, "imported:fake-naive");
  moved.seed += 1;  // same problem, other inputs: the check runs and the implementation refuses them
  EXPECT_THROW(run_check(moved), std::invalid_argument);
}

TEST_F(Exchange, RegisteringTwiceIsHarmlessAndABadRootIsOneLine) {
  AttentionImpl* before = find_implementation("imported:fake-naive");
  const std::vector<std::string> names = register_imported_implementations(root().string());
  EXPECT_NE(std::find(names.begin(), names.end(), "imported:fake-naive"), names.end());
  EXPECT_EQ(find_implementation("imported:fake-naive"), before);
  try {
    register_imported_implementations((root() / "nowhere").string());
    ADD_FAILURE() << "a missing root should throw";
  } catch (const std::invalid_argument& err) {
    EXPECT_NE(std::string(err.what()).find("is not a directory"), std::string::npos);
  }
}

// --- the command line -------------------------------------------------------------------------

struct Result {
  int status;
  std::string out, err;
};

Result run(const std::string& command) {
  const std::string err_file = testing::TempDir() + "exchange_stderr_" + std::to_string(::getpid()) + ".txt";
  Result r{};
  FILE* p = ::popen((command + " 2>" + err_file).c_str(), "r");
  std::array<char, 4096> buf;
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
  const int raw = ::pclose(p);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.err = read_text(err_file);
  std::remove(err_file.c_str());
  return r;
}

const std::string kBin = FLASHPROOF_BIN;
const std::string kExport = " export --seed 5 --cases 4 --max-seqlen 32 --max-work 16384 --dtype fp16,bf16";

TEST(ExchangeCli, ExportWritesIndexAndRewritesMasks) {
  const fs::path out = scratch("cli_masks");
  const Result r = run(kBin + kExport + " --masks causal-square --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const json::Value index = json::parse(read_text(out / "index.json"));
  ASSERT_EQ(index.at("cases").size(), 4u);
  EXPECT_EQ(index.at("parameters").at("masks"), "causal-square");
  for (const json::Value& entry : index.at("cases")) {
    const std::string directory = entry.at("directory").get<std::string>();
    const CaseFile cf = read_case_file((out / directory / "case.json").string());
    EXPECT_TRUE(cf.c.problem.causal());
    EXPECT_EQ(cf.c.problem.seqlen_q, cf.c.problem.seqlen_k);
    EXPECT_TRUE(fs::is_regular_file(out / directory / "dout.bin"));
  }
}

TEST(ExchangeCli, BadInputIsOneLineAndStatusTwo) {
  const fs::path out = scratch("cli_bad");
  const std::string to = " --out " + out.string();
  for (const std::string& args : {" export --cases 4" + to, kExport + " --masks diagonal" + to,
                                  kExport + " --backward maybe" + to, kExport, kExport + " --dtype fp8" + to}) {
    const Result r = run(kBin + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
  const Result r = run("FLASHPROOF_IMPORT=" + (out / "nowhere").string() + " " + kBin + " list");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("FLASHPROOF_IMPORT: exchange root"), std::string::npos) << r.err;
}

// Missing and wrongly sized .bin files are bad input (one line, status 2, not an internal error),
// and what refused.txt says reaches the terminal escaped.
TEST(ExchangeCli, BadOutputFilesAndRefusalsAreOneLineStatusTwo) {
  const fs::path out = scratch("cli_bad_bins");
  ASSERT_EQ(run(kBin + kExport + " --out " + out.string()).status, 0);
  write_naive_backend(out, "fake");
  const exchange::StoredCase sc = exchange::list_cases(out.string()).front();
  const fs::path file = scratch("cli_bad_bins_case.json");
  write_case_file(file.string(), [&] { Case c = sc.c; c.impl = "imported:fake"; return c; }());
  const std::string replay = "FLASHPROOF_IMPORT=" + out.string() + " " + kBin + " replay " + file.string();
  const fs::path lse = fs::path(sc.dir) / "fake" / "lse.bin";
  const auto expect_bad = [&](const std::string& message) {
    const Result r = run(replay);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  };
  fs::resize_file(lse, fs::file_size(lse) - 1);
  expect_bad("lse.bin: holds ");
  fs::remove(lse);
  expect_bad("lse.bin: no such file");
  fs::remove(fs::path(sc.dir) / "fake" / "o.bin");
  std::ofstream(fs::path(sc.dir) / "fake" / "refused.txt") << "\x1b[2Jno kernel\r\n";
  expect_bad("(refused: \\x1b[2Jno kernel\\r)");
}

// An exchange directory written before the record layer (tests/harness/data/exchange_v1: a version
// 1 case.json and the meta.json of that time) is still read: its case, its inputs, and a backend's
// outputs judged as imported:<backend>.
TEST(ExchangeVersion1, AnOldDirectoryIsReadAndJudged) {
  const fs::path root = scratch("version1");
  fs::copy(FLASHPROOF_SOURCE_DIR "/tests/harness/data/exchange_v1", root, fs::copy_options::recursive);
  const std::vector<exchange::StoredCase> cases = exchange::list_cases(root.string());
  ASSERT_EQ(cases.size(), 1u);
  const Case& c = cases.front().c;
  EXPECT_EQ(c.problem.head_dim, 130);
  EXPECT_TRUE(c.problem.causal());
  EXPECT_EQ(distribution_name(c.dist), "uniform");
  EXPECT_EQ(c.seed, 8307079844906897056ull);
  EXPECT_TRUE(c.backward);
  // The stored inputs are what the case generates.
  const Inputs stored = exchange::read_inputs(cases.front().dir, c.problem);
  const Inputs generated = generate_inputs(c.problem, c.dist, c.seed);
  EXPECT_TRUE(same_bits(stored.q, generated.q) && same_bits(stored.k, generated.k) &&
              same_bits(stored.v, generated.v) && same_bits(stored.dout, generated.dout));
  write_naive_backend(root, "old-naive");
  register_imported_implementations(root.string());
  Case judged = c;
  judged.impl = "imported:old-naive";
  const CheckRecord r = run_check(judged);
  EXPECT_EQ(r.impl_where, "file");
  EXPECT_NE(r.verdict, Verdict::fail) << to_table(r);
  // A newly written directory for the same case has the record layer's name, not the old one.
  EXPECT_NE(exchange::case_directory_name(c), fs::path(cases.front().dir).filename().string());
}

// Export, a stand-in backend's outputs, then the imported implementation through list, replay,
// a fuzz campaign of the same seed and settings, and the judge script with `flashproof report`.
TEST(ExchangeCli, ImportedOutputsAreJudgedEndToEnd) {
  const fs::path out = scratch("cli_e2e");
  ASSERT_EQ(run(kBin + kExport + " --out " + out.string()).status, 0);
  write_naive_backend(out, "fake-naive");
  const std::string env = "FLASHPROOF_IMPORT=" + out.string() + " ";

  const Result list = run(env + kBin + " list");
  EXPECT_NE(list.out.find("imported:fake-naive\tfile"), std::string::npos) << list.out << list.err;

  // replay of an exported case.json with the implementation set.
  const exchange::StoredCase first = exchange::list_cases(out.string()).front();
  const fs::path replay_file = scratch("cli_e2e_case.json");
  write_case_file(replay_file.string(), [&] { Case c = first.c; c.impl = "imported:fake-naive"; return c; }());
  const Result replay = run(env + kBin + " replay --json " + replay_file.string());
  EXPECT_LE(replay.status, 1) << replay.err;
  EXPECT_NE(replay.out.find("\"where\": \"file\""), std::string::npos) << replay.out;

  // The same seed and settings as the export (masks any): the campaign runs exactly those cases.
  const fs::path campaign = scratch("cli_e2e_campaign");
  const Result fuzz = run(env + kBin + " fuzz --impl imported:fake-naive --seed 5 --cases 4 --max-seqlen 32 "
                          "--max-work 16384 --dtype fp16,bf16 --no-shrink --out " + campaign.string());
  EXPECT_LE(fuzz.status, 1) << fuzz.out << fuzz.err;
  std::istringstream lines(read_text(campaign / "cases.jsonl"));
  int records = 0;
  for (std::string line; std::getline(lines, line); ++records) {
    const json::Value rec = json::parse(line);
    EXPECT_EQ(rec.at("where"), "file") << line;
    EXPECT_NE(rec.at("status"), "crash") << rec.at("error");
  }
  EXPECT_EQ(records, 4);

  // The judge script: every exported case under each implementation, as a campaign directory.
  if (run("python3 --version").status != 0) GTEST_SKIP() << "no python3 for bench/judge_imported.py";
  const fs::path judged = scratch("cli_e2e_judged");
  const Result judge = run("python3 " FLASHPROOF_SOURCE_DIR "/bench/judge_imported.py " + out.string() +
                           " --impl imported:fake-naive,naive --flashproof " + kBin + " --out " + judged.string());
  ASSERT_LE(judge.status, 1) << judge.out << judge.err;
  std::istringstream judged_lines(read_text(judged / "cases.jsonl"));
  int judged_records = 0;
  for (std::string line; std::getline(judged_lines, line); ++judged_records)
    EXPECT_NE(json::parse(line).at("status"), "crash") << line;
  EXPECT_EQ(judged_records, 8);
  const Result report = run(kBin + " report " + judged.string() + " --out " + (judged / "report").string());
  EXPECT_EQ(report.status, 0) << report.err;
  EXPECT_NE(read_text(judged / "report" / "summary.md").find("imported:fake-naive"), std::string::npos);
}

// The second tier's exit status end to end: at bf16 logits near 3e4 the flash model's dV bound
// admits 0 and twice the answer at a few elements (first tier: not judged), and the baseline rule
// judges dV. The naive outputs pass it (exit 0, "pass (baseline rule)"); the same outputs with one dV
// element moved by half its rigorous bound (within the vacuous first-tier bound) fail it: exit 5,
// "fail (baseline rule)", from replay and from check (which finds the exported case by its inputs).
TEST(ExchangeCli, AFailOfTheBaselineRuleExitsFive) {
  const fs::path out = scratch("cli_tier2");
  Case c;
  c.backward = true;
  c.problem.dtype = DType::bf16;
  c.problem.seqlen_q = c.problem.seqlen_k = 16;
  c.problem.head_dim = 32;
  c.dist = *parse_distribution("large-logits:3e4");
  c.seed = 1;
  const std::string dir = (out / exchange::write_case(out.string(), c)).string();
  Outputs honest = naive_outputs(dir, c);
  exchange::write_outputs(dir, "honest", honest);
  const bounds::ImplementationBounds b = rigorous_bounds(c, ArithmeticModel::flash);
  const std::size_t at = std::max_element(b.dv.begin(), b.dv.end()) - b.dv.begin();
  Outputs wrong = honest;
  const Shape& s = wrong.dv.shape();  // [batch, seqlen_k, heads_kv, head_dim]
  const std::int64_t col = static_cast<std::int64_t>(at) % s[3], key = static_cast<std::int64_t>(at) / (s[2] * s[3]);
  wrong.dv.set(0, key, 0, col, wrong.dv.get(0, key, 0, col) + 0.5 * b.dv[at]);
  exchange::write_outputs(dir, "dv-off", wrong);
  const std::string env = "FLASHPROOF_IMPORT=" + out.string() + " ";
  const auto replay = [&](const std::string& backend) {
    const fs::path file = scratch("cli_tier2_" + backend + ".json");
    write_case_file(file.string(), [&] { Case r = c; r.impl = "imported:" + backend; return r; }());
    return run(env + kBin + " replay " + file.string());
  };
  const Result pass = replay("honest");
  EXPECT_EQ(pass.status, 0) << pass.out << pass.err;
  EXPECT_NE(pass.out.find("verdict: pass (baseline rule)"), std::string::npos) << pass.out;
  const Result fail = replay("dv-off");
  EXPECT_EQ(fail.status, 5) << fail.out << fail.err;
  EXPECT_NE(fail.out.find("verdict: fail (baseline rule)"), std::string::npos) << fail.out;
  EXPECT_EQ(fail.out.find("elements above the rigorous bound"), std::string::npos) << "the first tier judged it";
  const Result check = run(env + kBin + " check --impl imported:dv-off --dtype bf16 --seqlen-q 16 --seqlen-k 16 "
                           "--head-dim 32 --dist large-logits:3e4 --seed 1 --backward");
  EXPECT_EQ(check.status, 5) << check.out << check.err;
}

// A hostile index.json: the scripts that read it (judge_imported.py writes case files named by
// "index" and reads "directory"/case.json; torch_sdpa_accuracy.py writes outputs into each
// "directory") refuse any entry that is not one plain name inside the export, with one line and
// status 2, before touching a file.
TEST(ExchangeScripts, RefuseAnIndexThatLeavesTheExport) {
  if (run("python3 --version").status != 0) GTEST_SKIP() << "no python3";
  const fs::path root = scratch("hostile_index");
  fs::create_directories(root);
  for (const char* entry : {R"({"index": 0, "directory": "../escape"})", R"({"index": 0, "directory": "/tmp"})",
                                   R"({"index": 0, "directory": "a/b"})", R"({"index": "../../x", "directory": "c0"})",
                                   R"({"index": -1, "directory": "c0"})", R"(7)"}) {
    std::ofstream(root / "index.json") << R"({"format": "flashproof-exchange-index", "cases": [)" << entry << "]}\n";
    const fs::path out = scratch("hostile_index_out");
    const Result judge = run("python3 " FLASHPROOF_SOURCE_DIR "/bench/judge_imported.py " + root.string() +
                             " --impl naive --flashproof " + kBin + " --out " + out.string());
    EXPECT_EQ(judge.status, 2) << entry << ": " << judge.err;
    EXPECT_EQ(std::count(judge.err.begin(), judge.err.end(), '\n'), 1) << judge.err;
    EXPECT_NE(judge.err.find("index.json: case entry 0"), std::string::npos) << judge.err;
    EXPECT_FALSE(fs::exists(out / "cases.jsonl")) << entry;
    const Result accuracy = run("python3 " FLASHPROOF_SOURCE_DIR "/bench/torch_sdpa_accuracy.py " + root.string());
    EXPECT_EQ(accuracy.status, 2) << entry << ": " << accuracy.err;
    EXPECT_NE(accuracy.err.find("index.json: case entry 0"), std::string::npos) << accuracy.err;
    fs::remove_all(out);
  }
  fs::remove_all(root);
}

// A backend's declared support (docs/exchange.md): `export --support` fits every case into it, the
// backend states it in info.json, and the imported implementation declares it; two info.json files
// that disagree are one line.
TEST(ExchangeSupport, ExportFitsAndTheBackendDeclares) {
  Support s;
  s.windows = false;
  s.gqa = false;
  s.seqlen_multiple = 8;
  s.seqlen_free_up_to = 8;
  const fs::path root = scratch("support");
  ExportSpec spec = small_spec(root);
  int outside = 0;  // not vacuous: as drawn, some cases lie outside it
  for (std::uint64_t i = 0; i < spec.cases; ++i) outside += !unsupported_by(s, cli::exported_case(spec, i).c.problem, true).empty();
  ASSERT_GT(outside, 0);
  spec.support = s;
  const std::vector<ExportedCase> exported = cli::export_cases(spec);
  for (const ExportedCase& e : exported) EXPECT_EQ(unsupported_by(s, e.c.problem, true), "") << e.c.problem.describe();
  EXPECT_EQ(json::parse(read_text(root / "index.json")).at("parameters").at("support").get<Support>(), s);
  const std::string info = "{\"support\": " + json::write(json::Value(s)) + "}";
  for (const ExportedCase& e : exported) {
    const fs::path dir = root / e.directory;
    exchange::write_outputs(dir.string(), "fake-declaring", naive_outputs(dir.string(), e.c));
    std::ofstream(dir / "fake-declaring" / "info.json") << info;
  }
  const std::unique_ptr<AttentionImpl> imported = make_imported_attention(root.string(), "fake-declaring");
  EXPECT_EQ(imported->declared_support(), s);
  Problem gqa = exported.front().c.problem;
  gqa.heads_q = 2 * gqa.heads_kv;
  EXPECT_EQ(refusal(*imported, gqa, false), "GQA (heads_q != heads_kv) is not declared");
  Support other = s;
  other.seqlen_multiple = 16;
  std::ofstream(root / exported.back().directory / "fake-declaring" / "info.json")
      << "{\"support\": " << json::write(json::Value(other)) << "}";
  try {
    (void)make_imported_attention(root.string(), "fake-declaring");
    ADD_FAILURE() << "two different declarations were accepted";
  } catch (const std::invalid_argument& x) {
    EXPECT_NE(std::string(x.what()).find("\"support\" differs from the one in"), std::string::npos) << x.what();
  }
}

// A KV-cache case through the exchange (docs/exchange.md "KV caches"): k.bin and v.bin hold the
// paged cache (NaN in unused slots), k_new.bin and v_new.bin the appended keys; a backend that
// writes O, LSE in the cache problem's layout and the cache it left passes, one that leaves the
// cache unwritten or answers with another table's outputs fails.
TEST(ExchangeKvCache, ACacheCaseRoundTripsAndIsJudged) {
  Case c;
  Problem& p = c.problem;
  p.batch = 3, p.heads_q = 4, p.heads_kv = 2, p.seqlen_q = 2, p.seqlen_k = 64, p.head_dim = 16, p.window_right = 0;
  p.cache_seqlens = {5, 0, 40}, p.seqlen_new = 2;
  p.page_size = 16, p.num_pages = 13, p.block_table = page_table(3, 4, 13, 7);
  c.seed = 4;
  const fs::path root = scratch("kv_cache");
  const std::string dir = (root / exchange::write_case(root.string(), c)).string();
  const Inputs generated = generate_inputs(c.problem, c.dist, c.seed), read = exchange::read_inputs(dir, p);
  ASSERT_NE(read.cache, nullptr);
  EXPECT_TRUE(same_bits(read.cache->k, generated.cache->k));
  EXPECT_TRUE(same_bits(read.cache->k_new, generated.cache->k_new));
  EXPECT_TRUE(same_bits(read.k, generated.k));  // the logical keys, appended ones included
  EXPECT_EQ(fs::file_size(fs::path(dir) / "k.bin"), 13u * 16 * 2 * 16 * 2);  // the pool
  const json::Value meta = json::parse(read_text(fs::path(dir) / "meta.json"));
  EXPECT_EQ(meta.at("kv_shape"), json::Value::array({13, 16, 2, 16}));
  EXPECT_EQ(meta.at("new_kv_shape"), json::Value::array({3, 2, 2, 16}));
  EXPECT_TRUE(meta.at("sdpa_is_causal").is_null());
  EXPECT_TRUE(meta.at("checksums").contains("k_new"));
  // The stand-in backend: the naive baseline run as an external one would, on the files' layouts.
  auto backend = [&](const std::string& name, bool write_cache, const Problem& as) {
    const Inputs in = exchange::read_inputs(dir, p);
    HostTensor q = cache_rows_view(p, in.q), k = in.cache->k.contiguous_copy(), v = in.cache->v.contiguous_copy();
    HostTensor o(p.dtype, p.q_shape()), lse(DType::fp32, p.lse_shape(), 3);
    const KvAppend append{in.cache->k_new, in.cache->v_new, k, v};
    find_implementation("naive")->forward(as, ForwardArgs{q, k, v, o, lse, nullptr, as.appends() ? &append : nullptr});
    const fs::path out = fs::path(dir) / name;
    fs::create_directories(out);
    if (write_cache) exchange::write_tensor_file((out / "k_cache.bin").string(), k), exchange::write_tensor_file((out / "v_cache.bin").string(), v);
    exchange::write_tensor_file((out / "lse.bin").string(), lse);
    exchange::write_tensor_file((out / "o.bin").string(), o);
    std::ofstream(out / "info.json") << "{\"support\": " << json::write(json::Value(find_implementation("naive")->declared_support())) << "}";
  };
  Problem in_order = p;  // the twin's table: pages in order (the keys of other pages read)
  in_order.block_table = page_table(3, 4, 13, 0);
  backend("fake-cache", true, p);
  backend("fake-cache-unwritten", false, p);
  backend("fake-pages-in-order", true, in_order);
  Case judged = c;
  for (const char* name : {"fake-cache", "fake-cache-unwritten", "fake-pages-in-order"}) {
    const std::unique_ptr<AttentionImpl> imported = make_imported_attention(root.string(), name);
    UnderModel as_naive(*imported, ArithmeticModel::naive);
    const CheckRecord r = run_check(judged, as_naive);
    if (std::string(name) == "fake-cache") {
      EXPECT_EQ(r.verdict, Verdict::pass) << to_table(r);
    } else {
      EXPECT_EQ(r.verdict, Verdict::fail) << name << "\n" << to_table(r);
    }
    if (std::string(name) == "fake-cache-unwritten") {
      ASSERT_EQ(r.tensors.size(), 3u);
      EXPECT_EQ(r.tensors[2].name, "KV cache");
    }
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace flashproof

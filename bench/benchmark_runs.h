// Timing a call with Google Benchmark from inside a bench's own main: one benchmark registered, run
// and forgotten at a time, its runs collected instead of printed, so that each bench prints its own
// table with the ratios side by side. Every repetition is one call (Iterations(1)): the calls timed
// here take milliseconds to minutes, and the benches report the best or the median call rather
// than a mean over a calibrated loop.
#pragma once

#include <benchmark/benchmark.h>

#include <exception>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace flashproof::bench {

struct BenchmarkRuns {
  std::vector<double> seconds;               // one call per repetition, in order
  std::map<std::string, double> statistics;  // Google Benchmark's aggregates by name (none for one repetition)
  std::string error;                         // what the call threw, passed on through SkipWithError
};

// A statistic over the repetitions' times, in Google Benchmark's ComputeStatistics form: a time,
// or with kPercentage a ratio of times.
struct Statistic {
  std::string name;
  benchmark::StatisticsFunc* compute;
  benchmark::StatisticUnit unit = benchmark::kTime;
};

inline double least_of(const std::vector<double>& v) {
  double least = v.front();
  for (double x : v) least = x < least ? x : least;
  return least;
}

namespace runs_detail {

class Collector final : public benchmark::BenchmarkReporter {
 public:
  explicit Collector(BenchmarkRuns& runs) : runs_(runs) {}
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) runs_.error = r.error_message;
      else if (r.run_type != Run::RT_Aggregate) runs_.seconds.push_back(r.real_accumulated_time);
      // A time statistic comes scaled by the number of repetitions, which `iterations` holds; a
      // percentage statistic (a ratio of times) does not.
      else if (r.aggregate_unit == benchmark::kPercentage) runs_.statistics[r.aggregate_name] = r.real_accumulated_time;
      else runs_.statistics[r.aggregate_name] = r.real_accumulated_time / static_cast<double>(r.iterations);
    }
  }

 private:
  BenchmarkRuns& runs_;
};

}  // namespace runs_detail

// `repetitions` single calls of `call` under Google Benchmark. With manual_time, call reports its
// own time through state.SetIterationTime (CUDA events); otherwise the wall clock is used. An
// exception from call ends the benchmark (no later call) and is returned in `error`.
inline BenchmarkRuns run_benchmark(const std::string& name, int repetitions,
                                   const std::function<void(benchmark::State&)>& call, bool manual_time = false,
                                   const std::vector<Statistic>& statistics = {}) {
  std::string first_error;  // after a failed call the later repetitions are skipped, not called
  benchmark::internal::Benchmark* b =
      benchmark::RegisterBenchmark(name.c_str(), [&call, &first_error](benchmark::State& state) {
        if (!first_error.empty()) return state.SkipWithError(first_error.c_str());
        try {
          for (auto _ : state) call(state);
        } catch (const std::exception& e) {
          first_error = e.what();
          state.SkipWithError(first_error.c_str());
        }
      });
  b->Iterations(1)->Repetitions(repetitions)->Unit(benchmark::kSecond);
  if (manual_time) b->UseManualTime();
  else b->UseRealTime();
  for (const Statistic& s : statistics) b->ComputeStatistics(s.name, s.compute, s.unit);
  BenchmarkRuns runs;
  runs_detail::Collector collector(runs);
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();
  return runs;
}

// The least wall time of `repetitions` calls of f, in seconds (Google Benchmark's "min" statistic
// over the repetitions). Rethrows what f threw.
inline double least_seconds(const std::string& name, int repetitions, const std::function<void()>& f) {
  const BenchmarkRuns runs =
      run_benchmark(name, repetitions, [&f](benchmark::State&) { f(); }, false, {{"min", least_of}});
  if (!runs.error.empty()) throw std::runtime_error(runs.error);
  if (const auto min = runs.statistics.find("min"); min != runs.statistics.end()) return min->second;
  return least_of(runs.seconds);  // one repetition: no aggregates
}

}  // namespace flashproof::bench

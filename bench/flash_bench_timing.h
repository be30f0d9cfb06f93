// Timing for bench_flash (flash_bench.cpp): one call between two CUDA events on the GPU (the
// kernels launch on the default stream), std::chrono on the emulator; the statistics over many
// calls, computed by Google Benchmark (bench/benchmark_runs.h); the device, driver and runtime a
// result was measured on. Every CUDA call's status is checked and
// a failure throws std::runtime_error("cuda: ...").
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/benchmark_runs.h"
#include "kernels/flash/api.h"

#if defined(FLASHPROOF_HAS_CUDA)
#include <cuda_runtime.h>
#endif

namespace flashproof::bench {

#if defined(FLASHPROOF_HAS_CUDA)
inline void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string("cuda: ") + what + ": " + cudaGetErrorString(status));
}
#endif

class CallTimer {
 public:
  explicit CallTimer(kernels::FlashTarget target) : target_(target) {
#if defined(FLASHPROOF_HAS_CUDA)
    if (target_ == kernels::FlashTarget::gpu) {
      cuda_check(cudaEventCreate(&start_), "cudaEventCreate");
      cuda_check(cudaEventCreate(&stop_), "cudaEventCreate");
    }
#endif
  }
  ~CallTimer() {
#if defined(FLASHPROOF_HAS_CUDA)
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (stop_ != nullptr) cudaEventDestroy(stop_);
#endif
  }
  CallTimer(const CallTimer&) = delete;
  CallTimer& operator=(const CallTimer&) = delete;

  // Runs call once and returns how long it took, in milliseconds, after it has finished.
  double milliseconds(const std::function<void()>& call) {
#if defined(FLASHPROOF_HAS_CUDA)
    if (target_ == kernels::FlashTarget::gpu) return gpu_milliseconds(call);
#endif
    const auto begin = std::chrono::steady_clock::now();
    call();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  }

 private:
#if defined(FLASHPROOF_HAS_CUDA)
  double gpu_milliseconds(const std::function<void()>& call) {
    cuda_check(cudaEventRecord(start_, 0), "cudaEventRecord");
    call();
    cuda_check(cudaGetLastError(), "kernel launch");
    cuda_check(cudaEventRecord(stop_, 0), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop_), "kernel");  // also reports a fault of the kernel
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
#endif
  kernels::FlashTarget target_;
};

// Waits for everything queued on the target (warm-up calls) to finish.
inline void wait_for_target(kernels::FlashTarget target) {
#if defined(FLASHPROOF_HAS_CUDA)
  if (target == kernels::FlashTarget::gpu) cuda_check(cudaDeviceSynchronize(), "kernel");
#else
  (void)target;
#endif
}

struct TimeStats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double spread_pct = 0;  // interquartile range / median: how far to trust the median
};

// Nearest-rank quantile of sorted values, q in [0, 1].
inline double quantile(const std::vector<double>& sorted, double q) {
  const std::size_t rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

// The statistics over the timed calls that Google Benchmark does not have built in (it has the median).
inline double most_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }
inline double interquartile_over_median(const std::vector<double>& v) {
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  const double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  return (quantile(sorted, 0.75) - quantile(sorted, 0.25)) / median;
}

inline const std::vector<Statistic>& row_statistics() {
  static const std::vector<Statistic> statistics = {
      {"min", least_of}, {"max", most_of}, {"spread", interquartile_over_median, benchmark::kPercentage}};
  return statistics;
}

// A row's times from its runs: Google Benchmark's statistics, or the one call of one repetition.
inline TimeStats time_stats(const BenchmarkRuns& runs) {
  if (runs.seconds.empty()) throw std::logic_error("time_stats: no times");
  TimeStats s;
  if (runs.seconds.size() == 1) {
    s.median_ms = s.min_ms = s.max_ms = 1e3 * runs.seconds.front();
    return s;
  }
  s.median_ms = 1e3 * runs.statistics.at("median");
  s.min_ms = 1e3 * runs.statistics.at("min");
  s.max_ms = 1e3 * runs.statistics.at("max");
  s.spread_pct = 100 * runs.statistics.at("spread");
  return s;
}

struct DeviceInfo {
  std::string name, driver_version, runtime_version;
};

// CUDA's version numbers as "major.minor" (12040 -> "12.4").
inline std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

inline DeviceInfo describe_target(kernels::FlashTarget target) {
#if defined(FLASHPROOF_HAS_CUDA)
  if (target == kernels::FlashTarget::gpu) {
    cudaDeviceProp prop{};
    cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    int driver = 0, runtime = 0;
    cuda_check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
    cuda_check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    return {prop.name, cuda_version_text(driver), cuda_version_text(runtime)};
  }
#else
  (void)target;
#endif
  return {"host SIMT emulator, " + std::to_string(std::thread::hardware_concurrency()) + " host threads", "n/a",
          "n/a"};
}

}  // namespace flashproof::bench

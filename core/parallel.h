// parallel_for over [0, n): work items are claimed from an atomic counter by up to `threads`
// host threads (0 = the process default: hardware concurrency unless set_default_threads said
// otherwise). The first exception thrown by a work item is rethrown.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace flashproof {

// The thread count of parallel_for calls that ask for the default (0: hardware concurrency).
// Benchmarks set 1 so that every part they time runs on one thread.
inline std::atomic<int>& default_threads_setting() {
  static std::atomic<int> threads{0};
  return threads;
}
inline void set_default_threads(int threads) { default_threads_setting() = std::max(0, threads); }

template <class Fn>
void parallel_for(std::int64_t n, Fn&& fn, int threads = 0) {
  if (threads <= 0) threads = default_threads_setting();
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<std::int64_t>(threads, n));
  if (threads <= 1) {
    for (std::int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (std::int64_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace flashproof

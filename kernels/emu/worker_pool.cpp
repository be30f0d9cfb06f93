#include "kernels/emu/worker_pool.h"

#include <mutex>

namespace flashproof::emu::detail {
namespace {

std::mutex g_pool_mutex;
std::vector<std::unique_ptr<Worker>> g_pool;

}  // namespace

std::unique_ptr<Worker> take_worker() {
  const std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (g_pool.empty()) return std::make_unique<Worker>();
  std::unique_ptr<Worker> w = std::move(g_pool.back());
  g_pool.pop_back();
  return w;
}

void give_back(std::unique_ptr<Worker> w) {
  const std::lock_guard<std::mutex> lock(g_pool_mutex);
  g_pool.push_back(std::move(w));
}

}  // namespace flashproof::emu::detail

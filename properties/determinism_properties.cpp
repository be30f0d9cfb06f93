// Determinism: the forward, and the backward of implementations that promise it, give the same
// bits on every run, under several explored emulator schedules.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "kernels/emu/emulator.h"
#include "properties/check_support.h"
#include "properties/element_compare.h"
#include "properties/property_checks.h"

namespace flashproof::properties::checks {
namespace {

// The runs a determinism property makes: a first and a second under one explored emulator schedule
// (kernels/emu/emulator.h), then one under each of two more, which vary block order, interleavings
// and the order of atomics where one fixed order could hide a dependence on them. Explored
// schedules run on one host thread, the same on every run, so the property's outcome is too: the
// schedules follow from the case (its schedule, else its seed) and a saved case replays them.
// They change nothing for implementations that are not emulated (there the runs are repeats).
constexpr int kSchedulesCompared = 3;

std::vector<std::uint64_t> compared_schedules(const Case& c) {
  std::vector<std::uint64_t> out;
  std::uint64_t state = c.schedule != 0 ? c.schedule : c.seed;
  if (c.schedule != 0) out.push_back(c.schedule);
  while (out.size() < kSchedulesCompared) {
    Rng rng(state ^ 0x5c4ed01e5c4ed01eull);
    state = rng.next();
    out.push_back(state != 0 ? state : 1);
  }
  return out;
}

Outputs run_under(std::uint64_t schedule, AttentionImpl& impl, const Problem& p, bool backward, const Inputs& in) {
  const emu::ScopedSchedule explored(schedule);
  return run_implementation(impl, p, backward, in);
}

std::string run_name(std::uint64_t first, std::uint64_t schedule, bool repeat) {
  return repeat ? "second run under schedule " + std::to_string(schedule) + ": "
                : "run under schedule " + std::to_string(schedule) + " (first under " + std::to_string(first) + "): ";
}

// The outputs of one direction (O and LSE; dQ, dK and dV) bitwise equal under every compared schedule.
Outcome determinism(AttentionImpl& impl, const Case& c, bool backward) {
  const Inputs in = inputs_of(c);
  const std::vector<std::uint64_t> schedules = compared_schedules(c);
  const Outputs a = run_under(schedules[0], impl, c.problem, backward, in);
  using Tensor = HostTensor Outputs::*;
  const std::vector<std::pair<const char*, Tensor>> compared =
      backward ? std::vector<std::pair<const char*, Tensor>>{{"dQ", &Outputs::dq}, {"dK", &Outputs::dk}, {"dV", &Outputs::dv}}
               : std::vector<std::pair<const char*, Tensor>>{{"O", &Outputs::o}, {"LSE", &Outputs::lse}};
  for (std::size_t i = 0; i < schedules.size(); ++i) {
    const Outputs b = run_under(schedules[i], impl, c.problem, backward, in);
    const std::string run = run_name(schedules[0], schedules[i], i == 0);
    for (const auto& [name, tensor] : compared)
      if (std::string w = bitwise_mismatch(name, b.*tensor, a.*tensor); !w.empty()) return fail(run + w);
  }
  return {};
}

}  // namespace

Outcome forward_determinism(AttentionImpl& impl, const Case& c) { return determinism(impl, c, false); }

Outcome backward_determinism(AttentionImpl& impl, const Case& c) { return determinism(impl, c, true); }

}  // namespace flashproof::properties::checks

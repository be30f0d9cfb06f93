// Determinism: the forward, and the backward of implementations that promise it, give the same
// bits on every run, under several explored emulator schedules.
#include <cstdint>
#include <string>
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

}  // namespace

Outcome forward_determinism(AttentionImpl& impl, const Case& c) {
  const Inputs in = inputs_of(c);
  const std::vector<std::uint64_t> schedules = compared_schedules(c);
  const Outputs a = run_under(schedules[0], impl, c.problem, false, in);
  for (std::size_t i = 0; i < schedules.size(); ++i) {
    const Outputs b = run_under(schedules[i], impl, c.problem, false, in);
    const std::string run = run_name(schedules[0], schedules[i], i == 0);
    if (std::string w = bitwise_mismatch("O", b.o, a.o); !w.empty()) return fail(run + w);
    if (std::string w = bitwise_mismatch("LSE", b.lse, a.lse); !w.empty()) return fail(run + w);
  }
  return {};
}

Outcome backward_determinism(AttentionImpl& impl, const Case& c) {
  const Inputs in = inputs_of(c);
  const std::vector<std::uint64_t> schedules = compared_schedules(c);
  const Outputs a = run_under(schedules[0], impl, c.problem, true, in);
  for (std::size_t i = 0; i < schedules.size(); ++i) {
    const Outputs b = run_under(schedules[i], impl, c.problem, true, in);
    const std::string run = run_name(schedules[0], schedules[i], i == 0);
    if (std::string w = bitwise_mismatch("dQ", b.dq, a.dq); !w.empty()) return fail(run + w);
    if (std::string w = bitwise_mismatch("dK", b.dk, a.dk); !w.empty()) return fail(run + w);
    if (std::string w = bitwise_mismatch("dV", b.dv, a.dv); !w.empty()) return fail(run + w);
  }
  return {};
}

}  // namespace flashproof::properties::checks

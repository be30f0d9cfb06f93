// Explored schedules (set_schedule, emulator.h): a launch on one host thread whose seeded stream
// picks the order of the blocks, how many are resident at once, which resident block and which of
// its threads run at each turn, and how often a scheduling point switches threads. Internal to the
// emulator.
#pragma once

#include <cstdint>
#include <functional>

#include "kernels/emu/emulator.h"

namespace flashproof::emu::detail {

// Runs the launch under the explored schedule `schedule` (not 0); throws as launch() does, the
// error naming the schedule.
void launch_explored(const LaunchConfig& config, const std::function<void()>& body, std::uint64_t schedule);

}  // namespace flashproof::emu::detail

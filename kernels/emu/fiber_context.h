// One emulated thread's execution context: a Boost.Context fiber on a stack the emulator owns.
// The scheduler resumes it; it runs until it suspends (at a barrier, a warp collective or a
// scheduling point) or its entry returns. A switch saves and restores the callee-saved registers
// and the floating-point control words (MXCSR and the x87 control word), so a thread that changes
// its rounding or flush-to-zero mode changes neither the scheduler's nor another thread's, and a
// fiber starts with the control words of the host thread that started it (test_emulator,
// EmulatorFloatingPointControl). Under AddressSanitizer every switch is announced to it.
#pragma once

#include <cstddef>

#include <boost/context/fiber.hpp>

namespace flashproof::emu {

// A stack is reused, or its storage moved, after fibers that never returned from their frames
// (abandoned after a violation, or Boost's entry frame): under AddressSanitizer their redzones
// would poison the next fiber's variables or fail the copy, so they are cleared. A no-op otherwise.
void forget_old_frames(char* stack, std::size_t size);

class FiberContext {
 public:
  FiberContext() : suspended_() {}
  // Only an unstarted context moves (as when a vector of them grows): a started fiber refers to
  // its context, so moving a started one ends the program.
  FiberContext(FiberContext&& other) noexcept;
  FiberContext& operator=(FiberContext&&) = delete;
  FiberContext(const FiberContext&) = delete;
  FiberContext& operator=(const FiberContext&) = delete;
  // Forgets a fiber that has not finished without running it again (see suspended_).
  ~FiberContext() {}

  // Prepares entry() to run on [stack, stack + size) at the first resume(); the context must be
  // unstarted. The fiber has finished when entry returns; entry must not throw.
  void start_on(char* stack, std::size_t size, void (*entry)());
  // From the scheduler: runs the fiber until it suspends or finishes.
  void resume();
  // From the running fiber: returns to the resume() that ran it.
  void suspend();
  bool started() const { return stack_ != nullptr; }

 private:
  // The fiber while it is suspended or not yet run; empty while it runs and once it has finished.
  // A union member, so never destroyed: destroying a suspended Boost fiber would resume it to
  // unwind its stack, and an emulated thread abandoned after a violation must never run again.
  // Its control record lies on the emulator's stack, so forgetting it frees nothing.
  union {
    boost::context::fiber suspended_;
  };
  boost::context::fiber resumer_;  // the scheduler, while the fiber runs
  char* stack_ = nullptr;
  std::size_t size_ = 0;
  const void* resumer_stack_ = nullptr;  // for AddressSanitizer: the stack a suspend returns to
  std::size_t resumer_stack_size_ = 0;
};

}  // namespace flashproof::emu

// The emulator's fiber switch: one emulated thread's saved execution context, and the switch from
// the running context to another. On x86-64 (System V) it saves the callee-saved registers and the
// floating-point control words on the running stack and switches stacks: a dozen instructions.
// glibc's swapcontext also saves and restores the signal mask, a system call on every switch,
// which made up half of the emulator's time. Elsewhere, and under AddressSanitizer (whose fiber
// annotations are documented with ucontext), it is ucontext, so both are tested (asan.* tests).
#pragma once

#include <cstddef>

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define FLASHPROOF_EMU_ASM_FIBERS 1
#else
#include <ucontext.h>
#endif

namespace flashproof::emu {

class FiberContext {
 public:
  // Prepares the context to run entry() on [stack, stack + size) when it is first switched to.
  // entry must never return: it ends by switching away for good.
  void start_on(char* stack, std::size_t size, void (*entry)());
  // Saves the running context into *this and resumes next.
  void switch_to(FiberContext& next);
  const void* stack() const { return stack_; }
  std::size_t stack_size() const { return size_; }

 private:
#ifdef FLASHPROOF_EMU_ASM_FIBERS
  void* sp_ = nullptr;  // the saved stack pointer; the registers lie on that stack
#else
  ucontext_t uc_{};
#endif
  char* stack_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace flashproof::emu

#include "kernels/emu/fiber_context.h"

#include <cstdint>
#include <cstring>

#ifdef FLASHPROOF_EMU_ASM_FIBERS

// flashproof_emu_fiber_switch(save_sp, load_sp): pushes rbp, rbx, r12-r15 and the x87 control word
// and MXCSR (the callee-saved state of the System V ABI), stores rsp in *save_sp, loads load_sp and
// pops the same from there; the final ret resumes the other context where it called the switch
// (or, the first time, at its entry; see start_on).
extern "C" void flashproof_emu_fiber_switch(void** save_sp, void* load_sp);
asm(R"(
  .pushsection .text
  .globl flashproof_emu_fiber_switch
  .type flashproof_emu_fiber_switch, @function
  .p2align 4
flashproof_emu_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  fnstcw (%rsp)
  stmxcsr 8(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  fldcw (%rsp)
  ldmxcsr 8(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size flashproof_emu_fiber_switch, .-flashproof_emu_fiber_switch
  .popsection
)");

namespace flashproof::emu {

// The new stack holds what the switch pops: the control words (the creating thread's), six zero
// registers and entry as the return address, placed so that entry starts with rsp = 8 mod 16, as
// after a call. Above it a zero return address ends backtraces.
void FiberContext::start_on(char* stack, std::size_t size, void (*entry)()) {
  stack_ = stack;
  size_ = size;
  const auto top = (reinterpret_cast<std::uintptr_t>(stack) + size) & ~std::uintptr_t{15};
  auto* slot = reinterpret_cast<std::uint64_t*>(top);
  std::uint16_t fpu_control = 0;
  std::uint32_t mxcsr = 0;
  asm volatile("fnstcw %0" : "=m"(fpu_control));
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  slot[-1] = 0;                                        // entry's return address: none
  slot[-2] = reinterpret_cast<std::uint64_t>(entry);   // popped by ret
  for (int r = 3; r <= 8; ++r) slot[-r] = 0;           // rbp, rbx, r12-r15
  slot[-10] = fpu_control;                             // at sp
  slot[-9] = mxcsr;                                    // at sp + 8
  sp_ = &slot[-10];
}

void FiberContext::switch_to(FiberContext& next) { flashproof_emu_fiber_switch(&sp_, next.sp_); }

}  // namespace flashproof::emu

#else

namespace flashproof::emu {

void FiberContext::start_on(char* stack, std::size_t size, void (*entry)()) {
  stack_ = stack;
  size_ = size;
  getcontext(&uc_);
  uc_.uc_stack.ss_sp = stack;
  uc_.uc_stack.ss_size = size;
  uc_.uc_link = nullptr;  // entry never returns
  makecontext(&uc_, entry, 0);
}

void FiberContext::switch_to(FiberContext& next) { swapcontext(&uc_, &next.uc_); }

}  // namespace flashproof::emu

#endif

#include "kernels/emu/fiber_context.h"

#include <exception>
#include <memory>
#include <utility>

// GCC says AddressSanitizer is on with __SANITIZE_ADDRESS__, clang 14 only through __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define FP_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FP_ADDRESS_SANITIZER 1
#endif
#endif

#if defined(FP_ADDRESS_SANITIZER)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace flashproof::emu {
namespace {

// The fibers run on stacks the emulator allocates and reuses: Boost has nothing to free.
struct EmulatorOwnedStack {
  void deallocate(boost::context::stack_context&) noexcept {}
};

// AddressSanitizer must be told of every switch of stacks (it otherwise reports false positives
// when a fiber unwinds an exception): before it, the stack about to run, and after it, on the
// stack now running, that the switch completed. A null `saved` when the stack left is done for.
void announce_switch(void** saved, const void* stack, std::size_t size) {
#if defined(FP_ADDRESS_SANITIZER)
  __sanitizer_start_switch_fiber(saved, stack, size);
#else
  (void)saved, (void)stack, (void)size;
#endif
}

void switch_completed(void* saved, const void** from_stack, std::size_t* from_size) {
#if defined(FP_ADDRESS_SANITIZER)
  __sanitizer_finish_switch_fiber(saved, from_stack, from_size);
#else
  (void)saved, (void)from_stack, (void)from_size;
#endif
}

}  // namespace

void forget_old_frames(char* stack, std::size_t size) {
#if defined(FP_ADDRESS_SANITIZER)
  __asan_unpoison_memory_region(stack, size);
#else
  (void)stack, (void)size;
#endif
}

FiberContext::FiberContext(FiberContext&& other) noexcept : suspended_() {
  if (other.started()) std::terminate();
}

void FiberContext::start_on(char* stack, std::size_t size, void (*entry)()) {
  if (started()) std::terminate();
  stack_ = stack;
  size_ = size;
  forget_old_frames(stack, size);
  boost::context::stack_context whole;
  whole.sp = stack + size;  // the top: stacks grow down
  whole.size = size;
  // Boost places the fiber's control record at the top of the stack and starts the fiber below it.
  suspended_ = boost::context::fiber(
      std::allocator_arg, boost::context::preallocated(whole.sp, size, whole), EmulatorOwnedStack{},
      [this, entry](boost::context::fiber&& resumer) {
        resumer_ = std::move(resumer);
        switch_completed(nullptr, &resumer_stack_, &resumer_stack_size_);
        entry();
        announce_switch(nullptr, resumer_stack_, resumer_stack_size_);
        return std::move(resumer_);
      });
}

void FiberContext::resume() {
  void* saved = nullptr;
  announce_switch(&saved, stack_, size_);
  suspended_ = std::move(suspended_).resume();
  switch_completed(saved, nullptr, nullptr);
}

void FiberContext::suspend() {
  void* saved = nullptr;
  announce_switch(&saved, resumer_stack_, resumer_stack_size_);
  resumer_ = std::move(resumer_).resume();
  switch_completed(saved, &resumer_stack_, &resumer_stack_size_);
}

}  // namespace flashproof::emu

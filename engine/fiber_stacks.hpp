// ddlsim: the fiber lane's stacks (engine/fiber_lane.cpp): every fiber's stack in one anonymous
// mapping reserved with MAP_NORESERVE (only touched pages are committed), FIBER_STACK_BYTES each,
// instead of one mapping per stack (vm.max_map_count bounds the SimGrid lane at about 31,000
// workers). No guard pages (each would split the mapping): the lowest bytes of every stack hold a
// canary, which the lane checks once the fibers are done.
#pragma once

#include "engine/fiber_lane.hpp"

#include <boost/context/fiber.hpp>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#endif
#endif
#ifndef ASAN_UNPOISON_MEMORY_REGION
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

namespace ddlsim::sim::detail {

namespace bctx = boost::context;

constexpr std::size_t CANARY_BYTES = 64;
constexpr unsigned char CANARY = 0xA5;

/// Every fiber's stack in one mapping.
class StackSlab {
 public:
  StackSlab(std::size_t count, std::size_t bytes) : bytes_(bytes), size_(count * bytes) {
    base_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base_ == MAP_FAILED)
      throw std::runtime_error(fmt::format("cannot reserve {} bytes of address space for {} fiber stacks", size_, count));
  }
  StackSlab(const StackSlab&) = delete;
  StackSlab& operator=(const StackSlab&) = delete;
  ~StackSlab() {
    // Under AddressSanitizer: frames left by unwinding keep their poisoned red zones in the
    // sanitizer's shadow, which would outlive the mapping and hit whatever is mapped there next.
    ASAN_UNPOISON_MEMORY_REGION(base_, size_);
    ::munmap(base_, size_);
  }

  [[nodiscard]] bctx::stack_context stack(std::size_t i) {
    char* bottom = static_cast<char*>(base_) + i * bytes_;
    std::memset(bottom, CANARY, CANARY_BYTES);
    bctx::stack_context sc;
    sc.size = bytes_;
    sc.sp = bottom + bytes_;  // stacks grow down from the top
    return sc;
  }
  [[nodiscard]] bool intact(std::size_t i) const {
    const auto* bottom = static_cast<const unsigned char*>(base_) + i * bytes_;
    for (std::size_t k = 0; k < CANARY_BYTES; ++k)
      if (bottom[k] != CANARY) return false;
    return true;
  }

 private:
  void* base_ = nullptr;
  std::size_t bytes_;
  std::size_t size_;
};

/// Boost.Context's StackAllocator: stack `index` of the slab (freed with the slab).
struct SlabStack {
  StackSlab* slab;
  std::size_t index;
  bctx::stack_context allocate() { return slab->stack(index); }
  void deallocate(bctx::stack_context&) noexcept {}
};

}  // namespace ddlsim::sim::detail

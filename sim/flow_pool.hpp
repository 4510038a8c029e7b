// A free-list pool for the many small vectors a FlowNetwork keeps (per pair of link and group, per
// link as a group), and the allocator that lets std::vector draw from it.
//
// Why: the flow network's vectors are small and come and go by the hundred thousand (a run of
// ~7,000 flows over a two-level tree of links made ~227k malloc/free pairs, ~25% of its
// instructions with the teardown of ~100k vectors; bench/README.md, "Flow network pool"). Blocks
// come in power-of-two sizes (16 B to kLargest), carved from 64 KiB chunks; a freed block goes on
// its size's free list and is reused by the next request of that size; larger requests go to
// operator new. Destroying the pool frees its chunks at once. Captures: nothing of the model; the
// vectors keep their own growth policy, so their contents and iteration orders are exactly what
// std::allocator gives. Ignores: returning memory to the system before the pool is destroyed (a
// size's blocks stay on its list), thread safety (one pool per network, used by one thread).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <vector>

namespace ridge::sim {

class FlowPool {
 public:
  FlowPool() = default;
  FlowPool(const FlowPool&) = delete;
  FlowPool& operator=(const FlowPool&) = delete;
  ~FlowPool() {
    for (void* c : chunks_) ::operator delete(c);
  }

  void* allocate(std::size_t bytes) {
    if (bytes > kLargest) return ::operator new(bytes);
    const unsigned c = size_class(bytes);
    if (Free* f = free_[c]) {
      free_[c] = f->next;
      return f;
    }
    const std::size_t size = std::size_t{1} << c;
    if (static_cast<std::size_t>(end_ - next_) < size) {
      next_ = static_cast<std::byte*>(::operator new(kChunk));
      end_ = next_ + kChunk;
      chunks_.push_back(next_);
    }
    void* p = next_;
    next_ += size;
    return p;
  }

  void deallocate(void* p, std::size_t bytes) {
    if (bytes > kLargest) {
      ::operator delete(p);
      return;
    }
    const unsigned c = size_class(bytes);
    free_[c] = new (p) Free{free_[c]};
  }

 private:
  struct Free {
    Free* next;
  };
  static constexpr unsigned kSmallestLog = 4;  // 16 B: keeps every block 16-byte aligned
  static constexpr std::size_t kLargest = 4096;
  static constexpr std::size_t kChunk = 64 * 1024;
  static unsigned size_class(std::size_t bytes) {
    const auto c = static_cast<unsigned>(std::bit_width(bytes - 1));
    return c < kSmallestLog ? kSmallestLog : c;
  }

  Free* free_[13] = {};  // by log2 of the block size, up to log2(kLargest) = 12
  std::byte* next_ = nullptr;
  std::byte* end_ = nullptr;
  std::vector<void*> chunks_;
};

/// std::vector's allocator drawing from a FlowPool (which must outlive the vectors).
template <typename T>
struct FlowPoolAllocator {
  using value_type = T;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  static_assert(alignof(T) <= 16, "FlowPool blocks are 16-byte aligned");

  FlowPool* pool = nullptr;  // none: operator new and delete

  FlowPoolAllocator() = default;
  explicit FlowPoolAllocator(FlowPool* p) : pool(p) {}
  template <typename U>
  FlowPoolAllocator(const FlowPoolAllocator<U>& o) : pool(o.pool) {}  // NOLINT: rebinding

  T* allocate(std::size_t n) {
    return static_cast<T*>(pool != nullptr ? pool->allocate(n * sizeof(T))
                                           : ::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) {
    if (pool != nullptr) {
      pool->deallocate(p, n * sizeof(T));
    } else {
      ::operator delete(p);
    }
  }

  template <typename U>
  bool operator==(const FlowPoolAllocator<U>& o) const {
    return pool == o.pool;
  }
};

/// A vector whose storage comes from a FlowPool.
template <typename T>
using PoolVector = std::vector<T, FlowPoolAllocator<T>>;

}  // namespace ridge::sim

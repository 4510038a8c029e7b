// FlowPool: the free-list pool behind FlowNetwork's small vectors.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "sim/flow_pool.hpp"

using ridge::sim::FlowPool;
using ridge::sim::FlowPoolAllocator;
using ridge::sim::PoolVector;

TEST_CASE("FlowPool reuses a freed block for the next request of its size class", "[flow][pool]") {
  FlowPool pool;
  void* a = pool.allocate(24);  // class 32 B
  void* b = pool.allocate(32);  // class 32 B, the next block of the chunk
  CHECK(a != b);
  pool.deallocate(a, 24);
  CHECK(pool.allocate(17) == a);  // 17 B is class 32 B too: the freed block comes back
  void* c = pool.allocate(8);     // class 16 B (the smallest): a fresh block
  CHECK(c != a);
  CHECK(c != b);
  // Every block is 16-byte aligned (sizes are powers of two >= 16, carved from aligned chunks).
  for (const std::size_t bytes : {1u, 16u, 48u, 100u, 4096u}) {
    CHECK(reinterpret_cast<std::uintptr_t>(pool.allocate(bytes)) % 16 == 0);
  }
  // Past 4096 B requests go to operator new and back to operator delete.
  void* big = pool.allocate(10000);
  pool.deallocate(big, 10000);
}

TEST_CASE("PoolVector keeps its contents through growth, moves and reuse", "[flow][pool]") {
  FlowPool pool;
  std::vector<PoolVector<uint32_t>> vs;
  for (uint32_t i = 0; i < 100; ++i) {
    vs.emplace_back(FlowPoolAllocator<uint32_t>(&pool));
    for (uint32_t j = 0; j < i; ++j) vs.back().push_back(i * 1000 + j);
  }
  for (uint32_t i = 0; i < 100; i += 2)
    vs[i] = PoolVector<uint32_t>(FlowPoolAllocator<uint32_t>(&pool));
  for (uint32_t i = 0; i < 100; i += 2) {
    for (uint32_t j = 0; j < 3 * i; ++j) vs[i].push_back(7 * j);
  }
  for (uint32_t i = 0; i < 100; ++i) {
    if (i % 2 == 0) {
      REQUIRE(vs[i].size() == 3 * i);
      for (uint32_t j = 0; j < 3 * i; ++j) CHECK(vs[i][j] == 7 * j);
    } else {
      REQUIRE(vs[i].size() == i);
      for (uint32_t j = 0; j < i; ++j) CHECK(vs[i][j] == i * 1000 + j);
    }
  }
  // Without a pool the allocator uses operator new and delete.
  PoolVector<double> plain;
  for (int j = 0; j < 50; ++j) plain.push_back(j);
  CHECK(plain[49] == 49.0);
}

// The benchmark binary's main, and a heap meter: every operator new and delete of the process
// counts the bytes the allocator gave (bench_support.h), so a row can report its peak heap.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cstdlib>
#include <new>

#include "bench_support.h"

namespace {
std::size_t in_use = 0;
std::size_t peak = 0;

void* counted(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  in_use += malloc_usable_size(p);
  if (in_use > peak) peak = in_use;
  return p;
}
void uncounted(void* p) noexcept {
  if (p == nullptr) return;
  in_use -= malloc_usable_size(p);
  std::free(p);
}
}  // namespace

void* operator new(std::size_t n) { return counted(n); }
void* operator new[](std::size_t n) { return counted(n); }
void operator delete(void* p) noexcept { uncounted(p); }
void operator delete[](void* p) noexcept { uncounted(p); }
void operator delete(void* p, std::size_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::size_t) noexcept { uncounted(p); }

namespace bubblesim::bench {
std::size_t heap_in_use() { return in_use; }
std::size_t heap_peak() { return peak; }
void reset_heap_peak() { peak = in_use; }
}  // namespace bubblesim::bench

BENCHMARK_MAIN();

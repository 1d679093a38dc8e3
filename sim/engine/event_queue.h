#pragma once
// EventQueue: a binary min-heap keyed by (time, priority, sequence). The sequence number makes
// ties deterministic: events at the same time and priority pop in insertion order.

#include <cstdint>
#include <vector>

#include "sim/units/time.h"

namespace bubblesim {

enum class EventType : std::uint8_t { OpEnd, NetworkCheck, Arrival, LinkFault, Sync };  // Sync: gradient_sync token

struct Event {
  Time time;
  std::uint8_t priority = 0;  // lower first at equal time
  EventType type = EventType::OpEnd;
  std::uint32_t payload = 0;  // node index, or the network version
  std::uint64_t sequence = 0;
};

class EventQueue {
 public:
  void push(Time time, std::uint8_t priority, EventType type, std::uint32_t payload) {
    heap_.push_back(Event{time, priority, type, payload, next_sequence_++});
    sift_up(heap_.size() - 1);
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  Event pop() {
    Event e = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return e;
  }
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  static bool before(const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.sequence < b.sequence;
  }
  void sift_up(std::size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      std::size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  void sift_down(std::size_t i) {
    Event e = heap_[i];
    const std::size_t n = heap_.size();
    while (true) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], e)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace bubblesim

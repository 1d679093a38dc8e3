#pragma once
// EventQueue: a 4-ary min-heap keyed by (time, priority, sequence). The sequence number makes
// ties deterministic: events at the same time and priority pop in insertion order. Keys are
// unique, so the pop order is fixed by the keys alone, whatever the heap's shape.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/units/time.h"

namespace bubblesim {

// What an event is for; the event loop hands each type to its owner. The loop's own types are
// fixed; an engine component's events (engine_component.h) are all of type Component, routed by
// the event's owner, so a new component adds no type here.
enum class EventType : std::uint8_t {
  OpEnd,      // payload: the node whose op ends
  Arrival,    // payload: the node a dependency's data reached
  Network,    // payload: the network model's own (flow completions, link faults)
  Release,    // payload: a stream slot held past its op's end (by a component, an iteration start)
  Component,  // payload: the owner's own (a token of its flows, a timer); owner: which component
};

// Priorities at equal time: ends free memory and streams before arrivals start new ops.
inline constexpr std::uint8_t kPriorityEnd = 0;
inline constexpr std::uint8_t kPriorityNetwork = 1;
inline constexpr std::uint8_t kPriorityArrival = 2;

struct Event {
  Time time;
  std::uint8_t priority = 0;  // lower first at equal time
  EventType type = EventType::OpEnd;
  std::uint32_t payload = 0;  // node index, or the network version
  std::uint64_t sequence = 0;
  std::uint8_t owner = 0;  // Component events: the component's index in the loop
};

class EventQueue {
 public:
  void push(Time time, std::uint8_t priority, EventType type, std::uint32_t payload,
            std::uint8_t owner = 0) {
    heap_.push_back(Entry{time.ps(), (std::uint64_t{priority} << kSequenceBits) | next_sequence_++,
                          payload, type, owner});
    sift_up(heap_.size() - 1);
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  Event top() const { return to_event(heap_.front()); }
  Event pop() {
    Event e = to_event(heap_.front());
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return e;
  }
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  // (priority, sequence) packed into one word, so an ordering test is two integer comparisons.
  // 2^56 events per run is far beyond any replay.
  static constexpr int kSequenceBits = 56;
  static constexpr std::uint64_t kSequenceMask = (std::uint64_t{1} << kSequenceBits) - 1;
  // A 4-ary heap: half the depth of a binary one, and the four children share a cache line or two.
  static constexpr std::size_t kArity = 4;
  struct Entry {
    std::int64_t time;
    std::uint64_t order;
    std::uint32_t payload;
    EventType type;
    std::uint8_t owner;
  };
  static Event to_event(const Entry& e) {
    return Event{Time::from_ps(e.time),
                 static_cast<std::uint8_t>(e.order >> kSequenceBits),
                 e.type,
                 e.payload,
                 e.order & kSequenceMask,
                 e.owner};
  }
  static bool before(const Entry& a, const Entry& b) {
    return a.time < b.time || (a.time == b.time && a.order < b.order);
  }
  void sift_up(std::size_t i) {
    Entry e = heap_[i];
    while (i > 0) {
      std::size_t parent = (i - 1) / kArity;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  void sift_down(std::size_t i) {
    Entry e = heap_[i];
    const std::size_t n = heap_.size();
    while (true) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t last = std::min(first + kArity, n);
      for (std::size_t c = first + 1; c < last; ++c) {
        if (before(heap_[c], heap_[best])) best = c;
      }
      if (!before(heap_[best], e)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }

  std::vector<Entry> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace bubblesim

#pragma once
// ComponentResults: what the engine's behaviours (component_kind.h) measured in one replay, each
// under a type of its own, as SimGrid attaches a plugin's state to the object it measures
// (`extension_set`) instead of adding fields to a central record. A behaviour puts its record
// here in its report() and reads it back in the getters of the rows it declares; nothing else
// in the engine names it. Records are values: a result copies like any other.

#include <any>
#include <utility>
#include <vector>

namespace bubblesim {

class ComponentResults {
 public:
  /// Stores `record`, replacing one of the same type.
  template <typename T>
  void put(T record) {
    for (std::any& e : entries_) {
      if (T* held = std::any_cast<T>(&e)) {
        *held = std::move(record);
        return;
      }
    }
    entries_.emplace_back(std::move(record));
  }
  /// The record of type T, or null when its behaviour did not report (it was not engaged).
  template <typename T>
  const T* find() const {
    for (const std::any& e : entries_) {
      if (const T* held = std::any_cast<T>(&e)) return held;
    }
    return nullptr;
  }
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<std::any> entries_;  // a handful at most: one per engaged behaviour
};

}  // namespace bubblesim

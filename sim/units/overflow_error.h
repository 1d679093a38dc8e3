#pragma once
// OverflowError: an integer quantity left its representable range.

#include <stdexcept>

namespace bubblesim {

class OverflowError : public std::overflow_error {
 public:
  using std::overflow_error::overflow_error;
};

}  // namespace bubblesim

#pragma once
// ShapePort: where an engine component launches flows laid out once (flow_classes.h) instead of
// one by one through its FlowPort: a network that solves flows by class (class_flows.h) gives
// one (NetworkModel::shape_port); otherwise there is none and the component adds its flows one
// at a time. The tokens come back through the same channel as the FlowPort's.

#include <cstdint>
#include <vector>

#include "sim/engine/symmetry/flow_classes.h"
#include "sim/units/time.h"

namespace bubblesim {

class ShapePort {
 public:
  virtual ~ShapePort() = default;
  /// Lays out a shape (flows launched together, each of one of `members` members); returns its
  /// id. `now`: the time of the call (flows in flight may be split by it).
  virtual std::int32_t add_shape(const std::vector<ShapeFlow>& flows, std::int32_t members,
                                 Time now) = 0;
  /// Starts every flow of `shape` with its bytes x `scale`. Token `first_token + m` comes back
  /// when every flow of member m has arrived (its last byte plus its latency); a member without
  /// flows in the shape gets no token.
  virtual void launch(std::int32_t shape, double scale, std::uint32_t first_token, Time now) = 0;
};

}  // namespace bubblesim

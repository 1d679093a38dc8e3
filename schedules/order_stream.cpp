#include "schedules/order_stream.h"

namespace bubblesim {

std::uint64_t OrderStream::op_count() const {
  std::uint64_t n = 0;
  for (std::int32_t d = 0; d < shape_.devices; ++d) n += count(d);
  return n;
}

Table OrderStream::materialize() const {
  Table t = shape_;
  for (std::int32_t d = 0; d < t.devices; ++d) {
    auto& ops = t.device_ops[static_cast<std::size_t>(d)];
    ops.resize(static_cast<std::size_t>(count(d)));
    read(d, 0, ops);
  }
  return t;
}

}  // namespace bubblesim

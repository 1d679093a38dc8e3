#pragma once
// The two network models without links (network_model.h): NoCost, the idealized table, and
// FixedDelay, a constant delay on every cross-device transfer with no bandwidth limit. Neither
// can have contention, so every arrival is known when the data leaves.

#include "sim/engine/network/network_model.h"

namespace bubblesim {

class NoCost final : public NetworkModel {
 public:
  explicit NoCost(std::optional<Bandwidth> offload_bandwidth) : NetworkModel(offload_bandwidth) {}
  bool moves_data() const override { return false; }
  std::optional<Time> send(std::int32_t, std::int32_t, Bytes, std::uint32_t, Time now) override {
    return now;
  }
  bool contention_free(const Table&, const std::vector<StageCost>&, const OpDuration&) override {
    return true;
  }
};

class FixedDelay final : public NetworkModel {
 public:
  FixedDelay(Time delay, std::optional<Bandwidth> offload_bandwidth)
      : NetworkModel(offload_bandwidth), delay_(delay) {}
  std::optional<Time> send(std::int32_t from, std::int32_t to, Bytes, std::uint32_t,
                           Time now) override {
    return now + transfer_delay(from, to, delay_);
  }
  bool contention_free(const Table&, const std::vector<StageCost>&, const OpDuration&) override {
    return true;
  }
  /// None while transfer delays are jittered: each transfer's delay is then its own.
  std::optional<Time> fixed_delay() const override {
    return jittered() ? std::nullopt : std::optional<Time>(delay_);
  }

 private:
  Time delay_;
};

}  // namespace bubblesim

// The `model` + `cluster` section reader.
#include "sim/scenario/sections/model_section.h"

#include <doctest/doctest.h>

#include "tests/scenario/scenario_test_support.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

TEST_CASE("model and cluster: the transformer and its GPU, defaults filled") {
  Scenario sc = load(kBase +
                     "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 2048, dtype: fp32}\n"
                     "cluster: {gpu: {flops: 100TFLOPS, memory: 80GiB, "
                     "memory_bandwidth: 2TB/s}}\n");
  REQUIRE(sc.model.has_value());
  CHECK(sc.model->layers == 4);
  CHECK(sc.model->micro_batch_size == 1);
  CHECK(sc.model->embedding.vocab == 0);
  CHECK(sc.model->dtype.name == "fp32");
  CHECK(sc.model->dtype.bytes == 4);
  REQUIRE(sc.gpu.has_value());
  CHECK(sc.gpu->efficiency.kind == EfficiencyModel::Kind::Constant);
  CHECK(sc.gpu->efficiency.constant == 1.0);
  CHECK(sc.gpu->memory->count() == 80LL << 30);
  CHECK(sc.gpu->memory_bandwidth->bytes_per_second() == doctest::Approx(2e12));
}

TEST_CASE("model and cluster errors") {
  CHECK(errors(kBase + "model: {layers: 1, hidden: 1024, heads: 16, seq_len: 2048}\n"
                       "cluster: {gpu: {flops: 100TFLOPS}}\n") ==
        std::vector<std::string>{
            "s.yaml:3:17: error: model.layers: 1 layers cannot be split over 2 pipeline stages "
            "(each stage needs at least one layer)"});
  CHECK(errors(kBase + "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 2048}\n") ==
        std::vector<std::string>{
            "s.yaml:3:8: error: model: a 'model' needs 'cluster: {gpu: {flops: ..., efficiency: "
            "...}}' to derive costs"});
  CHECK(errors(kBase + "model: {layers: 4, hidden: 1000, heads: 16, seq_len: 2048}\n"
                       "cluster: {gpu: {flops: 100TFLOPS}}\n") ==
        std::vector<std::string>{
            "s.yaml:3:41: error: model.heads: hidden size 1000 is not divisible by 16 heads"});
  CHECK(
      errors(kBase + "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 2048, dtype: int4}\n"
                     "cluster: {gpu: {flops: 100TB/s, efficiency: 0}}\n") ==
      std::vector<std::string>{
          "s.yaml:3:67: error: model.dtype: 'int4' is not allowed (allowed: bf16, fp16, fp32, fp8)",
          "s.yaml:4:24: error: cluster.gpu.flops: '100TB/s' has an unknown unit 'TB/s' for a "
          "compute rate: use one of FLOPS, GFLOPS, TFLOPS, PFLOPS",
          "s.yaml:4:45: error: cluster.gpu.efficiency: 0 is out of range (allowed: above 0 up to "
          "1)"});
}

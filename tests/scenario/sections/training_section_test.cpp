// The `training` section reader: the global batch of a recipe, from which the microbatches per
// pipeline follow.
#include "sim/scenario/sections/training_section.h"

#include <doctest/doctest.h>

#include "tests/scenario/scenario_test_support.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

namespace {

const std::string kStagesOnly = "name: t\npipeline: {stages: 2}\n";
/// micro_batch_size 2, dp 4: 8 sequences per microbatch across the replicas (lines 3-6).
const std::string kRecipe =
    "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 2048, micro_batch_size: 2}\n"
    "topology: {builder: single-node, gpus: 8}\n"
    "parallelism: {dp: 4}\n"
    "cluster: {gpu: {flops: 100TFLOPS}}\n";

}  // namespace

TEST_CASE("training: the microbatches follow from the global batch") {
  Scenario sc = load(kStagesOnly + kRecipe + "training: {global_batch: 64}\n");
  CHECK(sc.microbatches == 8);  // 64 / (2 x 4)
  // In tokens: 131072 / 2048 = 64 sequences.
  Scenario tokens = load(kStagesOnly + kRecipe + "training: {global_batch_tokens: 131072}\n");
  CHECK(tokens.microbatches == 8);
  // Without a model a microbatch is one sequence.
  Scenario plain = load(kStagesOnly + kCosts + "training: {global_batch: 6}\n");
  CHECK(plain.microbatches == 6);
  // An explicit microbatches that agrees is accepted.
  Scenario both = load("name: t\npipeline: {stages: 2, microbatches: 8}\n" + kRecipe +
                       "training: {global_batch: 64}\n");
  CHECK(both.microbatches == 8);
}

TEST_CASE("training errors: not dividing, contradicting, both forms, tokens without a model") {
  CHECK(errors(kStagesOnly + kRecipe + "training: {global_batch: 60}\n") ==
        std::vector<std::string>{
            "s.yaml:7:26: error: training.global_batch: 60 sequences do not make a whole number of "
            "microbatches per pipeline (micro_batch_size x dp = 2 x 4 = 8 sequences; the nearest "
            "that divide: 56 or 64)"});
  CHECK(errors(kStagesOnly + kRecipe + "training: {global_batch: 5}\n") ==
        std::vector<std::string>{
            "s.yaml:7:26: error: training.global_batch: 5 sequences do not make a whole number of "
            "microbatches per pipeline (micro_batch_size x dp = 2 x 4 = 8 sequences; the nearest "
            "that divide: 8)"});
  CHECK(errors(kStagesOnly + kRecipe + "training: {global_batch_tokens: 100000}\n") ==
        std::vector<std::string>{
            "s.yaml:7:33: error: training.global_batch_tokens: 100000 tokens are not whole "
            "sequences of model.seq_len 2048 (the nearest that are: 98304 or 100352)"});
  CHECK(errors(kStagesOnly + kRecipe + "training: {global_batch_tokens: 122880}\n") ==
        std::vector<std::string>{
            "s.yaml:7:33: error: training.global_batch_tokens: 122880 tokens do not make a whole "
            "number of microbatches per pipeline (micro_batch_size x dp = 2 x 4 = 8 sequences; "
            "the nearest that divide: 114688 or 131072)"});
  CHECK(errors("name: t\npipeline: {stages: 2, microbatches: 4}\n" + kRecipe +
               "training: {global_batch: 64}\n") ==
        std::vector<std::string>{
            "s.yaml:7:26: error: training.global_batch: 64 makes 8 microbatches per pipeline "
            "(micro_batch_size x dp = 2 x 4 = 8 sequences), but pipeline.microbatches is 4; give "
            "one of them"});
  CHECK(errors(kStagesOnly + kRecipe + "training: {global_batch: 64, global_batch_tokens: 1}\n") ==
        std::vector<std::string>{
            "s.yaml:7:51: error: training.global_batch_tokens: give the global batch once, in "
            "sequences (global_batch) or in tokens (global_batch_tokens), not both"});
  CHECK(errors(kStagesOnly + kCosts + "training: {global_batch_tokens: 4096}\n") ==
        std::vector<std::string>{
            "s.yaml:4:33: error: training.global_batch_tokens: tokens need the sequence length "
            "of a model (model.seq_len); without a model give training.global_batch in "
            "sequences"});
  CHECK(errors(kStagesOnly + kCosts + "training: {}\n") ==
        std::vector<std::string>{
            "s.yaml:4:11: error: training: missing required key 'global_batch' (sequences per "
            "optimizer step) or 'global_batch_tokens'"});
  CHECK(errors(kStagesOnly + kCosts + "training: {global_batch: 0}\n") ==
        std::vector<std::string>{"s.yaml:4:26: error: training.global_batch: 0 is out of range "
                                 "(allowed: 1 to 1099511627776)"});
  CHECK(errors(kStagesOnly + kCosts + "training: {global_bach: 8}\n") ==
        std::vector<std::string>{
            "s.yaml:4:11: error: training: missing required key 'global_batch' (sequences per "
            "optimizer step) or 'global_batch_tokens'",
            "s.yaml:4:12: error: training.global_bach: unknown key 'global_bach'; did you mean "
            "'global_batch'? (allowed: global_batch, global_batch_tokens)"});
  // Neither microbatches nor a training section.
  CHECK(errors(kStagesOnly + kCosts) ==
        std::vector<std::string>{
            "s.yaml:2:11: error: pipeline: missing required key 'microbatches'"});
}

// The `parallelism` + `data_parallel` section reader.
#include "sim/scenario/sections/parallelism_section.h"

#include <doctest/doctest.h>

#include "tests/scenario/scenario_test_support.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

namespace {

const std::string kEightGpus = "topology: {builder: single-node, gpus: 8}\n";

}  // namespace

TEST_CASE("parallelism: dp, tp, order; data_parallel: bucket, overlap, algorithm") {
  Scenario sc = load(kBase + kCosts + kEightGpus +
                     "parallelism: {dp: 2, tp: 2, order: [dp, tp, pp]}\n"
                     "data_parallel: {bucket: 1MiB, overlap: false, algorithm: tree, "
                     "replica_sync: false}\n");
  const ParallelismSpec& par = sc.parallelism;
  CHECK(par.enabled);
  CHECK(par.dp == 2);
  CHECK(par.tp == 2);
  CHECK(par.order == std::vector<std::string>{"dp", "tp", "pp"});
  CHECK(par.data_parallel.bucket == Bytes(1 << 20));
  CHECK_FALSE(par.data_parallel.overlap);
  CHECK(par.data_parallel.algorithm == CollectiveAlgorithm::Tree);
  CHECK_FALSE(par.data_parallel.replica_sync);
  CHECK(par.world(sc.stages) == 8);
  // dp innermost, then tp, then pp: (s, r, t) -> r + 2 t + 4 s.
  CHECK(par.rank_index(sc.stages, 1, 1, 0) == 5);
  CHECK(par.gpus.size() == 8);
  CHECK_FALSE(load(kBase + kCosts).parallelism.enabled);
}

TEST_CASE("parallelism errors") {
  CHECK(errors(kBase + kCosts + kEightGpus + "parallelism: {order: [tp, pp, pp]}\n") ==
        std::vector<std::string>{"s.yaml:5:22: error: parallelism.order: order must list tp, pp "
                                 "and dp once each and ep and cp at most once (innermost "
                                 "first), got [tp, pp, pp]"});
  CHECK(errors(kBase + kCosts + kEightGpus + "data_parallel: {bucket: 0B}\n") ==
        std::vector<std::string>{
            "s.yaml:5:25: error: data_parallel.bucket: the bucket must be larger than 0 bytes"});
  CHECK(
      errors(kBase + kCosts + kEightGpus + "data_parallel: {algorithm: butterfly}\n") ==
      std::vector<std::string>{"s.yaml:5:28: error: data_parallel.algorithm: 'butterfly' is not "
                               "allowed (allowed: auto, ring, tree, nvls, nvls_tree, pat, collnet, "
                               "hierarchical)"});
}

// What `list` and `explain NAME` print (sim/report/catalog_report.h), exactly, for generators
// made here so the expected text does not follow the built-ins' descriptions.
#include "sim/report/catalog_report.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "schedules/builtin_generators.h"

using namespace bubblesim;

namespace {

Registry two_generators() {
  Registry r;
  Generator plain;
  plain.info = {"plain", "one forward, one backward", "straight", "a paper", {}};
  plain.generate = [](const GeneratorInput&) { return Table{}; };
  r.add(plain);
  Generator tuned = plain;
  tuned.info = {"tuned",
                "with parameters",
                "loop",
                "another paper",
                {integer_param("chunks", 2, "chunks per device", 1),
                 optional_integer_param("group", "group size; default p", 1),
                 choice_param("order", "depth", {"depth", "breadth"}, "the order")}};
  r.add(tuned);
  return r;
}

}  // namespace

TEST_CASE("explain NAME: description, placement, source, origin, then the parameters") {
  const Registry r = two_generators();
  CHECK(schedule_description_text(r, "plain") ==
        "plain: one forward, one backward\n"
        "  placement: straight\n"
        "  source: a paper\n"
        "  origin: built-in\n"
        "  parameters: none\n");
  CHECK(schedule_description_text(r, "tuned") ==
        "tuned: with parameters\n"
        "  placement: loop\n"
        "  source: another paper\n"
        "  origin: built-in\n"
        "  parameters:\n"
        "    chunks (integer, default 2): chunks per device\n"
        "    group (integer, default derived): group size; default p\n"
        "    order (choice, default depth): the order\n"
        "      one of: depth, breadth\n");
}

TEST_CASE("list: one row per schedule in registration order") {
  const std::string out = schedule_list_text(two_generators());
  const auto plain = out.find("plain"), tuned = out.find("tuned");
  REQUIRE(plain != std::string::npos);
  REQUIRE(tuned != std::string::npos);
  CHECK(plain < tuned);
  CHECK(out.find("schedule") < plain);
  // Only built-ins: no origin.
  CHECK(out.find("built-in") == std::string::npos);
  CHECK(out.find("plugin") == std::string::npos);
  CHECK(out.find("plain     straight   one forward, one backward\n") != std::string::npos);
}

TEST_CASE("list fits the width: one line per schedule, long descriptions cut after a clause") {
  const Registry registry = builtin_registry();
  for (std::size_t width : {60, 100}) {
    CAPTURE(width);
    std::size_t longest = 0, start = 0, lines = 0;
    const std::string out = schedule_list_text(registry, width);
    for (std::size_t end = out.find('\n'); end != std::string::npos;
         start = end + 1, end = out.find('\n', start), ++lines)
      longest = std::max(longest, end - start);
    CHECK(longest <= width);
    // Headings, rule, one per schedule, explain (at 60 the placement column wraps too).
    if (width == 100) CHECK(lines == registry.names().size() + 3);
    CHECK(out.find("zb-h1") != std::string::npos);
    CHECK(out.find("...") != std::string::npos);
    CHECK(out.find("bubblesim explain NAME") != std::string::npos);
  }
  // Without a width limit every description is whole.
  const std::string whole = schedule_list_text(registry, 0);
  for (const std::string& name : registry.names())
    CHECK(whole.find(registry.find(name)->info.description) != std::string::npos);
}

// CsvReader (sim/units/csv_records.h): RFC 4180 quoting, line endings, byte-order marks, comment
// lines, positions of every field, and records torn or left with an open quote.
#include "sim/units/csv_records.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace bubblesim {
namespace {

std::vector<std::string> values(const CsvRecord& r) {
  std::vector<std::string> out;
  for (const CsvField& f : r.fields) out.emplace_back(f.value);
  return out;
}

TEST_CASE("plain fields, positions and line endings") {
  CsvReader reader(
      "\xEF\xBB\xBF"
      "a,bb,\r\nccc\n\n,x");
  auto r = reader.next();
  REQUIRE(r);
  CHECK(values(*r) == std::vector<std::string>{"a", "bb", ""});
  CHECK(r->fields[1].line == 1);
  CHECK(r->fields[1].column == 3);
  CHECK(r->text() == "a,bb,");
  CHECK(r->terminated);
  r = reader.next();
  CHECK(values(*r) == std::vector<std::string>{"ccc"});
  CHECK(r->line == 2);
  r = reader.next();  // a blank line is one empty field
  CHECK(values(*r) == std::vector<std::string>{""});
  r = reader.next();
  CHECK(values(*r) == std::vector<std::string>{"", "x"});
  CHECK(r->fields[1].column == 2);
  CHECK(r->line == 4);
  CHECK_FALSE(r->terminated);
  CHECK_FALSE(reader.next());
}

TEST_CASE("quoted fields hold commas, newlines and doubled quotes") {
  const std::string text = "\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",z\nnext,\"\"\n";
  CsvReader reader(text);
  auto r = reader.next();
  REQUIRE(r);
  CHECK(values(*r) == std::vector<std::string>{"a,b", "say \"hi\"", "two\nlines", "z"});
  CHECK(r->fields[0].raw == "\"a,b\"");
  CHECK(r->fields[0].column == 2);  // inside the quote
  CHECK(r->fields[3].line == 2);
  CHECK(r->fields[3].column == 8);
  CHECK(r->raw == text.substr(0, text.find("next")));
  const std::size_t next_at = reader.offset();
  CHECK(text.substr(next_at, 4) == "next");
  // The record's own copy of an unescaped value survives a move.
  std::vector<CsvRecord> kept;
  kept.push_back(std::move(*r));
  kept.reserve(16);
  CHECK(kept.front().fields[1].value == "say \"hi\"");
  r = reader.next();
  CHECK(r->line == 3);
  CHECK(values(*r) == std::vector<std::string>{"next", ""});
}

TEST_CASE("a quote left open or a record without its newline is reported, not dropped") {
  CsvReader open("a,\"b\nc");
  auto r = open.next();
  REQUIRE(r);
  CHECK_FALSE(r->quotes_closed);
  CHECK_FALSE(r->terminated);
  CHECK(values(*r) == std::vector<std::string>{"a", "b\nc"});
  CHECK_FALSE(open.next());
}

TEST_CASE("comment lines are read whole when asked for") {
  const std::string text = "  # a \"comment, with quote\nx,y\n#end";
  CsvReader plain(text);
  CHECK(plain.next()->fields.size() == 2);  // without comments a '#' line is a record
  CsvReader reader(text, CsvComments::Hash);
  auto c = reader.next();
  CHECK(c->comment);
  CHECK(c->fields.empty());
  CHECK(c->text() == "  # a \"comment, with quote");
  auto r = reader.next();
  CHECK(values(*r) == std::vector<std::string>{"x", "y"});
  CHECK(r->line == 2);
  CHECK(reader.next()->comment);
  CHECK_FALSE(reader.next());
}

}  // namespace
}  // namespace bubblesim

// GraphViz DOT read with Boost.Graph's read_graphviz (the whole language: subgraphs, edge chains
// `a -- b -- c`, `node [...]` and `edge [...]` defaults, quoted and HTML ids). Boost reports
// neither the position of an element nor of a syntax error, so a light scan of the tokens (ids,
// strings, edge operators; comments skipped) places each vertex at its first mention and each
// edge at its first `source -- target` (or `->`) pair; vertices and links are taken in that
// order.

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>
#include <cctype>
#include <sstream>
#include <unordered_map>

#include "topologies/formats/graph_elements.h"

namespace bubblesim::graph_file {
namespace {

struct Token {
  std::string text;  // an id or string (unquoted), or "--" / "->"
  SourceLocation where;
  bool in_attributes = false;  // inside [...]: an attribute's name or value, not a vertex
};

std::vector<Token> scan_tokens(const std::string& text, const std::string& file) {
  std::vector<Token> out;
  int line = 1, column = 1;
  int brackets = 0;
  std::size_t i = 0;
  auto step = [&]() {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    ++i;
  };
  auto id_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
           static_cast<unsigned char>(c) >= 0x80;
  };
  while (i < text.size()) {
    const char c = text[i];
    const bool line_start = column == 1;
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') step();
    } else if (c == '#' && line_start) {
      while (i < text.size() && text[i] != '\n') step();
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      while (i < text.size() && text.compare(i, 2, "*/") != 0) step();
      if (i < text.size()) {
        step();
        step();
      }
    } else if (c == '"') {
      Token t{"", {file, line, column}};
      step();
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '"') step();
        t.text += text[i];
        step();
      }
      if (i < text.size()) step();
      t.in_attributes = brackets > 0;
      out.push_back(std::move(t));
    } else if (c == '-' && i + 1 < text.size() && (text[i + 1] == '-' || text[i + 1] == '>')) {
      out.push_back({text.substr(i, 2), {file, line, column}});
      step();
      step();
    } else if (id_char(c)) {
      Token t{"", {file, line, column}};
      while (i < text.size() && id_char(text[i])) {
        t.text += text[i];
        step();
      }
      t.in_attributes = brackets > 0;
      out.push_back(std::move(t));
    } else {
      if (c == '[') ++brackets;
      if (c == ']' && brackets > 0) --brackets;
      step();
    }
  }
  return out;
}

struct DotVertex {
  std::string id, kind, nic;
};
struct DotEdge {
  std::string bandwidth, latency, zoo_speed;
};

template <typename Graph>
bool parse(const std::string& text, Graph& g, std::string& error) {
  boost::dynamic_properties dp(boost::ignore_other_properties);
  dp.property("node_id", boost::get(&DotVertex::id, g));
  dp.property(kKindAttribute, boost::get(&DotVertex::kind, g));
  dp.property(kNicAttribute, boost::get(&DotVertex::nic, g));
  dp.property(kBandwidthAttribute, boost::get(&DotEdge::bandwidth, g));
  dp.property(kLatencyAttribute, boost::get(&DotEdge::latency, g));
  dp.property(kZooSpeedAttribute, boost::get(&DotEdge::zoo_speed, g));
  std::istringstream in(text);
  try {
    boost::read_graphviz(in, g, dp, "node_id");
    return true;
  } catch (const boost::directed_graph_error&) {
    error = "directed";  // a `digraph` read into an undirected graph
  } catch (const std::exception& e) {
    error = e.what();
  }
  return false;
}

Attributes present(std::initializer_list<std::pair<const char*, const std::string*>> values) {
  Attributes out;
  for (const auto& [name, value] : values)
    if (!value->empty()) out[name] = *value;
  return out;
}

template <typename Graph>
Elements elements_of(const Graph& g, bool directed, const std::vector<Token>& tokens,
                     const std::string& file) {
  Elements out;
  out.directed = directed;
  std::unordered_map<std::string, SourceLocation> first_mention;
  for (const Token& t : tokens)
    if (!t.in_attributes) first_mention.emplace(t.text, t.where);
  auto mention = [&](const std::string& id) {
    auto it = first_mention.find(id);
    return it == first_mention.end() ? SourceLocation{file, 0, 0} : it->second;
  };
  for (auto v : boost::make_iterator_range(boost::vertices(g))) {
    const DotVertex& dv = g[v];
    out.vertices.push_back(
        {dv.id, present({{kKindAttribute, &dv.kind}, {kNicAttribute, &dv.nic}}), mention(dv.id)});
  }
  std::map<std::pair<std::string, std::string>, SourceLocation> pair_at;
  for (std::size_t k = 0; k + 2 < tokens.size(); ++k) {
    if (!tokens[k].in_attributes && (tokens[k + 1].text == "--" || tokens[k + 1].text == "->"))
      pair_at.emplace(std::pair{tokens[k].text, tokens[k + 2].text}, tokens[k].where);
  }
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    const DotEdge& de = g[e];
    const std::string& a = g[boost::source(e, g)].id;
    const std::string& b = g[boost::target(e, g)].id;
    auto at = pair_at.find({a, b});
    if (at == pair_at.end() && !directed) at = pair_at.find({b, a});
    out.edges.push_back({a, b,
                         present({{kBandwidthAttribute, &de.bandwidth},
                                  {kLatencyAttribute, &de.latency},
                                  {kZooSpeedAttribute, &de.zoo_speed}}),
                         at == pair_at.end() ? mention(a) : at->second});
  }
  // Boost keeps the nodes in the order of their names; the topology takes them (and the links)
  // in the order the file gives them, as the other formats do: GPUs are placed in that order.
  auto in_file_order = [](const auto& x, const auto& y) {
    return std::pair{x.where.line, x.where.column} < std::pair{y.where.line, y.where.column};
  };
  std::stable_sort(out.vertices.begin(), out.vertices.end(), in_file_order);
  std::stable_sort(out.edges.begin(), out.edges.end(), in_file_order);
  return out;
}

}  // namespace

Elements read_dot(const std::string& text, const std::string& file, DiagnosticList& d) {
  using Undirected =
      boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, DotVertex, DotEdge>;
  using Directed =
      boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, DotVertex, DotEdge>;
  const std::vector<Token> tokens = scan_tokens(text, file);
  std::string error;
  Undirected undirected;
  if (parse(text, undirected, error)) return elements_of(undirected, false, tokens, file);
  if (error == "directed") {
    Directed directed;
    if (parse(text, directed, error)) return elements_of(directed, true, tokens, file);
  }
  d.add({file, 0, 0}, "topology", fmt::format("not a readable GraphViz DOT graph: {}", error));
  return {};
}

}  // namespace bubblesim::graph_file

// GraphML (graphml.graphdrawing.org) read with Boost.PropertyTree's XML parser, the parser
// Boost.Graph's own read_graphml is built on. read_graphml itself is not used: it drops the
// node ids (a vertex is only its position in the file), and bubblesim names vertices by them
// (placement, NIC pairing, traces), and it throws on any key whose declared attr.type differs from
// the property map registered for it. Element positions come from a scan of the text for the
// `<node` and `<edge` tags, in the order the parser returns them.

#include <fmt/format.h>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <sstream>
#include <unordered_map>

#include "topologies/formats/graph_elements.h"

namespace bubblesim::graph_file {
namespace {

namespace pt = boost::property_tree;

struct TagPositions {
  std::vector<SourceLocation> nodes, edges;
};

// Where each <node and <edge tag opens, outside comments and CDATA sections.
TagPositions tag_positions(const std::string& text, const std::string& file) {
  TagPositions out;
  int line = 1, column = 1;
  auto advance = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < text.size(); ++k) {
      if (text[k] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
  };
  auto opens = [&](std::size_t i, std::string_view tag) {
    if (text.compare(i, tag.size(), tag) != 0) return false;
    const std::size_t after = i + tag.size();
    return after >= text.size() || text[after] == ' ' || text[after] == '\t' ||
           text[after] == '\n' || text[after] == '\r' || text[after] == '>' || text[after] == '/';
  };
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t skip_to = std::string::npos;
    if (text.compare(i, 4, "<!--") == 0) {
      skip_to = text.find("-->", i + 4);
      skip_to = skip_to == std::string::npos ? text.size() : skip_to + 3;
    } else if (text.compare(i, 9, "<![CDATA[") == 0) {
      skip_to = text.find("]]>", i + 9);
      skip_to = skip_to == std::string::npos ? text.size() : skip_to + 3;
    } else if (opens(i, "<node")) {
      out.nodes.push_back({file, line, column});
    } else if (opens(i, "<edge")) {
      out.edges.push_back({file, line, column});
    }
    const std::size_t next = skip_to == std::string::npos ? i + 1 : skip_to;
    advance(i, next);
    i = next;
  }
  return out;
}

struct Key {
  std::string name;     // attr.name: what bubblesim reads
  std::string applies;  // `for`: node, edge, graph or all
  std::optional<std::string> default_value;
};

// GraphML's attribute names contain dots (attr.name), property_tree's default path separator.
std::string attribute(const pt::ptree& element, const std::string& name) {
  return element.get<std::string>(pt::ptree::path_type("<xmlattr>/" + name, '/'), "");
}

// The attributes of one node or edge: each <data key=...> whose key declares a name bubblesim
// reads, then the keys' defaults for what the element does not give.
Attributes element_attributes(const pt::ptree& element, const std::string& kind,
                              const std::unordered_map<std::string, Key>& keys,
                              const SourceLocation& where, DiagnosticList& d) {
  Attributes out;
  for (const auto& [tag, child] : element) {
    if (tag != "data") continue;
    const std::string key_id = attribute(child, "key");
    auto key = keys.find(key_id);
    if (key == keys.end()) {
      d.add(where, "topology", fmt::format("<data key=\"{}\"> names no <key> of the file", key_id));
      continue;
    }
    out[key->second.name] = child.data();
  }
  for (const auto& [id, key] : keys) {
    if ((key.applies == kind || key.applies == "all") && key.default_value)
      out.emplace(key.name, *key.default_value);
  }
  return out;
}

}  // namespace

Elements read_graphml(const std::string& text, const std::string& file, DiagnosticList& d) {
  Elements out;
  pt::ptree tree;
  std::istringstream in(text);
  try {
    pt::read_xml(in, tree, pt::xml_parser::no_comments);
  } catch (const pt::xml_parser_error& e) {
    d.add({file, static_cast<int>(e.line()), 1}, "topology",
          fmt::format("not well-formed XML: {}", e.message()));
    return out;
  }
  const auto root = tree.get_child_optional("graphml");
  if (!root) {
    d.add({file, 1, 1}, "topology", "a GraphML file's root element is <graphml>");
    return out;
  }
  std::unordered_map<std::string, Key> keys;
  const pt::ptree* graph = nullptr;
  for (const auto& [tag, child] : *root) {
    if (tag == "key") {
      Key key{attribute(child, "attr.name"), attribute(child, "for"), std::nullopt};
      if (key.name.empty()) key.name = attribute(child, "id");
      if (key.applies.empty()) key.applies = "all";
      if (auto def = child.get_child_optional("default")) key.default_value = def->data();
      keys[attribute(child, "id")] = key;
    } else if (tag == "graph") {
      if (graph) {
        d.add({file, 0, 0}, "topology",
              "the file holds several <graph> elements; a topology file holds one");
        return out;
      }
      graph = &child;
    }
  }
  if (!graph) {
    d.add({file, 0, 0}, "topology", "the file holds no <graph> element");
    return out;
  }
  out.directed = attribute(*graph, "edgedefault") == "directed";
  const TagPositions positions = tag_positions(text, file);
  std::size_t node_index = 0, edge_index = 0;
  auto position = [&](const std::vector<SourceLocation>& all, std::size_t i) {
    return i < all.size() ? all[i] : SourceLocation{file, 0, 0};
  };
  for (const auto& [tag, child] : *graph) {
    if (tag == "node") {
      const SourceLocation where = position(positions.nodes, node_index++);
      if (child.get_child_optional("graph")) {
        d.add(where, "topology",
              fmt::format("node '{}' holds a nested <graph>; nested graphs are not supported "
                          "(list every vertex in the one graph)",
                          attribute(child, "id")));
        continue;
      }
      out.vertices.push_back(
          {attribute(child, "id"), element_attributes(child, "node", keys, where, d), where});
    } else if (tag == "edge") {
      const SourceLocation where = position(positions.edges, edge_index++);
      out.edges.push_back({attribute(child, "source"), attribute(child, "target"),
                           element_attributes(child, "edge", keys, where, d), where});
    } else if (tag == "hyperedge") {
      d.add({file, 0, 0}, "topology",
            "<hyperedge> is not supported: a link joins two vertices (use <edge>)");
    }
  }
  return out;
}

}  // namespace bubblesim::graph_file

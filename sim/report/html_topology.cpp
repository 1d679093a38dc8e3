#include "sim/report/html_topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "sim/report/html_escape.h"
#include "sim/report/metric_format.h"
#include "sim/report/topology_layout.h"

namespace bubblesim {
namespace {

constexpr double kBoxHeight = 30.0, kRowGap = 64.0, kMargin = 12.0, kColumnGap = 14.0;

struct Usage {
  Time busy;
  Bytes bytes;
};

/// "0-3,6": sorted integers with runs written as ranges.
std::string ranges(const std::vector<std::int32_t>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? fmt::format("{}", v[i]) : fmt::format("{}-{}", v[i], v[j]);
    i = j + 1;
  }
  return out;
}

std::string seconds(Time t) { return format_metric(MetricUnit::Seconds, t.seconds()); }
std::string bytes(Bytes b) { return format_metric(MetricUnit::Bytes, b.as_double()); }

/// What a set of directed links carried: per name (parallel links share one), summed once.
struct Carried {
  std::vector<std::pair<std::string, Usage>> per_name;  // in link order, names that carried data
  std::size_t names = 0;                                // distinct directed names
  Time busiest;
  Bytes total;
};

Carried carried(const Topology& t, const std::vector<LinkId>& links,
                const std::map<std::string, Usage>& usage) {
  Carried c;
  std::set<std::string> seen;
  for (LinkId l : links) {
    std::string name = t.link_name(l);
    if (!seen.insert(name).second) continue;
    auto it = usage.find(name);
    if (it == usage.end()) continue;
    c.busiest = std::max(c.busiest, it->second.busy);
    c.total = c.total + it->second.bytes;
    c.per_name.emplace_back(std::move(name), it->second);
  }
  c.names = seen.size();
  return c;
}

std::string share(Time busy, Time makespan) {
  if (makespan <= Time::zero()) return "";
  const double pct = 100.0 * busy.seconds() / makespan.seconds();
  return pct < 1.0 ? fmt::format(" ({:.2f}% of the makespan)", pct)
                   : fmt::format(" ({:.0f}% of the makespan)", pct);
}

/// Busy time and bytes per directed link name of a run.
std::map<std::string, Usage> usage_of(const ScheduleRun& run) {
  std::map<std::string, Usage> usage;
  for (const LinkUsage& u : run.simulation.metrics.comm.links) {
    Usage& x = usage[u.name];
    x.busy = x.busy + u.busy;
    x.bytes = x.bytes + u.bytes;
  }
  return usage;
}

std::string link_tooltip(const std::string& a, const std::string& b, const Carried& c,
                         Time makespan) {
  std::string s =
      fmt::format("{} \u2014 {}: {} directed link{}", a, b, c.names, c.names == 1 ? "" : "s");
  if (c.per_name.empty()) return s + ", no traffic";
  if (c.per_name.size() <= 4) {
    for (const auto& [name, u] : c.per_name)
      s += fmt::format("\n{}: busy {}{}, {}", name, seconds(u.busy), share(u.busy, makespan),
                       bytes(u.bytes));
    return s;
  }
  return s + fmt::format("\n{} carried traffic, {} in all; busiest {}{}", c.per_name.size(),
                         bytes(c.total), seconds(c.busiest), share(c.busiest, makespan));
}

/// A node's second line (its kind, or its GPUs and pipeline devices) and the start of its
/// tooltip; the same for every schedule.
struct NodeText {
  std::string second, tip;
};

std::vector<NodeText> node_texts(const Topology& t, const TopologyLayout& layout,
                                 const std::vector<VertexId>& placement) {
  std::map<VertexId, std::vector<std::int32_t>> devices_on;
  for (std::size_t d = 0; d < placement.size(); ++d)
    devices_on[placement[d]].push_back(static_cast<std::int32_t>(d));
  std::vector<NodeText> out;
  for (const TopologyNode& n : layout.nodes) {
    std::vector<std::int32_t> devices;
    for (VertexId v : n.members)
      if (auto it = devices_on.find(v); it != devices_on.end())
        devices.insert(devices.end(), it->second.begin(), it->second.end());
    std::sort(devices.begin(), devices.end());
    const std::string kind(vertex_kind_name(t.vertex_kind(n.members.front())));
    NodeText x;
    if (n.members.size() == 1)
      x.second =
          n.gpus == 1 ? (devices.empty() ? "no stage" : fmt::format("d{}", ranges(devices))) : kind;
    else
      x.second = fmt::format("{} GPUs{}", n.gpus,
                             devices.empty() ? "" : fmt::format(", d{}", ranges(devices)));
    x.tip = n.members.size() == 1
                ? fmt::format("{} ({})", n.label, kind)
                : fmt::format("{}: {} vertices, {} GPUs", n.label, n.members.size(), n.gpus);
    if (!devices.empty())
      x.tip +=
          fmt::format("\npipeline device{} {}", devices.size() == 1 ? "" : "s", ranges(devices));
    out.push_back(std::move(x));
  }
  return out;
}

std::string svg_for_run(const Topology& t, const TopologyLayout& layout,
                        const std::vector<NodeText>& texts, const ScheduleRun& run, Time scale,
                        bool shown) {
  const std::map<std::string, Usage> usage = usage_of(run);
  const Time makespan = run.simulation.metrics.makespan;
  std::size_t longest = 8;
  for (std::size_t i = 0; i < layout.nodes.size(); ++i)
    longest = std::max({longest, layout.nodes[i].label.size(), texts[i].second.size()});
  const double box = std::min(150.0, 6.0 * static_cast<double>(longest) + 12.0);
  const double width = 2 * kMargin + layout.columns * (box + kColumnGap);
  const double height = 2 * kMargin + layout.rows * kBoxHeight + (layout.rows - 1) * kRowGap;
  std::map<std::int32_t, std::int32_t> in_row;
  for (const TopologyNode& n : layout.nodes) ++in_row[n.row];
  auto cx = [&](const TopologyNode& n) {
    return kMargin + (width - 2 * kMargin) * (n.column + 0.5) / in_row[n.row];
  };
  auto cy = [&](const TopologyNode& n) {
    return kMargin + n.row * (kBoxHeight + kRowGap) + kBoxHeight / 2;
  };
  std::string s = fmt::format(
      "<svg class=\"topology\" data-schedule=\"{}\" data-nodes=\"{}\" data-edges=\"{}\" "
      "width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\"{}>\n",
      escape_html(run.label), layout.nodes.size(), layout.edges.size(), width, height, width,
      height, shown ? "" : " style=\"display:none\"");
  for (const TopologyEdge& e : layout.edges) {
    const TopologyNode& a = layout.nodes[e.a];
    const TopologyNode& b = layout.nodes[e.b];
    const Carried c = carried(t, e.links, usage);
    const double u = scale > Time::zero() ? c.busiest.seconds() / scale.seconds() : 0.0;
    const std::string stroke =
        c.per_name.empty() ? "stroke=\"#bbb\" stroke-width=\"1\" stroke-dasharray=\"3 3\""
                           : fmt::format("stroke=\"hsl({:.0f},75%,45%)\" stroke-width=\"{:.1f}\"",
                                         220.0 * (1.0 - u), 1.5 + 6.0 * u);
    const double x1 = cx(a), y1 = cy(a), x2 = cx(b), y2 = cy(b);
    // Nodes of one row are joined by an arc above it, so the line does not run through boxes.
    const std::string path =
        a.row == b.row ? fmt::format("M{:.1f} {:.1f} Q{:.1f} {:.1f} {:.1f} {:.1f}", x1, y1,
                                     (x1 + x2) / 2, y1 - kBoxHeight - 0.3 * kRowGap, x2, y2)
                       : fmt::format("M{:.1f} {:.1f} L{:.1f} {:.1f}", x1, y1, x2, y2);
    s += fmt::format(
        "<path class=\"topo-link\" data-busy-ps=\"{}\" data-bytes=\"{}\" d=\"{}\" fill=\"none\" "
        "{}><title>{}</title></path>\n",
        c.busiest.ps(), c.total.count(), path, stroke,
        escape_html(link_tooltip(a.label, b.label, c, makespan)));
  }
  for (std::size_t i = 0; i < layout.nodes.size(); ++i) {
    const TopologyNode& n = layout.nodes[i];
    const std::string& second = texts[i].second;
    std::string tip = texts[i].tip;
    if (!n.inner_links.empty()) {
      const Carried c = carried(t, n.inner_links, usage);
      tip += fmt::format("\n{} directed links inside, {} carried traffic, {} in all", c.names,
                         c.per_name.size(), bytes(c.total));
      if (!c.per_name.empty())
        tip += fmt::format("; busiest {}{}", seconds(c.busiest), share(c.busiest, makespan));
    }
    const bool gpu = n.gpus > 0;
    s += fmt::format(
        "<g class=\"topo-node\" data-vertex=\"{}\"><title>{}</title><rect x=\"{:.1f}\" "
        "y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.0f}\" rx=\"{}\" fill=\"{}\" stroke=\"#666\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text><text x=\"{:.1f}\" "
        "y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#555\">{}</text></g>\n",
        escape_html(n.label), escape_html(tip), cx(n) - box / 2, cy(n) - kBoxHeight / 2, box,
        kBoxHeight, gpu ? 2 : 8, gpu ? "#e6f2e6" : "#eef0f6", cx(n), cy(n) - 2,
        escape_html(n.label), cx(n), cy(n) + 10, escape_html(second));
  }
  return s + "</svg>\n";
}

}  // namespace

std::string html_topology_section(const Scenario& scenario, const ScenarioRun& result) {
  const CommunicationSpec& comm = scenario.communication;
  if (!comm.topology) return "";
  const Topology& t = *comm.topology;
  const TopologyLayout layout = layout_topology(t);
  const std::vector<NodeText> texts = node_texts(t, layout, comm.placement);
  std::string h = "<h2>topology</h2>\n<p class=\"topology-note\">";
  if (!layout.aggregation.empty()) h += escape_html(layout.aggregation) + ". ";
  h += fmt::format(
      "Links: colour (blue to red) and width by busy time (the busier direction), on one scale "
      "for every schedule: red is the busiest link of the report; dashed grey: no traffic. Hover a "
      "link for its bytes and busy time, a "
      "node for its members; d0-{}: the pipeline devices.</p>\n",
      std::max<std::size_t>(comm.placement.size(), 1) - 1);
  std::vector<const ScheduleRun*> runs;
  for (const ScheduleRun& r : result.runs)
    if (!r.simulation.timings.empty()) runs.push_back(&r);
  if (runs.size() > 1) {
    h += "<p><label>schedule <select id=\"topology-schedule\" onchange=\"for(const s of "
         "document.querySelectorAll('svg.topology'))s.style.display=s.dataset.schedule===this."
         "value?'':'none'\">";
    for (const ScheduleRun* r : runs)
      h += fmt::format("<option>{}</option>", escape_html(r->label));
    h += "</select></label></p>\n";
  }
  // One colour scale for every schedule: the busiest drawn link of the report.
  Time scale;
  for (const ScheduleRun* r : runs) {
    const std::map<std::string, Usage> usage = usage_of(*r);
    for (const TopologyEdge& e : layout.edges)
      scale = std::max(scale, carried(t, e.links, usage).busiest);
  }
  for (std::size_t i = 0; i < runs.size(); ++i)
    h += svg_for_run(t, layout, texts, *runs[i], scale, i == 0);
  return h;
}

}  // namespace bubblesim

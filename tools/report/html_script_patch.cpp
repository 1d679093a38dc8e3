#include "tools/report/html_script_patch.h"

#include <fmt/format.h>

#include <stdexcept>

namespace bubblesim {

void patch_script(std::string& script, const std::string& view, const std::string& anchor,
                  const std::string& with) {
  const std::size_t at = script.find(anchor);
  if (at == std::string::npos || script.find(anchor, at + 1) != std::string::npos)
    throw std::logic_error(view + ": the report script changed around: " + anchor);
  script.replace(at, anchor.size(), with);
}

std::string legend_line_js(const std::string& table, const std::string& css_class,
                           const std::string& intro, const std::string& outro) {
  const std::string note = css_class.substr(0, css_class.find('-')) + "Note";
  std::string js = fmt::format(R"JS(
  var {0} = document.createElement('div');
  {0}.className = '{1}';
  {0}.appendChild(document.createTextNode('{2}'));
  Object.keys({3}).forEach(function (k) {{
    var s = document.createElement('span');
    var i = document.createElement('i');
    i.style.background = {3}[k][1];
    s.appendChild(i);
    s.appendChild(document.createTextNode({3}[k][0]));
    {0}.appendChild(s);
  }});
)JS",
                               note, css_class, intro, table);
  if (!outro.empty())
    js += fmt::format("  {}.appendChild(document.createTextNode('{}'));\n", note, outro);
  js += fmt::format("  legend.appendChild({});\n", note);
  return js;
}

}  // namespace bubblesim

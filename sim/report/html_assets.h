#pragma once
// Internal to the HTML reports (html_report.cpp; the plan's page takes the styles): the files of
// sim/report/assets/, embedded at build time (sim/report/CMakeLists.txt generates
// html_assets.cpp from html_assets.cpp.in).
//
// report.js draws the page from its embedded JSON; the optional views (view_*.js) go where it
// says "/* views */" and only on the pages that need them, adding functions to its hooks
// (HOOKS.timeline, HOOKS.memory, HOOKS.legend) and setting its layout variables (GAP,
// MEMORY_LINES). No asset holds a URL.

namespace bubblesim {

const char* html_asset_report_js();
const char* html_asset_report_css();
/// MoE phase lanes under each device and the experts' memory band (html_moe_phases.h).
const char* html_asset_view_moe_phases_js();
/// The exposed gradient sync and optimizer step after each device's last op
/// (html_iteration_tail.h).
const char* html_asset_view_iteration_tail_js();
/// The communication lane under each device (html_comm_lanes.h).
const char* html_asset_view_comm_lanes_js();

}  // namespace bubblesim

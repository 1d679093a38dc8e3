#pragma once
// Where a command's output goes: stdout, or a file written atomically (-o FILE) and named on
// stderr; and how wide text may be.

#include <cstddef>
#include <string>
#include <vector>

namespace bubblesim {

/// Writes `content` to stdout when `output` is "" or "-", else atomically to the file `output`,
/// then says so (say_written) unless `quiet`.
void emit(const std::string& output, const std::string& content, bool quiet = true,
          const std::string& what = "");

/// Refuses, before anything runs, every output that cannot be written: onto an input of the run
/// (call it after loading the inputs), a device or folder, a missing folder (check_output_path).
/// Two of them onto the same file are refused too. "" and "-" (stdout) are accepted.
void check_outputs(const std::vector<std::string>& outputs);

/// Says on stderr that a command wrote `path` ("wrote out/report.html (HTML report)"), unless
/// `quiet`. Every command that writes files calls it once per file.
void say_written(bool quiet, const std::string& path, const std::string& what);

/// Characters per line for text: the COLUMNS environment variable (a terminal's width, 20 to
/// 10000), else 100.
std::size_t text_width();

}  // namespace bubblesim

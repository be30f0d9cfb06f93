// Case files: one JSON object holding everything needed to re-run a check exactly (the Case:
// problem, distribution, seed, implementation, forward/backward; the CheckOptions that decide the
// verdict; a free-text note). Property tests and fuzz campaigns save a failing case as one, and
// `flashproof replay FILE` re-runs it; `flashproof check --save-case FILE` writes one by hand.
// The format, field by field, with an example: docs/case-files.md.
//
// The fields are written and read by the record layer (harness/records.h). Round trip:
// case_from_json(case_to_json(c, o, n)) gives back c, every saved field of o and n exactly
// (doubles are written with 17 significant digits, the seed as a decimal string, the distribution
// as distribution_name writes it), so re-serialising a read file of this version gives the same
// bytes. Not saved: reference::Options::threads (results do not depend on it) and
// reference::Options::mutation (tests of the reference only).
#pragma once

#include <string>
#include <string_view>

#include "core/json.h"
#include "harness/check.h"
#include "harness/records.h"  // CaseFile, the format's version

namespace flashproof {

// The case file as a JSON value (a fuzz record embeds it: json::unbroken(json::indented())).
// Throws std::invalid_argument when a value cannot be written (a non-finite check option).
json::Value case_json(const Case& c, const CheckOptions& options = {}, const std::string& note = {},
                      const std::string& property = {});
// The case file's text: case_json written json::indented(), ending with a newline.
std::string case_to_json(const Case& c, const CheckOptions& options = {},
                         const std::string& note = {}, const std::string& property = {});

// Parses a case file's text. Errors throw std::invalid_argument with one line
// "case file SOURCE: PROBLEM", e.g. `case file x.json: missing field "seqlen_q"`,
// `...: not a flashproof case file (no "format": "flashproof-case")`, `...: invalid JSON at
// line 3, column 7: ...`, `...: heads_q (6) must be a multiple of heads_kv (4)` (Problem's own
// validation), `...: unknown distribution "cauchy" ...`. An implementation this build does not
// have is not an error here: run_check reports it.
CaseFile case_from_json(std::string_view text, const std::string& source);

// case_to_json into a file; throws std::invalid_argument ("cannot write case file PATH: ...").
void write_case_file(const std::string& path, const Case& c, const CheckOptions& options = {},
                     const std::string& note = {}, const std::string& property = {});

// case_from_json of a file's contents, SOURCE being the path; a file that cannot be read (missing,
// a directory, not a regular file, over 1 MiB) is an error of the same form.
CaseFile read_case_file(const std::string& path);

}  // namespace flashproof

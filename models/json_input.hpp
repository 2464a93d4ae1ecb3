// ddlsim: turning untrusted JSON text into a json value, with limits.
//
// Every JSON input (scenario, profile, link and training traces, calibration
// snippets, cost tables, gain models, --set values and JSON options) is parsed
// here, by a SAX handler that builds the document while refusing what
// nlohmann::json would accept silently or fail on badly:
//   - a file larger than MAX_INPUT_BYTES (256 MiB);
//   - nesting deeper than MAX_JSON_DEPTH (64) objects and arrays (the
//     recursive copies and readers downstream would overflow the stack);
//   - a duplicate key in an object (nlohmann keeps the last one);
//   - a number beyond a double's range (1e999, a 400-digit integer).
// Each refusal is a ConfigError at the JSON path of the offending value.
// docs/reliability.md ("Ranges") lists the limits.
#pragma once

#include "models/error.hpp"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ddlsim {

using json = nlohmann::json;

inline constexpr std::size_t MAX_JSON_DEPTH = 64;
inline constexpr std::size_t MAX_INPUT_BYTES = std::size_t{256} << 20;

/// Parses `text`. A syntax error is thrown as nlohmann's json::parse_error (its byte offset
/// locates it); depth, duplicate keys and number overflow are ConfigErrors at `base_path` plus
/// the path inside the text ("/platform/workers"; "/" for the root of an empty base).
json parse_json_text(std::string_view text, const std::string& base_path = "");

/// Parses a JSON option value typed on the command line (`option` is e.g. "--params"):
/// every error is a ConfigError at `option`, "malformed JSON: ..." for syntax.
json parse_json_option(std::string_view text, const std::string& option);

/// Reads a JSON file. Errors are ConfigErrors: with an empty path and the file's name in the
/// message (`cannot open <what> file "<file>"`, `<file>: malformed JSON at line L, column C: <reason>`,
/// `<file>: larger than 256 MiB ...`), or at the path inside the file (depth, duplicate key, overflow).
json read_json_file(const std::string& file, const std::string& what);
/// read_json_file's parsing of a file's text (`file` names it in messages; the fuzz targets feed it).
json parse_json_document(std::string_view text, const std::string& file);

}  // namespace ddlsim

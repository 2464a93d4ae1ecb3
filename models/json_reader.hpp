// ddlsim: reading one JSON object with JSON-pointer error messages.
//
// ObjectReader wraps one JSON object and its path ("/platform/link"). Each
// accessor records the key it was asked for, so finish() can reject any key
// the schema never asked about ("unknown key "lnk"; valid keys are: ...").
// Every error is a ConfigError naming the full JSON path of the value.
#pragma once

#include "models/error.hpp"
#include "models/json_input.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ddlsim {

/// A value as a message shows it: its JSON text, a string's content cut by excerpt() inside the
/// quotes ("xxx... (10000000 bytes)"), anything else cut as a whole.
std::string value_text(const json& value);
/// Human-readable JSON type name used in messages ("a string", "a number"...).
std::string json_type_name(const json& value);
/// Joins names as "a, b, c".
std::string join_names(const std::vector<std::string>& names);
/// Escapes one key for a JSON pointer ("~" -> "~0", "/" -> "~1").
std::string pointer_append(const std::string& path, const std::string& key);

/// Reads a JSON file that a scenario names at `ref_path` and validates it with `read(doc)`: every
/// error is a ConfigError at `ref_path`: `cannot open <what> file "FILE"` (and the other errors
/// about the file as a whole, read_json_file's), or the path inside the file in the message,
/// `in <what><suffix> "FILE": /key: ...`.
template <class Read>
auto load_referenced(const std::string& file, const std::string& what, const std::string& ref_path, Read read,
                     const std::string& suffix = "") {
  try {
    return read(read_json_file(file, what));
  } catch (const ConfigError& e) {
    if (e.path().empty()) throw ConfigError(ref_path, e.what());
    throw ConfigError(ref_path, "in " + what + suffix + " \"" + file + "\": " + e.what());
  }
}

class ObjectReader {
 public:
  /// Throws ConfigError(path, "expected an object, got ...") if `value` is not an object: null
  /// included (a section left out is fine, object() then reads an empty one; null is refused).
  ObjectReader(const json& value, std::string path);

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string path_of(const std::string& key) const { return pointer_append(path_, key); }
  [[nodiscard]] const json& raw() const { return *value_; }

  /// Marks `key` as known and returns its value, or nullptr if absent.
  const json* find(const std::string& key);
  /// Like find() but absence is an error ("missing required key"), naming a key of the object
  /// not asked about so far that is within two edits of `key` (a misspelling) if there is one.
  const json& require(const std::string& key);
  bool has(const std::string& key);

  std::string string(const std::string& key, const std::string& fallback);
  std::string required_string(const std::string& key);
  /// A string that must be one of `choices`.
  std::string choice(const std::string& key, const std::vector<std::string>& choices, const std::string& fallback);
  bool boolean(const std::string& key, bool fallback);
  /// Any finite number in [min, max].
  double number(const std::string& key, double fallback, double min, double max);
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t min, std::int64_t max);
  std::int64_t required_integer(const std::string& key, std::int64_t min, std::int64_t max);

  /// Unit-bearing values (see models/units.hpp), each checked against its range there
  /// (docs/reliability.md, "Ranges"); `fallback` is used when absent.
  double bandwidth_Bps(const std::string& key, double fallback);  // [1 bps, 1000 TBps]
  double time_s(const std::string& key, double fallback);         // 0 or [1 fs, 1e6 s]: compute, periods, costs
  double latency_s(const std::string& key, double fallback);      // 0 or [1 fs, 1 s]: a link's or a message's delay
  double bytes(const std::string& key, double fallback);          // [0, 1e15 B]

  /// A nested object (absent -> empty object at that path).
  ObjectReader object(const std::string& key);

  /// Rejects keys never asked about. Call after reading every key.
  void finish() const;

  /// For a message about `key` missing: "; found the unknown key "bandwdith" (misspelt?)" when the
  /// object has a key not asked about so far within two edits of `key`, else "".
  [[nodiscard]] std::string misspelling_hint(const std::string& key) const;

 private:
  const json* value_;
  std::string path_;
  std::set<std::string> known_;
};

/// Checks a value stand-alone (used for array elements and the like).
double checked_number(const json& value, const std::string& path, double min, double max);
std::int64_t checked_integer(const json& value, const std::string& path, std::int64_t min, std::int64_t max);

}  // namespace ddlsim

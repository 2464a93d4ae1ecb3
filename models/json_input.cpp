#include "models/json_input.hpp"

#include "models/json_reader.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <vector>

namespace ddlsim {
namespace {

/// nlohmann's SAX interface, building the document like its own DOM parser, plus the checks
/// (depth, duplicate keys, number overflow) that need the path of the value being read.
class CheckedBuilder {
 public:
  CheckedBuilder(json& root, std::string base) : root_(root), base_(std::move(base)) {}

  bool null() { return put(nullptr); }
  bool boolean(bool v) { return put(v); }
  bool number_integer(json::number_integer_t v) { return put(v); }
  bool number_unsigned(json::number_unsigned_t v) { return put(v); }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) { return put(v); }
  bool string(json::string_t& v) { return put(std::move(v)); }
  bool binary(json::binary_t& v) { return put(json::binary(std::move(v))); }

  bool start_object(std::size_t /*elements*/) { return open(json::object()); }
  bool start_array(std::size_t /*elements*/) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& k) {
    Frame& top = frames_.back();
    if (top.node->contains(k))
      throw ConfigError(pointer_append(path_of_pending(false), k),
                        fmt::format("duplicate key \"{}\"; a key may appear only once in an object", excerpt(k)));
    top.key = std::move(k);
    return true;
  }

  bool parse_error(std::size_t /*position*/, const std::string& token, const nlohmann::detail::exception& ex) {
    if (const auto* syntax = dynamic_cast<const json::parse_error*>(&ex)) throw *syntax;
    throw ConfigError(shown(path_of_pending(true)),
                      fmt::format("number out of range: {} does not fit in a double (magnitude at most 1.8e308)",
                                  excerpt(token)));
  }

 private:
  struct Frame {
    json* node;
    std::string key;  // objects: the key whose value is being read
  };

  static std::string shown(const std::string& path) { return path.empty() ? "/" : path; }

  /// The path of the value being read; `pending`: an array's next element (else its last one).
  [[nodiscard]] std::string path_of_pending(bool pending) const {
    std::string path = base_;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      if (f.node->is_object()) {
        if (i + 1 < frames_.size() || pending) path = pointer_append(path, f.key);
      } else {
        const std::size_t size = f.node->size();
        const bool last = i + 1 == frames_.size();
        path += '/';
        path += std::to_string(last && pending ? size : size - 1);
      }
    }
    return path;
  }

  /// Stores `value` where the parser is and returns it.
  json* insert(json&& value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Frame& top = frames_.back();
    if (top.node->is_array()) {
      top.node->push_back(std::move(value));
      return &top.node->back();
    }
    json& slot = (*top.node)[top.key];
    slot = std::move(value);
    return &slot;
  }

  bool put(json&& value) {
    insert(std::move(value));
    return true;
  }

  bool open(json&& container) {
    if (frames_.size() >= MAX_JSON_DEPTH)
      throw ConfigError(shown(path_of_pending(true)),
                        fmt::format("nested deeper than {} levels of objects and arrays, the limit on a JSON input",
                                    MAX_JSON_DEPTH));
    frames_.push_back(Frame{insert(std::move(container)), {}});
    return true;
  }

  bool close() {
    frames_.pop_back();
    return true;
  }

  json& root_;
  std::string base_;
  std::vector<Frame> frames_;
};

/// nlohmann's message with the token it quotes ("last read: '...'") cut to a bounded length.
std::string shortened(const std::string& what) {
  static const std::string LAST_READ = "last read: '";
  const auto start = what.find(LAST_READ);
  if (start == std::string::npos) return what;
  const auto from = start + LAST_READ.size();
  const auto end = what.rfind('\'');
  if (end == std::string::npos || end < from) return what;
  return what.substr(0, from) + excerpt(std::string_view(what).substr(from, end - from)) + what.substr(end);
}

}  // namespace

json parse_json_text(std::string_view text, const std::string& base_path) {
  json root;
  CheckedBuilder builder(root, base_path);
  json::sax_parse(text.begin(), text.end(), &builder);
  return root;
}

json parse_json_option(std::string_view text, const std::string& option) {
  try {
    return parse_json_text(text);
  } catch (const json::parse_error& e) {
    throw ConfigError(option, fmt::format("malformed JSON: {}", shortened(e.what())));
  } catch (const ConfigError& e) {
    throw ConfigError(option, e.what());
  }
}

json read_json_file(const std::string& file, const std::string& what) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError("", fmt::format("cannot open {} file \"{}\"", what, file));
  const auto too_large = [&file] {
    return ConfigError("", fmt::format("{}: larger than {} MiB, the limit on a JSON input", file, MAX_INPUT_BYTES >> 20));
  };
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) throw ConfigError("", fmt::format("{} file \"{}\" is a directory", what, file));
  if (std::filesystem::is_regular_file(file, ec) && std::filesystem::file_size(file, ec) > MAX_INPUT_BYTES)
    throw too_large();  // before reading it; the loop below bounds what a pipe or device gives
  std::string text;
  std::vector<char> chunk(std::size_t{1} << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > MAX_INPUT_BYTES) throw too_large();
  }
  if (in.bad()) throw ConfigError("", fmt::format("cannot read {} file \"{}\"", what, file));
  return parse_json_document(text, file);
}

json parse_json_document(std::string_view text, const std::string& file) {
  try {
    return parse_json_text(text);
  } catch (const json::parse_error& e) {
    // Line and column from the byte offset nlohmann reports (1-based; the offset is one past the error).
    std::size_t line = 1, column = 0;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 0;
      } else {
        ++column;
      }
    }
    ++column;
    std::string reason = shortened(e.what());
    if (auto pos = reason.find(": "); pos != std::string::npos && reason.rfind("[json.exception", 0) == 0)
      reason = reason.substr(pos + 2);
    throw ConfigError("", fmt::format("{}: malformed JSON at line {}, column {}: {}", file, line, column, reason));
  }
}

}  // namespace ddlsim

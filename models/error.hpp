// ddlsim: the one exception type for bad user input.
//
// Every configuration problem is reported as a ConfigError carrying the JSON
// pointer of the offending value (e.g. "/platform/link/bandwidth") and a
// message that says what was found and what was expected. what() is
// "<path>: <message>"; the CLI prints it after "ddlsim: error: " and exits 2.
//
// A message is one line of bounded length whatever the input: values echoed
// back go through excerpt() (MAX_ECHO_CHARS, then "... (N bytes)"), and the constructor escapes any
// control character and cuts the path and the message (MAX_PATH_CHARS,
// MAX_MESSAGE_CHARS) as a last resort.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ddlsim {

/// The most characters of a user's value a message repeats (docs/reliability.md).
inline constexpr std::size_t MAX_ECHO_CHARS = 60;
inline constexpr std::size_t MAX_PATH_CHARS = 200;
inline constexpr std::size_t MAX_MESSAGE_CHARS = 2000;

/// `text` fit for a one-line message: control characters escaped ("\n", "\x01"...), and cut after
/// `max` characters with "... (N bytes)" appended, N the whole text's size (never inside a UTF-8
/// sequence).
inline std::string excerpt(std::string_view text, std::size_t max = MAX_ECHO_CHARS) {
  static constexpr char HEX[] = "0123456789abcdef";
  std::string out;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool continuation = (c & 0xC0) == 0x80;
    if (!continuation && shown == max) {
      out += "... (";
      out += std::to_string(text.size());
      out += " bytes)";
      return out;
    }
    if (!continuation) ++shown;
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7F) out += std::string("\\x") + HEX[c >> 4] + HEX[c & 0xF];
    else out += static_cast<char>(c);
  }
  return out;
}

class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string path, const std::string& message)
      : std::runtime_error(compose(excerpt(path, MAX_PATH_CHARS), message)), path_(excerpt(path, MAX_PATH_CHARS)) {}

  /// The path as shown (cut like the message).
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  static std::string compose(const std::string& path, const std::string& message) {
    const std::string text = excerpt(message, MAX_MESSAGE_CHARS);
    return path.empty() ? text : path + ": " + text;
  }

  std::string path_;
};

}  // namespace ddlsim

// Test helper: JSON texts built in the test (nesting no file would hold).
#pragma once

#include <cstddef>
#include <string>

namespace ddlsim::test {

/// `depth` times `open`, the value 1, `depth` times `close`: nested("[", "]") gives [[[1]]].
inline std::string nested(std::size_t depth, const std::string& open, const std::string& close) {
  std::string text;
  for (std::size_t i = 0; i < depth; ++i) text += open;
  text += "1";
  for (std::size_t i = 0; i < depth; ++i) text += close;
  return text;
}

}  // namespace ddlsim::test

// ddlsim: the one exception type for bad user input.
//
// Every configuration problem is reported as a ConfigError carrying the JSON
// pointer of the offending value (e.g. "/platform/link/bandwidth") and a
// message that says what was found and what was expected. what() is
// "<path>: <message>"; the CLI prints it after "ddlsim: error: " and exits 2.
#pragma once

#include <stdexcept>
#include <string>

namespace ddlsim {

class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string path, const std::string& message)
      : std::runtime_error(path.empty() ? message : path + ": " + message), path_(std::move(path)) {}

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace ddlsim

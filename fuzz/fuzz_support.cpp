#include "fuzz/fuzz_support.hpp"

namespace ddlsim::fuzz {

std::string scenarios_dir() {
  if (const char* dir = std::getenv("DDLSIM_FUZZ_SCENARIOS"); dir != nullptr && *dir != '\0') return dir;
  return DDLSIM_SOURCE_DIR "/scenarios";
}

}  // namespace ddlsim::fuzz

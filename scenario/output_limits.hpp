// ddlsim: how long an output directory's name and path may be (checked when a scenario is
// loaded, scenario/scenario.cpp, and when `ddlsim run` opens it, analysis/output_dir.hpp).
#pragma once

#include <cstddef>

namespace ddlsim::sim {

/// The longest final name of an output directory: a file system's 255 bytes, less room for the
/// staging folder beside it (".NAME.ddlsim-PID"). Every other component may have 255 bytes, and
/// the whole path MAX_DIR_PATH_BYTES (the kernel's 4,096, less the staging folder and a file name).
inline constexpr std::size_t MAX_DIR_NAME_BYTES = 230;
inline constexpr std::size_t MAX_DIR_PATH_BYTES = 4000;

}  // namespace ddlsim::sim

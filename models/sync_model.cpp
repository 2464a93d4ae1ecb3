#include "models/sync_model.hpp"

namespace ddlsim::models {

std::string to_string(Phase phase) {
  switch (phase) {
    case Phase::IO: return "io";
    case Phase::FORWARD: return "forward";
    case Phase::BACKWARD: return "backward";
    case Phase::OPTIMIZER: return "optimizer";
  }
  return "?";
}

}  // namespace ddlsim::models

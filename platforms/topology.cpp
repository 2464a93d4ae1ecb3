#include "platforms/topology.hpp"

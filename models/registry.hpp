// ddlsim: Registry<Interface>, a name -> (description, factory) table.
//
// SimGrid's ModuleGroup in miniature. Each plugin file registers itself with
// one DDLSIM_REGISTER line; the table lives in a function-local static so
// registration order across translation units does not matter. create() reads
// the plugin's "params" object through an ObjectReader (unknown parameter keys
// are errors) and an unknown name fails listing every valid name.
//
// Plugins are linked as OBJECT libraries: from a static archive the linker
// would drop files whose only content is a self-registration.
#pragma once

#include "models/json_reader.hpp"

#include <fmt/format.h>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ddlsim {

template <class Interface>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Interface>(ObjectReader& params)>;
  struct Entry {
    std::string name;
    std::string description;
    Factory factory;
  };

  static Registry& instance() {
    static Registry registry;
    return registry;
  }

  /// Registers a plugin; returns true so it can initialise a static.
  bool add(std::string name, std::string description, Factory factory) {
    std::string key = name;
    entries_[key] = Entry{std::move(name), std::move(description), std::move(factory)};
    return true;
  }

  [[nodiscard]] bool contains(const std::string& name) const { return entries_.count(name) != 0; }

  /// Names in alphabetical order.
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, entry] : entries_) out.push_back(name);
    return out;
  }

  [[nodiscard]] std::vector<const Entry*> entries() const {
    std::vector<const Entry*> out;
    for (const auto& [name, entry] : entries_) out.push_back(&entry);
    return out;
  }

  /// Throws ConfigError(name_path, "unknown <kind> "x"; valid names are: ...").
  void check_name(const std::string& name, const std::string& name_path, const std::string& kind) const {
    if (!contains(name))
      throw ConfigError(name_path, fmt::format("unknown {} \"{}\"; valid names are: {}", kind, excerpt(name), join_names(names())));
  }

  /// Builds the plugin `name` from `params` (absent params = empty object).
  std::unique_ptr<Interface> create(const std::string& name, const json& params, const std::string& name_path,
                                    const std::string& params_path, const std::string& kind) const {
    check_name(name, name_path, kind);
    ObjectReader reader(params, params_path);
    auto made = entries_.at(name).factory(reader);
    reader.finish();
    return made;
  }

 private:
  std::map<std::string, Entry> entries_;
};

}  // namespace ddlsim

#define DDLSIM_CONCAT_INNER(a, b) a##b
#define DDLSIM_CONCAT(a, b) DDLSIM_CONCAT_INNER(a, b)
/// DDLSIM_REGISTER(Interface, "name", "one-line description", factory). The factory is
/// variadic so that a lambda with top-level commas needs no extra parentheses.
#define DDLSIM_REGISTER(INTERFACE, NAME, DESCRIPTION, ...)                                      \
  namespace {                                                                                   \
  [[maybe_unused]] const bool DDLSIM_CONCAT(ddlsim_registered_, __COUNTER__) =                     \
      ::ddlsim::Registry<INTERFACE>::instance().add(NAME, DESCRIPTION, __VA_ARGS__);            \
  }

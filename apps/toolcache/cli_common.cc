// Pieces every server-like command shares: logging set-up and --listen.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

#include "apps/toolcache/commands.h"
#include "toolcache/config.h"
#include "toolcache/store.h"

namespace toolcache::cli {

void SetUpLogging(std::string_view prefix, const std::string& flag_level,
                  const char* default_level) {
  auto logger = std::make_shared<spdlog::logger>(
      "toolcache", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern(std::string(prefix) + ": [%l] %v");
  std::string level = flag_level;
  if (level.empty()) {
    const char* env = std::getenv("TOOLCACHE_LOG");
    level = env != nullptr ? env : default_level;
  }
  logger->set_level(spdlog::level::from_str(level));
  spdlog::set_default_logger(logger);
}

bool ResolveAdminToken(std::string_view flag_env,
                       const std::optional<std::string>& config_env,
                       std::string_view config_where, std::string* token,
                       std::string* error) {
  std::string name = "TOOLCACHE_ADMIN_TOKEN";
  std::string where;
  if (!flag_env.empty()) {
    name = std::string(flag_env);
    where = "--admin-token-env";
  } else if (config_env) {
    name = *config_env;
    where = std::string(config_where) + ": adminTokenEnv";
  }
  const char* v = std::getenv(name.c_str());
  if (v == nullptr || *v == '\0') {
    token->clear();
    if (where.empty()) return true;
    *error = where + ": environment variable " + name + " is unset or empty";
    return false;
  }
  *token = v;
  return true;
}

bool IsLoopbackHost(std::string_view host) {
  return host.starts_with("127.") || host == "::1" || host == "[::1]" ||
         host == "localhost";
}

bool ParseListenAddress(std::string_view s, std::string* host, uint16_t* port) {
  std::string_view p = s;
  *host = "127.0.0.1";
  const size_t colon = s.rfind(':');
  if (colon != std::string_view::npos) {
    std::string_view h = s.substr(0, colon);
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
      h = h.substr(1, h.size() - 2);
    }
    if (!h.empty()) *host = std::string(h);
    p = s.substr(colon + 1);
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (ec != std::errc() || end != p.data() + p.size() || value > 65535) {
    return false;
  }
  *port = static_cast<uint16_t>(value);
  return true;
}

int ExitCodeOf(std::string_view command, const Result<int>& code) {
  if (code.ok()) return *code;
  std::cerr << command << ": " << code.status().message() << "\n";
  return code.status().code() == StatusCode::kInvalidArgument ? kExitUsage
                                                              : kExitFailure;
}

}  // namespace toolcache::cli

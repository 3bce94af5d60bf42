// Invariants:
// - Check looks at headers only (Host, Origin, Sec-Fetch-Site,
//   Content-Type); it never reads the body, so a refused request costs
//   nothing and records nothing.
// - The order is Host, Origin, Sec-Fetch-Site, Content-Type: the first
//   failing rule is the answer.
// Choice: an IP-literal Host is always allowed: DNS rebinding needs a name
// the attacker controls, and a face listening on 0.0.0.0 stays reachable
// by address without configuration.
// Choice: a request without Origin or Sec-Fetch-Site passes those checks:
// browsers send Origin on every POST and Sec-Fetch-Site on every request
// (since 2020-2023), so their absence means a non-browser client.
#include "src/http/browser_guard.h"

#include <arpa/inet.h>

#include <cctype>

namespace toolcache::http {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// "host:port" / "[v6]:port" / "host" -> the host part ("[v6]" keeps its
// brackets).
std::string_view HostName(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  const size_t colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

bool IsIpLiteral(std::string_view name) {
  unsigned char buf[16];
  if (name.size() > 2 && name.front() == '[' && name.back() == ']') {
    const std::string inner(name.substr(1, name.size() - 2));
    return inet_pton(AF_INET6, inner.c_str(), buf) == 1;
  }
  const std::string v4(name);
  return inet_pton(AF_INET, v4.c_str(), buf) == 1;
}

bool IsLocalhostName(std::string_view name) {
  constexpr std::string_view kLocal = "localhost";
  constexpr std::string_view kSub = ".localhost";
  return name == kLocal || (name.size() > kSub.size() &&
                            name.substr(name.size() - kSub.size()) == kSub);
}

}  // namespace

std::string_view GuardDecision::code() const {
  switch (verdict) {
    case GuardVerdict::kAllowed:
      return "allowed";
    case GuardVerdict::kForbiddenHost:
      return "forbidden_host";
    case GuardVerdict::kForbiddenOrigin:
      return "forbidden_origin";
    case GuardVerdict::kCrossSite:
      return "cross_site";
    case GuardVerdict::kNotJson:
      return "unsupported_media_type";
  }
  return "forbidden";
}

BrowserGuard::BrowserGuard(BrowserGuardOptions options)
    : options_(std::move(options)) {
  for (std::string& h : options_.allowed_hosts) h = Lower(h);
}

bool BrowserGuard::HostAllowed(std::string_view host) const {
  // HTTP/1.0 clients may omit Host; browsers always send it.
  if (host.empty()) return true;
  const std::string name = Lower(HostName(host));
  if (name.empty()) return false;
  if (IsIpLiteral(name) || IsLocalhostName(name)) return true;
  const std::string listen = Lower(options_.listen_host);
  if (!listen.empty() && name == listen) return true;
  for (const std::string& h : options_.allowed_hosts) {
    if (h == "*" || h == name) return true;
  }
  return false;
}

bool BrowserGuard::OriginAllowed(std::string_view origin) const {
  if (origin.empty()) return true;
  if (options_.allowed_origins.empty()) {
    for (std::string_view p :
         {"http://127.0.0.1", "http://localhost", "http://[::1]"}) {
      if (origin.substr(0, p.size()) == p &&
          (origin.size() == p.size() || origin[p.size()] == ':')) {
        return true;
      }
    }
    return false;
  }
  // `Origin: null` (sandboxed frames, file: pages) matches only a literal
  // "null" in the list, never "*".
  for (const std::string& o : options_.allowed_origins) {
    if (o == origin || (o == "*" && origin != "null")) return true;
  }
  return false;
}

GuardDecision BrowserGuard::Check(const Request& request, bool records) const {
  GuardDecision d;
  const std::string& block = options_.config_block;
  if (!HostAllowed(request.Header("host"))) {
    d.verdict = GuardVerdict::kForbiddenHost;
    d.status = 403;
    d.message =
        "Forbidden: this server answers requests for its loopback address, "
        "its listen address or " +
        block + ".allowedHosts only (DNS rebinding)";
    return d;
  }
  const std::string_view origin = request.Header("origin");
  if (!OriginAllowed(origin)) {
    d.verdict = GuardVerdict::kForbiddenOrigin;
    d.status = 403;
    d.message = "Forbidden: Origin not allowed (" + block + ".allowedOrigins)";
    return d;
  }
  if (EqualsIgnoreCase(request.Header("sec-fetch-site"), "cross-site")) {
    bool listed = false;
    for (const std::string& o : options_.allowed_origins) {
      if (o == "*" || (!origin.empty() && o == origin)) listed = true;
    }
    if (!listed) {
      d.verdict = GuardVerdict::kCrossSite;
      d.status = 403;
      d.message = "Forbidden: cross-site browser request (Sec-Fetch-Site; " +
                  block + ".allowedOrigins)";
      return d;
    }
  }
  if (records && !IsJsonContentType(request.Header("content-type"))) {
    d.verdict = GuardVerdict::kNotJson;
    d.status = 415;
    d.message =
        "Unsupported Media Type: this request needs Content-Type: "
        "application/json";
    return d;
  }
  return d;
}

bool IsJsonContentType(std::string_view content_type) {
  std::string_view type = content_type.substr(0, content_type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) {
    type.remove_suffix(1);
  }
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) {
    type.remove_prefix(1);
  }
  const std::string t = Lower(type);
  constexpr std::string_view kJson = "application/json";
  constexpr std::string_view kSuffix = "+json";
  if (t == kJson) return true;
  return t.size() > kSuffix.size() && t.substr(0, 12) == "application/" &&
         t.substr(t.size() - kSuffix.size()) == kSuffix;
}

}  // namespace toolcache::http

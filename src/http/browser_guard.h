// The browser-origin defence shared by every HTTP face (the LLM proxy, the
// cache API of `toolcache serve` and its `/mcp/<name>` endpoints). These
// servers listen on loopback and often answer without a credential (a local
// model server needs no key; `serve` without tenants has none), so the one
// principal they must keep out is a web page in the user's browser:
//
//   - DNS rebinding: the page's own name resolves to 127.0.0.1, so its
//     requests arrive with `Host: rebind.attacker.example`. Only hosts in
//     the allow-list are answered: IP literals (a rebinding needs a name),
//     `localhost` and `*.localhost` (browsers resolve them to loopback
//     themselves), the listen address, and the configured `allowedHosts`
//     ("*" = any).
//   - Cross-site requests: an `Origin` that is not allowed (default: the
//     loopback origins http://127.0.0.1|localhost|[::1][:port]; else the
//     configured `allowedOrigins`, "*" = any), `Origin: null`, or
//     `Sec-Fetch-Site: cross-site` (unless that Origin is configured) ->
//     403.
//   - "Simple" cross-site POSTs: a form or `fetch(..., {mode: 'no-cors'})`
//     can send `text/plain` without a CORS preflight. A POST that can record
//     or be served must say `Content-Type: application/json` (or
//     `+json`), which a page can only send after a preflight these servers
//     never grant -> 415 otherwise.
// A request that passes is not authenticated by this; it only proves it
// did not come from a page in a browser (a local process can send any
// header, and is trusted as the user is).
//
// Thread-safety: immutable after construction; Check is const and may be
// called from any thread.
//
// Example:
//   BrowserGuard guard({.listen_host = "127.0.0.1", .config_block = "proxy"});
//   GuardDecision d = guard.Check(request, /*records=*/true);
//   if (!d.allowed()) answer(d.status, d.message);  // in the face's shape
#ifndef TOOLCACHE_SRC_HTTP_BROWSER_GUARD_H_
#define TOOLCACHE_SRC_HTTP_BROWSER_GUARD_H_

#include <string>
#include <string_view>
#include <vector>

#include "src/http/http.h"

namespace toolcache::http {

struct BrowserGuardOptions {
  // The address the face listens on ("127.0.0.1", "0.0.0.0", a name); a
  // name (not a wildcard) is an allowed Host.
  std::string listen_host;
  // More Host names to answer (without port; "*" = any): a face behind a
  // name (a reverse proxy, /etc/hosts). Default: none.
  std::vector<std::string> allowed_hosts;
  // Browser Origins allowed ("*" = any). Empty: the loopback origins.
  std::vector<std::string> allowed_origins;
  // The configuration block named in messages ("proxy", "serve").
  std::string config_block;
};

enum class GuardVerdict {
  kAllowed,
  kForbiddenHost,    // 403: Host not in the allow-list (DNS rebinding)
  kForbiddenOrigin,  // 403: Origin not allowed, or "null"
  kCrossSite,        // 403: Sec-Fetch-Site: cross-site
  kNotJson,          // 415: a recording POST without a JSON Content-Type
};

struct GuardDecision {
  GuardVerdict verdict = GuardVerdict::kAllowed;
  int status = 200;
  std::string message;  // names the configuration key that would allow it
  bool allowed() const { return verdict == GuardVerdict::kAllowed; }
  // "forbidden_host", "forbidden_origin", "cross_site",
  // "unsupported_media_type" (for error codes and metrics labels).
  std::string_view code() const;
};

class BrowserGuard {
 public:
  explicit BrowserGuard(BrowserGuardOptions options);
  // `records`: the request can record a result or be served one (a POST to
  // an observed LLM route, the cache API, /mcp): it must carry a JSON
  // Content-Type.
  GuardDecision Check(const Request& request, bool records) const;

  bool HostAllowed(std::string_view host) const;
  bool OriginAllowed(std::string_view origin) const;

 private:
  BrowserGuardOptions options_;
};

// True for "application/json", "application/json; charset=utf-8",
// "application/vnd.x+json" (ASCII case-insensitive).
bool IsJsonContentType(std::string_view content_type);

}  // namespace toolcache::http

#endif  // TOOLCACHE_SRC_HTTP_BROWSER_GUARD_H_

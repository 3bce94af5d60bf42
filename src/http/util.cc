// Invariants: pure functions over their arguments; no Asio here, so the URL
// and header helpers stay cheap to compile and test.
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "src/http/http.h"

namespace toolcache::http {

namespace {

// Eight bytes with every ASCII capital letter made small (SWAR): a byte
// b < 0x80 is a capital when b + (0x80 - 'A') sets its top bit and
// b + (0x80 - 'Z' - 1) does not; neither sum carries into the next byte
// (each is at most 0xbe), and bytes >= 0x80 are left alone.
uint64_t FoldAscii8(uint64_t w) {
  constexpr uint64_t k01 = 0x0101010101010101ull;
  const uint64_t low7 = w & (0x7f * k01);
  const uint64_t at_least_a = low7 + (0x80 - 'A') * k01;
  const uint64_t beyond_z = low7 + (0x80 - 'Z' - 1) * k01;
  const uint64_t capital = at_least_a & ~beyond_z & ~w & (0x80 * k01);
  return w | (capital >> 2);  // 0x80 >> 2 == 0x20: 'A' -> 'a'
}

char FoldAscii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

// hopR: eight bytes per step (header names are 2-20 bytes; the byte loop
// was ~97 instructions per same-length compare, 3 % of a 2 KB proxied
// request, callgrind). Same answers:
// HttpUtil.EqualsIgnoreCaseMatchesTheByteLoop.
bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y && FoldAscii8(x) != FoldAscii8(y)) return false;
  }
  for (; i < n; ++i) {
    if (a[i] != b[i] && FoldAscii(a[i]) != FoldAscii(b[i])) return false;
  }
  return true;
}

std::string_view BearerToken(std::string_view authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() <= kBearer.size() ||
      !EqualsIgnoreCase(authorization.substr(0, kBearer.size()), kBearer)) {
    return {};
  }
  return authorization.substr(kBearer.size());
}

bool TokenEquals(std::string_view presented, std::string_view configured) {
  if (configured.empty()) return false;
  unsigned char diff = presented.size() == configured.size() ? 0 : 1;
  for (size_t i = 0; i < presented.size(); ++i) {
    diff |= static_cast<unsigned char>(presented[i] ^
                                       configured[i % configured.size()]);
  }
  return diff == 0;
}

std::string_view FindHeader(const Headers& headers, std::string_view name) {
  for (const Header& h : headers) {
    if (EqualsIgnoreCase(h.name, name)) return h.value;
  }
  return {};
}

std::string_view Request::Path() const {
  std::string_view t = target;
  return t.substr(0, t.find('?'));
}

std::string Url::HostHeader() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != (tls ? 443 : 80)) h += ":" + std::to_string(port);
  return h;
}

namespace {

// `text` as an error may show it: userinfo and anything after '?' or '#'
// can hold credentials (user:password@, ?key=...), so they become "***".
std::string RedactedUrl(std::string_view text) {
  std::string_view rest = text;
  std::string out;
  if (const size_t scheme = rest.find("://");
      scheme != std::string_view::npos) {
    out = std::string(rest.substr(0, scheme + 3));
    rest.remove_prefix(scheme + 3);
  }
  const size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    out += "***";
    rest.remove_prefix(at);
  }
  if (const size_t q = rest.find_first_of("?#"); q != std::string_view::npos) {
    out += std::string(rest.substr(0, q + 1)) + "***";
  } else {
    out += std::string(rest);
  }
  return out;
}

}  // namespace

Result<Url> ParseUrl(std::string_view raw) {
  const std::string text = RedactedUrl(raw);
  Url u;
  std::string_view rest = raw;
  if (rest.substr(0, 7) == "http://") {
    rest.remove_prefix(7);
  } else if (rest.substr(0, 8) == "https://") {
    u.tls = true;
    rest.remove_prefix(8);
  } else {
    return InvalidArgument("'" + std::string(text) +
                           "' is not an http:// or https:// URL");
  }
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return InvalidArgument("'" + std::string(text) +
                           "': an upstream URL takes no query or fragment");
  }
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path =
      slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) {
    return InvalidArgument("'" + std::string(text) +
                           "': credentials in the URL are not supported "
                           "(send them as headers)");
  }
  std::string_view host = authority, port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return InvalidArgument("'" + std::string(text) + "': unclosed '['");
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return InvalidArgument("'" + std::string(text) + "': bad authority");
      }
      port = after.substr(1);
    }
  } else if (const size_t colon = authority.rfind(':');
             colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) {
    return InvalidArgument("'" + std::string(text) + "' has no host");
  }
  u.host = std::string(host);
  u.port = u.tls ? 443 : 80;
  if (!port.empty()) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
    if (ec != std::errc() || p != port.data() + port.size() || v == 0 ||
        v > 65535) {
      return InvalidArgument("'" + std::string(text) + "': bad port '" +
                             std::string(port) + "'");
    }
    u.port = static_cast<uint16_t>(v);
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  u.path_prefix = std::string(path);
  return u;
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 426:
      return "Upgrade Required";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 529:
      return "Site Overloaded";
    default:
      return "";
  }
}

bool IsPrefixSafeTarget(std::string_view target, std::string* why) {
  auto no = [&](const char* reason) {
    if (why != nullptr) *why = reason;
    return false;
  };
  if (target.empty() || target.front() != '/') {
    return no("the request target must be origin-form (start with '/')");
  }
  const std::string_view path = target.substr(0, target.find('?'));
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view seg = path.substr(start, end - start);
    // The segment with %2e, %2f and %5c decoded (any case).
    std::string decoded;
    for (size_t i = 0; i < seg.size(); ++i) {
      if (seg[i] == '%' && i + 2 < seg.size()) {
        const char a = seg[i + 1];
        const char b = static_cast<char>(seg[i + 2] | 0x20);
        if (a == '2' && b == 'e') {
          decoded.push_back('.');
          i += 2;
          continue;
        }
        if ((a == '2' && b == 'f') || (a == '5' && b == 'c')) {
          return no("the path holds an encoded '/' or '\\'");
        }
      }
      if (seg[i] == '\\') return no("the path holds a '\\'");
      decoded.push_back(seg[i]);
    }
    if (decoded == "." || decoded == "..") {
      return no("the path holds a dot segment ('.' or '..', raw or encoded)");
    }
    start = end + 1;
  }
  return true;
}

// Choice: one switch on the name's length, then one case-insensitive
// compare against the one or two names of that length (callgrind: the loop
// over all eleven names was ~4,500 instructions of a 2 KB SSE request).
bool IsHopByHop(std::string_view name) {
  switch (name.size()) {
    case 2:
      return EqualsIgnoreCase(name, "te");
    case 4:
      return EqualsIgnoreCase(name, "host");
    case 7:
      return EqualsIgnoreCase(name, "trailer") ||
             EqualsIgnoreCase(name, "upgrade");
    case 10:
      return EqualsIgnoreCase(name, "connection") ||
             EqualsIgnoreCase(name, "keep-alive");
    case 14:
      return EqualsIgnoreCase(name, "content-length");
    case 16:
      return EqualsIgnoreCase(name, "proxy-connection");
    case 17:
      return EqualsIgnoreCase(name, "transfer-encoding");
    case 18:
      return EqualsIgnoreCase(name, "proxy-authenticate");
    case 19:
      return EqualsIgnoreCase(name, "proxy-authorization");
    default:
      return false;
  }
}

}  // namespace toolcache::http

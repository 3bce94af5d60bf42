// Invariants:
// - ScopeOf is injective over Principals: the composed form starts with '@'
//   and length-prefixes every value; the legacy form (only `base`) is
//   returned only when `base` does not start with '@'.
// - No credential byte reaches a scope: only CredentialDigest's truncated
//   HMAC does, and nothing here logs.
// - A digest is reused only for the exact bytes it was computed over (the
//   key and every credential name and value): a different credential on
//   the same thread or connection is a different principal.
// Choice: HMAC-SHA256 truncated to 128 bits (see include/toolcache/scope.h
//   for why keyed and why 128).
// Choice: the pieces are sorted by name before hashing, so the order in
//   which headers or variables were given does not split a principal.
#include "toolcache/scope.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "src/core/scope.h"
#include "src/core/sha256.h"

namespace toolcache {
namespace {

constexpr std::string_view kKeyPrefix = "toolcache/scope/v1";

void AppendField(std::string* out, char tag, std::string_view value) {
  if (value.empty()) return;
  out->push_back(tag);
  out->append(std::to_string(value.size()));
  out->push_back(':');
  out->append(value);
  out->push_back(';');
}

void AppendLengthPrefixed(std::string* out, std::string_view s) {
  const uint64_t n = s.size();
  for (int i = 7; i >= 0; --i) {
    out->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  }
  out->append(s);
}

std::string Upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return u;
}

// `s` equals `lower` (lowercase ASCII) ignoring the case of `s`.
bool EqualsLower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

bool StartsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(0, p.size()) == p;
}
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// HMAC-SHA256 (RFC 2104) keyed by "toolcache/scope/v1\0" + key, with the
// key's inner and outer pad blocks absorbed once per key (the midstates):
// a digest then hashes only the message and the inner digest, three
// compressions instead of five. Choice: over the shared Sha256, whose
// digest is fetched once -- OpenSSL 3's one-shot HMAC(EVP_sha256(), ...)
// looked the digest up and locked its provider store on every call, about
// 23,000 instructions per request in the LLM proxy (callgrind, 2 KB
// requests).
// Thread-safety: immutable after construction; Digest may run concurrently
// (it only reads the midstates it copies).
class Hmac {
 public:
  explicit Hmac(std::string_view key) {
    std::string k(kKeyPrefix);
    k.push_back('\0');
    k.append(key);
    constexpr size_t kBlock = 64;
    std::array<unsigned char, kBlock> block{};
    if (k.size() > kBlock) {
      const Sha256Digest kd = ComputeSha256(k);
      std::copy(kd.begin(), kd.end(), block.begin());
    } else {
      std::copy(k.begin(), k.end(), block.begin());
    }
    std::array<char, kBlock> pad{};
    for (size_t i = 0; i < kBlock; ++i)
      pad[i] = static_cast<char>(block[i] ^ 0x36);
    inner_.Update(std::string_view(pad.data(), pad.size()));
    for (size_t i = 0; i < kBlock; ++i)
      pad[i] = static_cast<char>(block[i] ^ 0x5c);
    outer_.Update(std::string_view(pad.data(), pad.size()));
    // Scrub the copies of the secret material (the midstates keep only
    // the hash state of the pads, as HMAC implementations do).
    std::fill(k.begin(), k.end(), '\0');
    block.fill(0);
    pad.fill(0);
  }
  Sha256Digest Digest(std::string_view message) const {
    Sha256 inner;
    inner.CopyFrom(inner_);
    inner.Update(message);
    const Sha256Digest inner_digest = inner.Finish();
    Sha256 outer;
    outer.CopyFrom(outer_);
    outer.Update(
        std::string_view(reinterpret_cast<const char*>(inner_digest.data()),
                         inner_digest.size()));
    return outer.Finish();
  }

 private:
  Sha256 inner_;  // after the inner pad block
  Sha256 outer_;  // after the outer pad block
};

// The Hmac of `key`, built once per distinct key. Choice: at most 16 keys
// are remembered (a process has one, TOOLCACHE_SCOPE_KEY; tests use a
// few); a seventeenth key is keyed afresh on every call.
std::shared_ptr<const Hmac> HmacFor(std::string_view key) {
  static std::mutex mu;
  static std::vector<std::pair<std::string, std::shared_ptr<const Hmac>>> keys;
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& [k, h] : keys) {
    if (k == key) return h;
  }
  auto h = std::make_shared<const Hmac>(key);
  if (keys.size() < 16) keys.emplace_back(std::string(key), h);
  return h;
}

// Equal bytes, in time that depends on the lengths only (the cached
// message holds a credential: an early exit would time a guess of it).
bool SameBytes(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

// The last digest this thread computed, with the exact bytes it was
// computed over (the deployment key and the length-prefixed message): a
// proxy loop sees the same credential request after request on a
// connection, and the HMAC plus its key lookup were ~10,000 instructions
// per 2 KB request (callgrind). Any other byte, key or credential, is a
// different entry: the digest is recomputed and replaces this one.
// Choice: one entry per thread (a loop serves one principal at a time in
// the common case; more would keep more credentials in memory). The
// replaced message is scrubbed.
struct LastDigest {
  std::string key;
  std::string message;
  std::string digest;
  ~LastDigest() { Scrub(); }
  void Scrub() {
    std::fill(key.begin(), key.end(), '\0');
    std::fill(message.begin(), message.end(), '\0');
  }
};

LastDigest& ThreadLastDigest() {
  thread_local LastDigest last;
  return last;
}

uint64_t& ThreadDigestsComputed() {
  thread_local uint64_t n = 0;
  return n;
}

}  // namespace

namespace internal {
uint64_t CredentialDigestsComputed() { return ThreadDigestsComputed(); }
}  // namespace internal

std::string ScopeOf(const Principal& p) {
  if (p.tenant.empty() && p.user.empty() && p.credential.empty() &&
      p.workspace.empty() && (p.base.empty() || p.base[0] != '@')) {
    return p.base;
  }
  std::string s = "@";
  AppendField(&s, 'b', p.base);
  AppendField(&s, 't', p.tenant);
  AppendField(&s, 'u', p.user);
  AppendField(&s, 'c', p.credential);
  AppendField(&s, 'w', p.workspace);
  return s;
}

std::string CredentialDigest(std::vector<Credential> parts,
                             std::string_view key) {
  if (parts.empty()) return "";
  std::sort(parts.begin(), parts.end(),
            [](const Credential& a, const Credential& b) {
              return a.name != b.name ? a.name < b.name : a.value < b.value;
            });
  std::string message;
  for (const Credential& c : parts) {
    AppendLengthPrefixed(&message, c.name);
    AppendLengthPrefixed(&message, c.value);
  }
  LastDigest& last = ThreadLastDigest();
  if (!last.digest.empty() && SameBytes(last.key, key) &&
      SameBytes(last.message, message)) {
    std::fill(message.begin(), message.end(), '\0');
    return last.digest;
  }
  ++ThreadDigestsComputed();
  const Sha256Digest md = HmacFor(key)->Digest(message);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < 16; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  // The previous entry's secret material is scrubbed before it is
  // replaced; this copy of it is kept (see LastDigest).
  last.Scrub();
  last.key.assign(key);
  last.message.swap(message);
  last.digest = out;
  std::fill(message.begin(), message.end(), '\0');
  return out;
}

std::string CredentialDigest(std::vector<Credential> parts) {
  static const std::string key = [] {
    const char* v = std::getenv("TOOLCACHE_SCOPE_KEY");
    return std::string(v == nullptr ? "" : v);
  }();
  return CredentialDigest(std::move(parts), key);
}

bool LooksLikeSecretName(std::string_view name) {
  const std::string u = Upper(name);
  // Login-scoped values that are no secret (sharing between one user's
  // terminals would otherwise break).
  static constexpr std::string_view kNotSecret[] = {
      "SSH_AUTH_SOCK",   "SESSION_MANAGER",    "DESKTOP_SESSION",
      "TERM_SESSION_ID", "ITERM_SESSION_ID",   "WT_SESSION",
      "XAUTHORITY",      "TOOLCACHE_SCOPE_KEY"};
  for (std::string_view n : kNotSecret) {
    if (u == n) return false;
  }
  if (StartsWith(u, "XDG_") || StartsWith(u, "DBUS_") ||
      StartsWith(u, "GNOME_KEYRING")) {
    return false;
  }
  static constexpr std::string_view kEither[] = {
      "TOKEN",      "KEY",        "SECRET", "PASSWORD", "PASSWD",
      "PASSPHRASE", "CREDENTIAL", "AUTH",   "COOKIE",   "SESSION"};
  static constexpr std::string_view kEnd[] = {"PAT", "PASS"};
  size_t start = 0;
  while (start <= u.size()) {
    size_t end = u.find('_', start);
    if (end == std::string::npos) end = u.size();
    const std::string_view w = std::string_view(u).substr(start, end - start);
    if (!w.empty()) {
      for (std::string_view k : kEither) {
        if (StartsWith(w, k) || EndsWith(w, k)) return true;
      }
      for (std::string_view k : kEnd) {
        if (EndsWith(w, k)) return true;
      }
    }
    start = end + 1;
  }
  return false;
}

bool LooksLikeCredentialHeader(std::string_view name) {
  if (EqualsLower(name, "openai-organization") ||
      EqualsLower(name, "openai-project")) {
    return true;
  }
  static constexpr std::string_view kWord[] = {
      "authorization", "auth",       "apikey",      "token",     "secret",
      "password",      "credential", "credentials", "authtoken", "accesstoken"};
  static constexpr std::string_view kBeforeKey[] = {
      "api",    "subscription", "virtual", "access",
      "secret", "private",      "client",  "auth"};
  std::string_view previous;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find_first_of("-_", start);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view w = name.substr(start, end - start);
    for (std::string_view k : kWord) {
      if (EqualsLower(w, k)) return true;
    }
    if (EqualsLower(w, "key")) {
      for (std::string_view k : kBeforeKey) {
        if (EqualsLower(previous, k)) return true;
      }
    }
    previous = w;
    start = end + 1;
  }
  return false;
}

bool LooksLikeCredentialQuery(std::string_view name) {
  if (name.empty()) return false;
  if (LooksLikeCredentialHeader(name) || EqualsLower(name, "sig") ||
      EqualsLower(name, "code")) {
    return true;
  }
  std::string n(name);
  std::replace(n.begin(), n.end(), '-', '_');
  std::replace(n.begin(), n.end(), '.', '_');
  return LooksLikeSecretName(n);
}

void AppendQueryCredentials(std::string_view target,
                            const std::vector<std::string>& extra,
                            std::vector<Credential>* parts) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return;
  std::string_view query = target.substr(q + 1);
  query = query.substr(0, query.find('#'));
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view()
                                          : query.substr(amp + 1);
    const size_t eq = param.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == param.size()) {
      continue;
    }
    const std::string_view name = param.substr(0, eq);
    bool counts = LooksLikeCredentialQuery(name);
    for (size_t i = 0; !counts && i < extra.size(); ++i) {
      counts =
          name.size() == extra[i].size() &&
          std::equal(name.begin(), name.end(), extra[i].begin(),
                     [](char a, char b) {
                       return std::tolower(static_cast<unsigned char>(a)) ==
                              std::tolower(static_cast<unsigned char>(b));
                     });
    }
    if (!counts) continue;
    Credential c{"?" + std::string(name), std::string(param.substr(eq + 1))};
    for (char& ch : c.name) {
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    parts->push_back(std::move(c));
  }
}

namespace {

// True when one segment of a URL's path looks like a secret of its own.
// Choice: 24 characters or more (a UUID, a hex or base64 token, a JWT), or
// 16 or more mixing letters and digits ("SECRET-ALICE-7f3a",
// "sk_live_4eC39HqLyjWDarjt"). Words, versions and dates ("mcp", "v1",
// "2025-06-18", "server-filesystem") stay. Over-redaction only costs a
// readable identity: the whole path scopes the entries (SecretArguments,
// and `mcp --url`'s scope).
bool LooksLikeSecretSegment(std::string_view s) {
  if (s.size() >= 24) return true;
  if (s.size() < 16) return false;
  bool digit = false;
  bool alpha = false;
  for (char c : s) {
    digit = digit || std::isdigit(static_cast<unsigned char>(c));
    alpha = alpha || std::isalpha(static_cast<unsigned char>(c));
  }
  return digit && alpha;
}

// True when everything after this path segment is a secret: Zapier's
// ".../s/<secret>/mcp", and a segment whose name looks secret ("/token/T",
// "/api-key/K", "/sessions/ID": dashes and dots as underscores,
// LooksLikeSecretName).
bool SecretFollows(std::string_view s) {
  if (s == "s" || s == "S") return true;
  std::string name(s);
  std::replace(name.begin(), name.end(), '-', '_');
  std::replace(name.begin(), name.end(), '.', '_');
  return !name.empty() && LooksLikeSecretName(name);
}

// Calls `piece(begin, end)` for every credential inside `value`'s URLs: the
// user information of an authority ("postgresql://alice:pw@db"), each path
// segment that looks secret (LooksLikeSecretSegment) and the rest of the
// path after a segment that announces one (SecretFollows), and the value
// of a query parameter with a secret-looking name ("?api_key=K",
// "&password=P"). Pieces come left to right and never overlap: those of a
// URL nested in another ("?next=https://u:p@h") are merged with the outer
// ones they touch.
template <typename F>
void ForEachUrlCredential(std::string_view value, F piece) {
  std::vector<std::pair<size_t, size_t>> pieces;
  auto take = [&](size_t begin, size_t end) {
    if (end > begin) pieces.emplace_back(begin, end);
  };
  for (size_t at = value.find("://"); at != std::string_view::npos;
       at = value.find("://", at + 3)) {
    const size_t host = at + 3;
    // The authority: up to the next '/', '?', '#', whitespace or quote.
    size_t end = value.find_first_of("/?#\"' \t\r\n", host);
    if (end == std::string_view::npos) end = value.size();
    const size_t user_end = value.rfind('@', end - 1);
    if (user_end != std::string_view::npos && user_end > host) {
      take(host, user_end);
    }
    // The path, segment by segment, up to a query, fragment, whitespace
    // or quote.
    size_t path_end = end;
    if (end < value.size() && value[end] == '/') {
      path_end =
          std::min(value.find_first_of("?#\"' \t\r\n", end), value.size());
      for (size_t seg = end + 1; seg < path_end;) {
        size_t slash = value.find('/', seg);
        if (slash == std::string_view::npos || slash > path_end) {
          slash = path_end;
        }
        const std::string_view s = value.substr(seg, slash - seg);
        if (SecretFollows(s)) {
          take(std::min(slash + 1, path_end), path_end);
          break;
        }
        if (LooksLikeSecretSegment(s)) take(seg, slash);
        seg = slash + 1;
      }
    }
    // The query, up to a fragment, whitespace or quote.
    const size_t q = path_end;
    if (q >= value.size() || value[q] != '?') continue;
    const size_t q_end =
        std::min(value.find_first_of("#\"' \t\r\n", q), value.size());
    for (size_t p = q + 1; p < q_end;) {
      size_t amp = value.find('&', p);
      if (amp == std::string_view::npos || amp > q_end) amp = q_end;
      const std::string_view param = value.substr(p, amp - p);
      const size_t eq = param.find('=');
      if (eq != std::string_view::npos && eq > 0 && eq + 1 < param.size()) {
        std::string name(param.substr(0, eq));
        std::replace(name.begin(), name.end(), '-', '_');
        if (LooksLikeSecretName(name)) take(p + eq + 1, amp);
      }
      p = amp + 1;
    }
  }
  std::sort(pieces.begin(), pieces.end());
  for (size_t i = 0; i < pieces.size();) {
    auto [begin, end] = pieces[i];
    for (++i; i < pieces.size() && pieces[i].first < end; ++i) {
      end = std::max(end, pieces[i].second);
    }
    piece(begin, end);
  }
}

// True when `value` holds a URL with a path beyond "/" or a query: what
// the server is asked for, a credential in its own right when the path
// holds the secret (mcp-remote https://host/api/mcp/s/<secret>/mcp).
bool HasUrlPathOrQuery(std::string_view value) {
  for (size_t at = value.find("://"); at != std::string_view::npos;
       at = value.find("://", at + 3)) {
    const size_t end = value.find_first_of("/?#\"' \t\r\n", at + 3);
    if (end == std::string_view::npos) return false;
    if (value[end] == '?') return true;
    if (value[end] == '/' && end + 1 < value.size() &&
        std::string_view("#\"' \t\r\n").find(value[end + 1]) ==
            std::string_view::npos) {
      return true;
    }
  }
  return false;
}

// A flag whose name, dashes as underscores, looks secret ("--api-key").
bool IsSecretFlag(std::string_view flag) {
  if (flag.size() < 2 || flag[0] != '-') return false;
  flag.remove_prefix(flag[1] == '-' ? 2 : 1);
  std::string name(flag);
  std::replace(name.begin(), name.end(), '-', '_');
  return !name.empty() && LooksLikeSecretName(name);
}

// Where the secret of one argument starts ("--token=V", "GITHUB_TOKEN=V"
// as `docker -e` and `env` take it, "Authorization: Bearer V" as
// `--header` takes it): the offset of its value, npos for none.
size_t SecretValueAt(std::string_view a) {
  const size_t eq = a.find('=');
  if (eq != std::string_view::npos && eq > 0) {
    const std::string_view name = a.substr(0, eq);
    if (name[0] == '-' ? IsSecretFlag(name)
                       : name.find_first_of(" :/") == std::string_view::npos &&
                             LooksLikeSecretName(name)) {
      return eq + 1;
    }
  }
  const size_t colon = a.find(':');
  if (colon != std::string_view::npos && colon > 0 &&
      a.substr(colon, 3) != "://") {
    std::string name(a.substr(0, colon));
    if (name.find_first_of(" =/") == std::string::npos) {
      std::replace(name.begin(), name.end(), '-', '_');
      if (Upper(name) == "AUTHORIZATION" || LooksLikeSecretName(name)) {
        size_t v = colon + 1;
        while (v < a.size() && a[v] == ' ') ++v;
        return v;
      }
    }
  }
  return std::string_view::npos;
}

}  // namespace

bool CarriesUrlCredential(std::string_view value) {
  bool found = false;
  ForEachUrlCredential(value, [&](size_t, size_t) { found = true; });
  return found;
}

namespace {

// The positions of `argv` that hold credential material, ascending: an
// argument with a secret value of its own (SecretValueAt, a URL
// credential), and the argument after a secret flag. Each is still judged
// as an argument of its own (a flag that takes no value must not hide
// `--client-secret S` behind it).
std::vector<size_t> SecretArgumentPositions(
    const std::vector<std::string>& argv) {
  std::vector<size_t> out;
  auto take = [&](size_t j) {
    if (out.empty() || out.back() != j) out.push_back(j);
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string_view a = argv[i];
    if (SecretValueAt(a) != std::string_view::npos || CarriesUrlCredential(a)) {
      take(i);
    } else if (a.find('=') == std::string_view::npos && IsSecretFlag(a) &&
               i + 1 < argv.size()) {
      take(i + 1);
    }
  }
  return out;
}

}  // namespace

std::vector<Credential> SecretArguments(const std::vector<std::string>& argv) {
  std::vector<Credential> out;
  const std::vector<size_t> secret = SecretArgumentPositions(argv);
  for (size_t i = 0; i < argv.size(); ++i) {
    // Choice: a URL's whole path and query, not only the segments that look
    // secret: a short or word-like token in a path must scope too, and the
    // same URL gives the same piece, so users of one URL still share.
    if (std::binary_search(secret.begin(), secret.end(), i) ||
        HasUrlPathOrQuery(argv[i])) {
      out.push_back({"argv[" + std::to_string(i) + "]", argv[i]});
    }
  }
  return out;
}

std::string RedactedUrl(std::string_view text) {
  std::string r;
  size_t from = 0;
  ForEachUrlCredential(text, [&](size_t begin, size_t end) {
    r.append(text.substr(from, begin - from));
    r.append("<redacted>");
    from = end;
  });
  r.append(text.substr(from));
  return r;
}

std::string RedactedCommandLine(const std::vector<std::string>& argv) {
  constexpr std::string_view kRedacted = "<redacted>";
  std::vector<std::string> shown = argv;
  for (size_t i : SecretArgumentPositions(argv)) {
    const std::string_view a = argv[i];
    if (const size_t v = SecretValueAt(a); v != std::string_view::npos) {
      shown[i] = std::string(a.substr(0, v)) + std::string(kRedacted);
    } else if (CarriesUrlCredential(a)) {
      shown[i] = RedactedUrl(a);
    } else {
      shown[i] = kRedacted;  // the value after a secret flag
    }
  }
  std::string joined;
  for (const std::string& a : shown) {
    if (!joined.empty()) joined += ' ';
    joined += a;
  }
  return joined;
}

std::string DistinctIdentity(std::string shown, std::string_view original) {
  if (shown == original) return shown;
  const std::string digest =
      CredentialDigest({{"identity", std::string(original)}});
  shown += " #";
  shown += digest.substr(0, 12);
  return shown;
}

namespace {

// The variables of `entries` that `keep(name, value)` accepts or `also`
// names, deduplicated (the first occurrence counts, as getenv reads it).
// Volatile names (IsVolatileEnvironmentName) are never kept unless `also`
// names them.
template <typename Keep>
std::vector<Credential> EnvironmentWhere(
    const std::vector<std::string>& entries,
    const std::vector<std::string>& also, Keep keep) {
  std::vector<Credential> out;
  for (const std::string& e : entries) {
    const size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string_view name = std::string_view(e).substr(0, eq);
    const bool declared =
        std::find(also.begin(), also.end(), name) != also.end();
    if (!declared && (IsVolatileEnvironmentName(name) ||
                      !keep(name, std::string_view(e).substr(eq + 1)))) {
      continue;
    }
    bool seen = false;
    for (const Credential& c : out) seen = seen || c.name == name;
    if (!seen) out.push_back({std::string(name), e.substr(eq + 1)});
  }
  return out;
}

}  // namespace

std::vector<Credential> SecretEnvironment(
    const std::vector<std::string>& entries,
    const std::vector<std::string>& also) {
  return EnvironmentWhere(
      entries, also, [](std::string_view name, std::string_view value) {
        return LooksLikeSecretName(name) || CarriesUrlCredential(value);
      });
}

bool IsVolatileEnvironmentName(std::string_view name) {
  const std::string u = Upper(name);
  // The shell's own bookkeeping, the terminal and the login: they differ
  // between one user's terminals and say nothing about whose data a server
  // reads. One list, each name between spaces.
  static constexpr std::string_view kExact =
      " PWD OLDPWD SHLVL COLUMNS LINES TERM COLORTERM WINDOWID WINDOW STY "
      "TMUX TMUX_PANE GPG_TTY DISPLAY WAYLAND_DISPLAY VTE_VERSION "
      "INVOCATION_ID JOURNAL_STREAM MANAGERPID SYSTEMD_EXEC_PID "
      "DESKTOP_STARTUP_ID XDG_ACTIVATION_TOKEN XDG_VTNR WT_SESSION "
      "WT_PROFILE_ID SECURITYSESSIONID _ ";
  if (kExact.find(" " + u + " ") != std::string_view::npos) return true;
  static constexpr std::string_view kPrefix[] = {
      "TERM_",    "SSH_",       "XDG_SESSION_", "XDG_SEAT", "KITTY_",
      "WEZTERM_", "ALACRITTY_", "ITERM_",       "VSCODE_",  "GIO_LAUNCHED_",
      "KONSOLE_", "TILIX_",     "STARSHIP_",    "ZELLIJ_"};
  for (std::string_view p : kPrefix) {
    if (StartsWith(u, p)) return true;
  }
  // Claude Code (2.1.332) gives each stdio MCP server its whole environment
  // plus per-session names: CLAUDE_CODE_SESSION_ID,
  // CLAUDE_CODE_MESSAGING_TOKEN / _SOCKET, CLAUDE_CODE_CHILD_NOTES_DIR,
  // CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS (and CLAUDE_CODE_SSE_PORT in an
  // IDE). Choice: any CLAUDE_CODE_ name with one of these words, so a new
  // per-session name of the same family does not split every session.
  if (StartsWith(u, "CLAUDE_CODE_")) {
    static constexpr std::string_view kWords[] = {
        "SESSION", "SESSIONS", "MESSAGING", "CHILD", "SSE", "LAUNCHED"};
    size_t start = 0;
    while (start <= u.size()) {
      size_t end = u.find('_', start);
      if (end == std::string::npos) end = u.size();
      const std::string_view w = std::string_view(u).substr(start, end - start);
      for (std::string_view k : kWords) {
        if (w == k) return true;
      }
      start = end + 1;
    }
  }
  return false;
}

bool LooksLikeDataSelectingName(std::string_view name) {
  const std::string u = Upper(name);
  static constexpr std::string_view kExact[] = {
      "HOME", "USER", "LOGNAME", "USERNAME", "USERPROFILE", "KUBECONFIG",
      "TMPDIR", "TMP", "TEMP",
      // libpq's connection variables (server-postgres and psql-based
      // servers): one word each.
      "PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE",
      "PGSERVICEFILE", "PGPASSFILE"};
  for (std::string_view n : kExact) {
    if (u == n) return true;
  }
  const size_t last = u.rfind('_');
  if (last == std::string::npos || last == 0) return false;
  const std::string_view w = std::string_view(u).substr(last + 1);
  static constexpr std::string_view kLast[] = {
      "PATH",        "FILE",         "FILES",    "DIR",     "DIRECTORY",
      "DIRECTORIES", "FOLDER",       "ROOT",     "HOME",    "PROFILE",
      "CONFIG",      "PROJECT",      "REGION",   "ZONE",    "LOCATION",
      "ACCOUNT",     "WORKSPACE",    "VAULT",    "DB",      "DATABASE",
      "SCHEMA",      "NAMESPACE",    "CONTEXT",  "CLUSTER", "TENANT",
      "ORG",         "ORGANIZATION", "OWNER",    "TEAM",    "USER",
      "USERNAME",    "SUBSCRIPTION", "BUCKET",   "HOST",    "URL",
      "URI",         "ENDPOINT",     "INSTANCE", "DOMAIN",  "SITE",
      "REPO",        "REPOSITORY",   "ID",       "ENV",     "ENVIRONMENT"};
  for (std::string_view k : kLast) {
    if (w == k) return true;
  }
  return false;
}

std::vector<Credential> ScopingEnvironment(
    const std::vector<std::string>& entries,
    const std::vector<std::string>& also) {
  return EnvironmentWhere(
      entries, also, [](std::string_view name, std::string_view value) {
        return LooksLikeSecretName(name) || CarriesUrlCredential(value) ||
               LooksLikeDataSelectingName(name);
      });
}

std::vector<Credential> StdioServerCredentials(
    const std::vector<std::string>& environment,
    const std::vector<std::string>& also, const std::vector<std::string>& argv,
    uint32_t uid, std::string_view cwd) {
  std::vector<Credential> parts = ScopingEnvironment(environment, also);
  for (Credential& c : SecretArguments(argv)) parts.push_back(std::move(c));
  // Choice: '=' starts these names: no environment variable's name holds
  // one, so neither can stand in for a variable.
  parts.push_back({"=uid", std::to_string(uid)});
  parts.push_back({"=cwd", std::string(cwd)});
  return parts;
}

std::vector<Credential> ThisStdioServerCredentials(
    const std::vector<std::string>& also,
    const std::vector<std::string>& argv) {
  // Choice: a working directory that cannot be read (removed, or longer
  // than 1 MiB) counts as "": such processes share with each other only.
  std::string cwd;
  std::vector<char> buf;
  for (size_t n = 4096; n <= (size_t{1} << 20); n *= 2) {
    buf.resize(n);
    if (const char* got = getcwd(buf.data(), buf.size()); got != nullptr) {
      cwd = got;
      break;
    }
    if (errno != ERANGE) break;
  }
  return StdioServerCredentials(ProcessEnvironment(), also, argv,
                                static_cast<uint32_t>(getuid()), cwd);
}

std::vector<std::string> ProcessEnvironment() {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    out.emplace_back(*e);
  }
  return out;
}

}  // namespace toolcache

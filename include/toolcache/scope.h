// Principals and the cache scope: who may share a cached entry, computed
// once per request, in one place, for every face (issue 27).
//
// A Principal names everything that tells two callers apart: the operator's
// explicit scope (`--scope`), the serve tenant, the configured user, and a
// keyed digest of the credentials the upstream sees (an API key, an
// Authorization header, a stdio server's secret environment). ScopeOf turns
// it into the scope string that result entries, single-flight, conversation
// state and offloaded results are keyed under (CacheKey::scope; the engine
// folds it into the key digest with a length prefix). Two principals that
// differ in any field get different scopes; a principal with no field set is
// the global scope "", so credential-less setups keep their keys.
//
// Secrets never appear in a scope: CredentialDigest is an HMAC-SHA256 keyed
// by TOOLCACHE_SCOPE_KEY (when set) over a fixed domain-separation prefix,
// truncated to 128 bits. Choice: keyed, not a plain SHA-256, so a deployment
// that sets the key makes a stored scope useless for confirming a guessed
// short token; without it, the digest is as strong as the token's entropy
// (API keys and PATs carry >= 128 bits, so guessing is infeasible). 128 bits
// so that nobody can search for a credential of their own whose digest
// matches another principal's (a 64-bit truncation is within reach).
//
// Thread-safety: free functions, thread-safe (the key is read once).
//
// Example:
//   Principal p;
//   p.credential = CredentialDigest({{"authorization", "Bearer s3cr3t"}});
//   std::string scope = ScopeOf(p);  // "@c32:<32 hex>", never the token
#ifndef TOOLCACHE_SCOPE_H_
#define TOOLCACHE_SCOPE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toolcache {

struct Principal {
  // The operator's explicit scope (`toolcache mcp --scope`); "" = none.
  std::string base;
  // The serve tenant (its configured name); "" = none.
  std::string tenant;
  // The configured user; "" = none.
  std::string user;
  // CredentialDigest(...) of what the upstream sees; "" = no credential.
  // The LLM proxy uses "none" for a request that carries no credential
  // (distinct from every digest and from the global scope).
  std::string credential;
  // Whose machine and folder a result was read in: the LLM proxy's
  // WorkspaceDigest of a client's installation and working folder, for the
  // results of tools that run on the client; "" = not such a result.
  std::string workspace;
};

// The scope string of `p`:
//   - every field empty: "" (global);
//   - only `base`, and it does not start with '@': `base` itself (the
//     scope `--scope` has always given);
//   - otherwise '@' followed by each non-empty field as
//     <tag><decimal length>':'<value>';' in the order base (b), tenant (t),
//     user (u), credential (c), workspace (w), e.g. "@t5:alice;c32:9f...;".
// Injective: distinct principals give distinct strings (lengths, not
// separators, delimit values; '@' marks the composed form).
std::string ScopeOf(const Principal& p);

// One piece of credential material: a header or an environment variable.
struct Credential {
  std::string name;  // header names lowercased by the caller
  std::string value;
};

// 32 lowercase hex digits: HMAC-SHA256 over the pieces sorted by name, each
// length-prefixed, truncated to 128 bits; "" when `parts` is empty. The key
// is "toolcache/scope/v1" followed by `key`.
std::string CredentialDigest(std::vector<Credential> parts,
                             std::string_view key);
// The same with the deployment key: the environment variable
// TOOLCACHE_SCOPE_KEY, read once ("" when unset). Every process sharing a
// store must use the same key to share entries.
std::string CredentialDigest(std::vector<Credential> parts);

// True when an environment variable named `name` probably holds a secret:
// one of its '_'-separated words (case-insensitive) starts or ends with
// TOKEN, KEY, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL, AUTH,
// COOKIE or SESSION, or ends with PAT or PASS, e.g.
// GITHUB_PERSONAL_ACCESS_TOKEN, OPENAI_API_KEY, APIKEY, GH_PAT,
// AWS_SECRET_ACCESS_KEY (PATH is not: PAT only ends a word). Known
// non-secrets that only vary with the login (SSH_AUTH_SOCK, XDG_*, DBUS_*,
// SESSION_MANAGER, DESKTOP_SESSION, terminal session ids) are excluded, so
// one user's terminals still share.
bool LooksLikeSecretName(std::string_view name);

// True when an HTTP request header named `name` (any case) authenticates
// or scopes the caller upstream, so that it joins the caller's principal:
// one of its '-'/'_'-separated words is AUTHORIZATION, AUTH, APIKEY, TOKEN,
// SECRET, PASSWORD, CREDENTIAL(S), AUTHTOKEN or ACCESSTOKEN; or a KEY
// word follows API, SUBSCRIPTION, VIRTUAL, ACCESS, SECRET, PRIVATE, CLIENT
// or AUTH; or it is openai-organization / openai-project. Covers
// x-api-key, authorization, api-key (Azure OpenAI), x-goog-api-key,
// cf-aig-authorization (Cloudflare AI Gateway), x-portkey-api-key and
// x-portkey-virtual-key, helicone-auth, ocp-apim-subscription-key,
// x-amz-security-token, proxy-authorization. Choice: a bare KEY or SESSION
// word does not count: SDKs send a fresh idempotency-key on every request
// and agents a session id per conversation, which would make every request
// its own principal. No allocation (the LLM proxy runs it on every header
// of every request).
bool LooksLikeCredentialHeader(std::string_view name);

// True when a request URL's query parameter named `name` (any case)
// authenticates the caller upstream, so that it joins the caller's
// principal: LooksLikeCredentialHeader(name), or LooksLikeSecretName with
// '-' and '.' read as '_' (so a bare KEY counts: Google APIs' `?key=`), or
// SIG (an Azure shared access signature) or CODE (an Azure Functions key).
// Covers `subscription-key` (Azure API Management), `key`, `api_key`,
// `api-key`, `apikey`, `access_token`, `token`, `auth`, `password`. Not
// `beta` (Claude Code's `?beta=true`), `api-version` (Azure OpenAI),
// `alt` (Gemini's `alt=sse`). Choice: unlike a header, a bare KEY counts:
// no SDK sends a per-request query parameter named so, and Google's key
// has no other spelling.
bool LooksLikeCredentialQuery(std::string_view name);

// Appends to *parts each parameter of the query of the request target
// `target` (after its first '?', up to a '#'; '&'-separated) whose name
// LooksLikeCredentialQuery or equals one of `extra` (any case), with a
// non-empty value: named "?" + the name lowercased, the value as sent
// (not percent-decoded). Every occurrence of a repeated parameter counts.
// The '?' keeps them apart from headers of the same name.
void AppendQueryCredentials(std::string_view target,
                            const std::vector<std::string>& extra,
                            std::vector<Credential>* parts);

// True when `value` holds a URL that carries a credential: user
// information in its authority ("postgresql://alice:pw@db/app",
// "redis://:pw@cache", "mongodb+srv://u:p@cluster"), the value of a query
// parameter with a secret-looking name ("?api_key=K"), or a path segment
// that looks secret: one of 24 characters or more (UUIDs, tokens), one of
// 16 or more mixing letters and digits, and everything after a segment
// "s" (Zapier's ".../s/<secret>/mcp") or a segment whose name looks
// secret ("/token/T", "/api-key/K"). A credential whatever the variable
// or argument is called (DATABASE_URL, a connection string on the command
// line, mcp-remote's server URL).
bool CarriesUrlCredential(std::string_view value);

// `text` with every credential CarriesUrlCredential finds in its URLs
// replaced by "<redacted>", the rest kept
// ("https://h/api/mcp/s/<redacted>", "postgresql://<redacted>@db/app").
// Choice: the path rule over-redacts (a long word-like segment goes too);
// what is shown is an identity, never what scopes the entries.
std::string RedactedUrl(std::string_view text);

// The secret-looking variables of `environ`-style "NAME=value" entries
// (LooksLikeSecretName, or a value that CarriesUrlCredential), plus those
// named in `also` (variables the operator declared, e.g. a wrapped
// server's env block), deduplicated. A volatile name
// (IsVolatileEnvironmentName: CLAUDE_CODE_SESSION_ID, a terminal's
// session id) is left out unless `also` names it.
std::vector<Credential> SecretEnvironment(
    const std::vector<std::string>& entries,
    const std::vector<std::string>& also = {});

// True for an environment variable that changes with every login,
// terminal or agent session and never chooses a server's data: the shell's
// bookkeeping (PWD, OLDPWD, SHLVL, `_`, COLUMNS, LINES), the terminal and
// the login (TERM, TERM_*, COLORTERM, SSH_*, DISPLAY, WAYLAND_DISPLAY,
// XDG_SESSION_*, XDG_SEAT*, XDG_VTNR, XDG_ACTIVATION_TOKEN, WINDOWID, TMUX,
// TMUX_PANE, STY, GPG_TTY, KITTY_*, WEZTERM_*, ALACRITTY_*, ITERM_*,
// KONSOLE_*, TILIX_*, STARSHIP_*, ZELLIJ_*, VSCODE_*, WT_SESSION,
// DESKTOP_STARTUP_ID, systemd's INVOCATION_ID, JOURNAL_STREAM, MANAGERPID,
// SYSTEMD_EXEC_PID) and Claude Code's per-session names (a CLAUDE_CODE_ name
// with a word SESSION, SESSIONS, MESSAGING, CHILD, SSE or LAUNCHED:
// CLAUDE_CODE_SESSION_ID, CLAUDE_CODE_MESSAGING_TOKEN,
// CLAUDE_CODE_CHILD_NOTES_DIR, ...). Such a variable joins no principal unless
// the operator names it
// (`--credential-env`).
bool IsVolatileEnvironmentName(std::string_view name);

// True when an environment variable named `name` (any case) probably
// chooses *whose* data a server reads without being a secret: HOME, USER,
// LOGNAME, USERNAME, USERPROFILE, KUBECONFIG, TMPDIR, TMP, TEMP, libpq's
// PGHOST, PGHOSTADDR, PGPORT, PGDATABASE, PGUSER, PGSERVICE, PGSERVICEFILE,
// PGPASSFILE, or a name
// of two or more '_'-separated words whose last word is PATH, FILE(S),
// DIR, DIRECTORY, DIRECTORIES, FOLDER, ROOT, HOME, PROFILE, CONFIG,
// PROJECT, REGION, ZONE, LOCATION, ACCOUNT, WORKSPACE, VAULT, DB,
// DATABASE, SCHEMA, NAMESPACE, CONTEXT, CLUSTER, TENANT, ORG,
// ORGANIZATION, OWNER, TEAM, USER, USERNAME, SUBSCRIPTION, BUCKET, HOST,
// URL, URI, ENDPOINT, INSTANCE, DOMAIN, SITE, REPO, REPOSITORY, ID, ENV or
// ENVIRONMENT: MEMORY_FILE_PATH, AWS_PROFILE, AWS_REGION,
// GOOGLE_CLOUD_PROJECT, XDG_CONFIG_HOME, PGHOST, SLACK_TEAM_ID. PATH
// itself is not (one word: the programs, not the data).
bool LooksLikeDataSelectingName(std::string_view name);

// SecretEnvironment plus the variables whose names choose data
// (LooksLikeDataSelectingName), without volatile ones
// (IsVolatileEnvironmentName) unless `also` names them; deduplicated.
// SecretEnvironment drops volatile names as well.
std::vector<Credential> ScopingEnvironment(
    const std::vector<std::string>& entries,
    const std::vector<std::string>& also = {});

// Everything that tells two stdio servers started the same way apart
// (session 19): ScopingEnvironment(`environment`, `also`),
// SecretArguments(`argv`), the OS user `uid` (piece "=uid") and the
// working directory `cwd` the server starts in (piece "=cwd": relative
// paths in its arguments and variables, and servers that read "the
// project", resolve against it). '=' opens the two names: no variable can
// stand in for them. Feed it to CredentialDigest.
std::vector<Credential> StdioServerCredentials(
    const std::vector<std::string>& environment,
    const std::vector<std::string>& also, const std::vector<std::string>& argv,
    uint32_t uid, std::string_view cwd);

// StdioServerCredentials of a server this process starts with its own
// environment, real uid and working directory ("" when it cannot be read).
std::vector<Credential> ThisStdioServerCredentials(
    const std::vector<std::string>& also, const std::vector<std::string>& argv);

// The credential material of a server's command line: every argument that
// CarriesUrlCredential, every argument holding a URL with a path beyond
// "/" or a query (in full: mcp-remote's https://h/api/mcp/s/<secret>/mcp
// names the account, whatever the secret looks like), and the value of a
// secret-looking flag (`--api-key=V`, `--password V`, `-token=V`: the
// flag's name, dashes as underscores, passes LooksLikeSecretName). Each
// piece is named by its position ("argv[3]"), so the same arguments give
// the same pieces.
std::vector<Credential> SecretArguments(const std::vector<std::string>& argv);

// `argv` joined by spaces for logs and as a server's identity, with the
// secrets SecretArguments finds replaced by "<redacted>": the value of a
// secret-looking flag, and a URL's credentials (RedactedUrl:
// "postgresql://<redacted>@db/app", "https://h/api/mcp/s/<redacted>"). A
// URL's path is kept where it does not look secret (it scopes in full all
// the same). The secrets stay in the scope (SecretArguments), never in a
// log line, a key's server name or a store.
std::string RedactedCommandLine(const std::vector<std::string>& argv);

// An unnamed server's identity: `shown` (RedactedUrl / RedactedCommandLine
// of `original`), made distinct per `original` when the redaction hid
// something -- " #" and the first 12 hex digits of the original's
// CredentialDigest (keyed by TOOLCACHE_SCOPE_KEY, as the scopes are) -- so
// two accounts whose URLs differ only in a redacted secret stay two servers
// even under --share-across-credentials, which leaves the secret out of the
// scope. `shown` unchanged when nothing was redacted.
std::string DistinctIdentity(std::string shown, std::string_view original);

// This process's environment as "NAME=value" entries.
std::vector<std::string> ProcessEnvironment();

}  // namespace toolcache

#endif  // TOOLCACHE_SCOPE_H_

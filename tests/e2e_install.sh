#!/usr/bin/env bash
# toolcache installed like a tool (issue 19), from the existing build dir
# (nothing is compiled but the tiny consumer project):
#   1. --version names the version and the git revision; the revision
#      script is graceful outside a git checkout;
#   2. `cmake --install` into a scratch prefix: binary, man page,
#      completions, docs, headers, libraries, CMake package; a consumer
#      project outside the tree builds against it with find_package(toolcache)
#      and agrees with `toolcache key`;
#   3. `cpack` builds toolcache_<version>_amd64.deb: its file list, and a
#      Depends that names the package of every shared library the binary
#      links, each installed here in a version that satisfies it;
#   4. the package unpacked into a scratch root (dpkg -x) runs: --version,
#      mcp --help, its man page renders, every subcommand and option of
#      --help is in the man page and the bash completion, zsh completes
#      subcommands, options and choices;
#   5. `toolcache wrap` writes `toolcache` when PATH finds the installed
#      program, the absolute path with --absolute or when PATH does not
#      (said on stderr), and retargets a config wrapped from the build
#      tree; one MCP session through the wrapped config (real npm server,
#      the official SDK client) gets the repeat read from cache.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
: "${TOOLCACHE_BINARY_DIR:?TOOLCACHE_BINARY_DIR must point at the build dir}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
build=$TOOLCACHE_BINARY_DIR
peers="$src/tests/peers"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# Note: `cmd | grep -q` is avoided: under pipefail, grep's early exit can
# kill cmd with SIGPIPE and fail the pipeline.

version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
[ -n "$version" ] || fail "no CPACK_PACKAGE_VERSION in $build/CPackConfig.cmake"

# --- 1. version and revision
got=$("$TOOLCACHE_BIN" --version)
[[ $got =~ ^toolcache\ $version\ \(git\ ([^\)]+)\)$ ]] || fail "--version: '$got'"
rev=${BASH_REMATCH[1]}
if git -C "$src" rev-parse --show-toplevel >/dev/null 2>&1 &&
   [ "$(cd "$(git -C "$src" rev-parse --show-toplevel)" && pwd -P)" = "$(cd "$src" && pwd -P)" ]; then
  # The binary's revision is a commit of this checkout's history (HEAD
  # itself unless commits came after the build) ...
  commit=$(git -C "$src" rev-parse -q --verify "${rev%-dirty}^{commit}") ||
    fail "--version names no commit: '$got'"
  git -C "$src" merge-base --is-ancestor "$commit" HEAD || fail "--version: $rev is not in HEAD's history"
  # ... and the script names exactly what git describes now.
  cmake -DSOURCE_DIR="$src" -DOUT="$tmp/rev-now.cc" -P "$src/cmake/toolcache_revision.cmake"
  grep -qF "return \"$(git -C "$src" describe --always --dirty --abbrev=12)\";" "$tmp/rev-now.cc" ||
    fail "revision script: $(cat "$tmp/rev-now.cc")"
else
  [ "$rev" = unknown ] || fail "--version outside git: '$got'"
fi
mkdir "$tmp/nogit"
cmake -DSOURCE_DIR="$tmp/nogit" -DOUT="$tmp/rev.cc" -P "$src/cmake/toolcache_revision.cmake"
grep -q 'return "unknown";' "$tmp/rev.cc" || fail "revision outside git: $(cat "$tmp/rev.cc")"
cmake -DSOURCE_DIR="$tmp/nogit" -DOUT="$tmp/rev.cc" -DREVISION=v1-from-tarball \
  -P "$src/cmake/toolcache_revision.cmake"
grep -q 'return "v1-from-tarball";' "$tmp/rev.cc" || fail "revision override"
echo "PASS --version: $got"

# --- 2. cmake --install and find_package(toolcache)
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; fail "cmake --install"; }
for f in bin/toolcache share/man/man1/toolcache.1.gz \
  share/bash-completion/completions/toolcache share/zsh/site-functions/_toolcache \
  share/doc/toolcache/README.md share/doc/toolcache/docs/MCP.md \
  lib/cmake/toolcache/toolcacheConfig.cmake lib/cmake/toolcache/toolcacheConfigVersion.cmake \
  lib/cmake/toolcache/toolcacheTargets.cmake lib/libtoolcache_core.a lib/libtoolcache_mcp.a; do
  [ -f "$prefix/$f" ] || fail "cmake --install: no $f"
done
for h in "$src"/include/toolcache/*.h; do
  cmp -s "$h" "$prefix/include/toolcache/$(basename "$h")" || fail "header $(basename "$h") not installed"
done
[ "$("$prefix/bin/toolcache" --version)" = "$got" ] || fail "installed --version differs"
cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$tmp/consumer.log" 2>&1 &&
  cmake --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1 ||
  { cat "$tmp/consumer.log"; fail "consumer project against the install prefix"; }
out=$("$tmp/consumer/consumer" fs read_file '{"path": "a.txt"}')
digest=$("$TOOLCACHE_BIN" key --server fs read_file '{"path": "a.txt"}' | sed -n 's/^digest: *//p')
[ -n "$digest" ] && grep -qx "digest $digest" <<<"$out" || fail "consumer digest: $out vs toolcache key: $digest"
grep -qx "second hit" <<<"$out" || fail "consumer: repeat not served from cache: $out"
echo "PASS cmake --install: files, headers, find_package(toolcache) consumer"

# --- 3. the Debian package
mkdir "$tmp/pkg"
(cd "$tmp/pkg" && cpack --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1) ||
  { cat "$tmp/cpack.log"; fail "cpack"; }
deb=$tmp/pkg/toolcache_${version}_amd64.deb
[ -f "$deb" ] || { ls "$tmp/pkg"; fail "no $(basename "$deb")"; }
[ "$(dpkg-deb -f "$deb" Package)" = toolcache ] || fail "package name"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "package version"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$tmp/files"
for f in /usr/bin/toolcache /usr/share/man/man1/toolcache.1.gz \
  /usr/share/bash-completion/completions/toolcache /usr/share/zsh/vendor-completions/_toolcache \
  /usr/share/doc/toolcache/README.md /usr/share/doc/toolcache/docs/MCP.md; do
  grep -qx "$f" "$tmp/files" || fail "package lacks $f"
done
if grep -E '^/usr/(include|lib)/|\.a$|\.cmake$' "$tmp/files"; then
  fail "development files in the runtime package"
fi
depends=$(dpkg-deb -f "$deb" Depends)
root=$tmp/root
dpkg -x "$deb" "$root"
bin=$root/usr/bin/toolcache
if grep -qE 'R(UN)?PATH' <<<"$(readelf -d "$bin")"; then fail "installed binary has an RPATH"; fi
# Every shared library the binary links (DT_NEEDED; theirs are their
# packages' business) comes from a package in Depends
# (by its name or a name it Provides, as libspdlog1.10 provides
# libspdlog1.10-fmt9).
names=" $(sed 's/([^)]*)//g; s/[|,]/ /g' <<<"$depends" | tr -s ' ') "
while read -r lib; do
  owner=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "$(realpath "$lib")" 2>/dev/null ||
          dpkg -S "${lib/#\/lib\//\/usr\/lib\/}" 2>/dev/null) || fail "no package owns $lib"
  pkg=${owner%%:*}
  found=0
  for p in "$pkg" $(dpkg-query -W -f='${Provides}' "$pkg" | sed 's/([^)]*)//g; s/,/ /g'); do
    [[ $names == *" $p "* ]] && found=1
  done
  ((found)) || fail "Depends lacks $pkg (for $lib): $depends"
done < <(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
         while read -r soname; do
           ldd "$bin" | awk -v s="$soname" '$1 == s && $2 == "=>" {print $3}' | grep . ||
             echo "unresolved:$soname"
         done)
# Installing it here needs nothing else: apt resolves every Depends
# (versions, Provides) against the installed packages.
apt-get install -s --no-install-recommends "$deb" >"$tmp/apt.log" 2>&1 ||
  { cat "$tmp/apt.log"; fail "apt-get install -s"; }
inst=$(awk '$1 == "Inst" {print $2}' "$tmp/apt.log" | xargs)
[ "$inst" = toolcache ] || { cat "$tmp/apt.log"; fail "installing the package would also install: $inst"; }
echo "PASS $(basename "$deb"): files, Depends: $depends"

# --- 4. the unpacked package runs
[ "$("$bin" --version)" = "$got" ] || fail "packaged --version: $("$bin" --version)"
"$bin" mcp --help >"$tmp/mcp-help" || fail "mcp --help exit $?"
grep -q -- '--config' "$tmp/mcp-help" || fail "mcp --help: $(cat "$tmp/mcp-help")"
zcat "$root/usr/share/man/man1/toolcache.1.gz" >"$tmp/toolcache.1"
if command -v groff >/dev/null; then
  warnings=$(groff -man -ww -z "$tmp/toolcache.1" 2>&1) || fail "groff: $warnings"
  [ -z "$warnings" ] || fail "man page warnings: $warnings"
fi
man_text=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$tmp/toolcache.1")
comp=$root/usr/share/bash-completion/completions/toolcache
# Completes the words "$@" (the last one being completed) with the bash
# completion of the package; prints the candidates one per line.
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
           _toolcache; printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" toolcache "$@"
}
# Subcommands of "toolcache $*" and long options, from its --help.
subcommands_of() {
  "$bin" "$@" --help | awk '/^Subcommands:/ {s = 1; next} s && /^  [a-z]/ {print $1} s && /^$/ {s = 0}'
}
options_of() {
  "$bin" "$@" --help | grep -oE '^  +(-[A-Za-z], ?)?--[A-Za-z0-9-]+' | grep -oE -- '--[A-Za-z0-9-]+' || true
}
checked=0
check_command() {  # the words of a command path
  local subs opt sub
  subs=$(subcommands_of "$@")
  if [ $# -gt 0 ]; then
    grep -qF "toolcache $*" <<<"$man_text" || fail "man page lacks 'toolcache $*'"
  fi
  for opt in $(options_of "$@"); do
    grep -qF -- "$opt" <<<"$man_text" || fail "man page lacks $opt of 'toolcache $*'"
    grep -qx -- "$opt" <<<"$(complete_words "$@" "$opt")" || fail "bash completion lacks $opt of 'toolcache $*'"
    checked=$((checked + 1))
  done
  if [ -n "$subs" ]; then
    [ "$(complete_words "$@" "" | sort)" = "$(sort <<<"$subs")" ] ||
      fail "bash completion of 'toolcache $* ': $(complete_words "$@" "" | xargs)"
  fi
  for sub in $subs; do check_command "$@" "$sub"; done
}
check_command
[ "$checked" -gt 40 ] || fail "only $checked options checked"
grep -qx debug <<<"$(complete_words mcp --log-level "")" || fail "bash completion of --log-level values"
grep -qx node <<<"$(complete_words mcp -- nod)" || fail "bash completion of the command after --"
if command -v zsh >/dev/null; then  # scripts/setup.sh installs it
  zdir=$root/usr/share/zsh/vendor-completions
  zsh -n "$zdir/_toolcache" || fail "zsh completion does not parse"
  # A real interactive zsh completes subcommands, options and choices.
  zcomplete() { timeout 30 zsh -f "$src/tests/install/zsh_complete.zsh" "$zdir" "$1"; }
  grep -q 'toolcache mcp $' <<<"$(zcomplete 'toolcache m')" || fail "zsh: toolcache m<TAB>: $(zcomplete 'toolcache m')"
  grep -q 'toolcache wrap --absolute $' <<<"$(zcomplete 'toolcache wrap --abs')" || fail "zsh: wrap --abs<TAB>"
  grep -qE 'critical +debug +error' <<<"$(zcomplete 'toolcache mcp --log-level ')" || fail "zsh: --log-level values"
fi
[ "$(head -1 "$root/usr/share/zsh/vendor-completions/_toolcache")" = '#compdef toolcache' ] ||
  fail "zsh completion header"
echo "PASS packaged binary: --version, mcp --help, man page and completions ($checked options) match --help"

# --- 5. wrap names the installed command; a wrapped session
node_dir=$(dirname "$(command -v node)")
cat >"$tmp/.mcp.json" <<JSON
{"mcpServers": {"memory": {"command": "node",
  "args": ["$peers/node_modules/@modelcontextprotocol/server-memory/dist/index.js"],
  "env": {"MEMORY_FILE_PATH": "$tmp/memory.jsonl"}}}}
JSON
command_of() { node -e 'console.log(require(process.argv[1]).mcpServers.memory.command)' "$1"; }
# Not on PATH: the build tree binary writes its absolute path and says so.
PATH="$tmp/empty:$node_dir:/usr/bin:/bin" "$TOOLCACHE_BIN" wrap --dry-run "$tmp/.mcp.json" \
  >"$tmp/dry.json" 2>"$tmp/dry.err"
[ "$(command_of "$tmp/dry.json")" = "$(realpath "$TOOLCACHE_BIN")" ] || fail "wrap off PATH: $(cat "$tmp/dry.json")"
grep -q "absolute path" "$tmp/dry.err" || fail "wrap off PATH says nothing: $(cat "$tmp/dry.err")"
cp "$tmp/.mcp.json" "$tmp/built.json"
PATH="$node_dir:/usr/bin:/bin" "$TOOLCACHE_BIN" wrap "$tmp/built.json" 2>/dev/null
# On PATH: the installed program writes its name, quietly.
export PATH="$root/usr/bin:$PATH"
toolcache wrap --dry-run --absolute "$tmp/.mcp.json" >"$tmp/abs.json" 2>"$tmp/abs.err"
[ "$(command_of "$tmp/abs.json")" = "$bin" ] || fail "wrap --absolute: $(cat "$tmp/abs.json")"
grep -q "absolute path" "$tmp/abs.err" && fail "wrap --absolute explains itself: $(cat "$tmp/abs.err")"
toolcache wrap "$tmp/.mcp.json" 2>"$tmp/wrap.err"
[ "$(command_of "$tmp/.mcp.json")" = toolcache ] || fail "wrap on PATH: $(cat "$tmp/.mcp.json")"
grep -q "absolute path" "$tmp/wrap.err" && fail "wrap on PATH: $(cat "$tmp/wrap.err")"
# A config wrapped from the build tree is retargeted to the installed name.
toolcache wrap "$tmp/built.json" 2>"$tmp/retarget.err"
[ "$(command_of "$tmp/built.json")" = toolcache ] || fail "retarget: $(cat "$tmp/built.json")"
grep -q "new toolcache command" "$tmp/retarget.err" || fail "retarget: $(cat "$tmp/retarget.err")"
echo "PASS wrap: 'toolcache' when on PATH, absolute path when asked or off PATH, retargets build paths"
[ -d "$peers/node_modules/@modelcontextprotocol/sdk" ] ||
  fail "npm peers missing; run scripts/setup.sh (npm ci in tests/peers)"
(cd "$peers" && node e2e_install.mjs "$tmp/.mcp.json" memory)

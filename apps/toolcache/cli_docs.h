// The man page and the bash and zsh completion scripts, generated from the
// CLI definition itself (the CLI::App tree main.cc builds): every visible
// subcommand, option, value type, choice list and description comes from
// there, so none of them can drift from `--help`. The build runs the hidden
// `toolcache --help-man` and `toolcache --completion bash|zsh`
// (apps/toolcache/CMakeLists.txt) and installs the output.
//
// Thread-safety: pure functions of the app tree. Hidden options and
// subcommands (empty group) are left out.
//
// Example:
//   std::cout << ManPage(root, "0.1.0");
//   std::cout << BashCompletion(root);   // complete -F _toolcache toolcache
#ifndef TOOLCACHE_APPS_TOOLCACHE_CLI_DOCS_H_
#define TOOLCACHE_APPS_TOOLCACHE_CLI_DOCS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

namespace toolcache::cli {

// A man(7) page, section 1, for `root` and all its visible subcommands.
std::string ManPage(const CLI::App& root, std::string_view version);

// A bash completion script (needs no bash-completion helpers): subcommands,
// options per subcommand, the choices of options with a fixed set, file
// names elsewhere, and commands after `--`.
std::string BashCompletion(const CLI::App& root);

// A zsh completion function file (`#compdef toolcache`) with the same
// content and the descriptions.
std::string ZshCompletion(const CLI::App& root);

// Registers the hidden `--help-man` and `--completion SHELL` options on
// `root`: each prints its text to stdout and ends the parse with
// CLI::Success (exit code 0).
void AddDocsOptions(CLI::App& root, std::string version);

}  // namespace toolcache::cli

#endif  // TOOLCACHE_APPS_TOOLCACHE_CLI_DOCS_H_

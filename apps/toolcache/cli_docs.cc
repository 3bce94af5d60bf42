// Invariants: every word of the output that names a subcommand, an option, a
// value type, a choice or a description is read from the CLI::App tree;
// the only fixed text is the page structure (section names, the exit codes
// of commands.h, where the docs are installed). Hidden options and
// subcommands (empty group) never appear.
#include "apps/toolcache/cli_docs.h"

#include <cctype>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "apps/toolcache/commands.h"

namespace toolcache::cli {
namespace {

// One option or positional of one command, as the docs need it.
struct OptionDoc {
  std::vector<std::string> names;  // "-o", "--output"; a positional: "input"
  bool positional = false;
  bool takes_value = false;
  bool required = false;
  bool many = false;                 // repeatable / a list
  std::string value;                 // "TEXT", "UINT", ... (without validators)
  std::string check;                 // the validators' text, e.g. "{a,b}"
  std::vector<std::string> choices;  // from an IsMember check
  std::string description;
};

// One command: the root (empty path) or a subcommand.
struct CommandDoc {
  std::vector<std::string> path;  // {"trace", "convert"}
  std::string description;
  std::string footer;
  std::vector<OptionDoc> options;
  std::vector<std::pair<std::string, std::string>> subcommands;  // name, desc
};

std::string Join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += sep;
    out += v[i];
  }
  return out;
}

OptionDoc Describe(const CLI::Option& o) {
  OptionDoc d;
  d.positional =
      o.get_positional() && o.get_lnames().empty() && o.get_snames().empty();
  if (d.positional) {
    d.names.push_back(o.get_name(true));
  } else {
    for (const std::string& s : o.get_snames()) d.names.push_back("-" + s);
    for (const std::string& l : o.get_lnames()) d.names.push_back("--" + l);
  }
  // Flags (add_flag) expect no value; CLI11 marks them with expected(0).
  d.takes_value = o.get_type_size() != 0 && o.get_expected_max() != 0;
  d.required = o.get_required();
  d.many = o.get_expected_max() > 1;
  // get_type_name() is the type and then the validators' descriptions
  // ("TEXT:{a,b}", "FLOAT:FLOAT in [0 - 3600]").
  const std::string type = o.get_type_name();
  const size_t colon = type.find(':');
  d.value = type.substr(0, colon);
  if (colon != std::string::npos) d.check = type.substr(colon + 1);
  const size_t open = d.check.find('{');
  const size_t close = d.check.find('}', open);
  if (open != std::string::npos && close != std::string::npos) {
    std::stringstream items(d.check.substr(open + 1, close - open - 1));
    std::string item;
    while (std::getline(items, item, ',')) {
      if (!item.empty()) d.choices.push_back(item);
    }
  }
  d.description = o.get_description();
  return d;
}

void Collect(const CLI::App& app, std::vector<std::string> path,
             std::vector<CommandDoc>* out) {
  CommandDoc c;
  c.path = path;
  c.description = app.get_description();
  c.footer = app.get_footer();
  for (const CLI::Option* o : app.get_options(
           [](const CLI::Option* o) { return !o->get_group().empty(); })) {
    c.options.push_back(Describe(*o));
  }
  const std::vector<const CLI::App*> subs = app.get_subcommands(
      [](const CLI::App* a) { return !a->get_group().empty(); });
  for (const CLI::App* s : subs) {
    c.subcommands.emplace_back(s->get_name(), s->get_description());
  }
  out->push_back(std::move(c));
  for (const CLI::App* s : subs) {
    std::vector<std::string> sub_path = path;
    sub_path.push_back(s->get_name());
    Collect(*s, sub_path, out);
  }
}

std::vector<CommandDoc> CollectAll(const CLI::App& root) {
  std::vector<CommandDoc> out;
  Collect(root, {}, &out);
  return out;
}

// ---- man page

// Escapes text for roff: backslashes, minus signs (so options copy-paste as
// ASCII '-'), and a leading '.' or '\'' that would start a request.
std::string Roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char ch : text) {
    if (line_start && (ch == '.' || ch == '\'')) out += "\\&";
    line_start = ch == '\n';
    if (ch == '\\') {
      out += "\\e";
    } else if (ch == '-') {
      out += "\\-";
    } else {
      out += ch;
    }
  }
  return out;
}

std::string ManUsage(const CommandDoc& c) {
  std::string s = "[\\fIOPTIONS\\fR]";
  for (const OptionDoc& o : c.options) {
    if (!o.positional) continue;
    std::string p = "\\fI" + Roff(o.names[0]) + "\\fR" + (o.many ? "..." : "");
    s += " " + (o.required ? p : "[" + p + "]");
  }
  if (!c.subcommands.empty()) s += " \\fICOMMAND\\fR";
  return s;
}

void ManOptions(const CommandDoc& c, std::ostream& out) {
  for (const OptionDoc& o : c.options) {
    out << ".TP\n";
    if (o.positional) {
      out << "\\fI" << Roff(o.names[0]) << "\\fR";
    } else {
      std::vector<std::string> names;
      for (const std::string& n : o.names) {
        names.push_back("\\fB" + Roff(n) + "\\fR");
      }
      out << Join(names, ", ");
      if (o.takes_value) {
        out << " \\fI"
            << Roff(o.choices.empty() ? o.value
                                      : "{" + Join(o.choices, ",") + "}")
            << "\\fR";
      }
    }
    if (o.many) out << " ...";
    out << "\n" << Roff(o.description);
    if (o.required) out << " (required)";
    if (!o.check.empty() && o.choices.empty())
      out << " [" << Roff(o.check) << "]";
    out << "\n";
  }
}

// ---- shell quoting

std::string SingleQuoted(std::string_view s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') {
      out += "'\\''";
    } else {
      out += ch;
    }
  }
  return out + "'";
}

std::string OneLine(std::string s) {
  for (char& ch : s) {
    if (ch == '\n' || ch == '\t') ch = ' ';
  }
  return s;
}

// ---- zsh

// Escapes text inside an _arguments "[description]" or a _describe item.
std::string ZshDescription(std::string_view s) {
  std::string out;
  for (char ch : OneLine(std::string(s))) {
    if (ch == '[' || ch == ']' || ch == ':' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

std::string ZshFunction(const std::vector<std::string>& path) {
  std::string name = "_toolcache__";
  for (const std::string& p : path) {
    for (char ch : p)
      name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    name += "__";
  }
  return name;
}

// The _arguments action for an option's value or a positional.
// Choice: a positional named "command" (what `toolcache mcp -- ...` runs)
// completes as a command line; every other value as a file name, which is
// what most of them are.
std::string ZshAction(const OptionDoc& o) {
  if (!o.choices.empty()) {
    std::string list;
    for (const std::string& c : o.choices) list += " " + ZshDescription(c);
    return "(" + list.substr(1) + ")";
  }
  if (o.positional && o.names[0] == "command") return "_normal";
  return "_files";
}

std::string ZshSpec(const OptionDoc& o) {
  const std::string desc = ZshDescription(o.description);
  if (o.positional) {
    return SingleQuoted(std::string(o.many ? "*" : "") +
                        (o.positional && o.names[0] == "command" ? ":" : "") +
                        ":" + ZshDescription(o.names[0]) + ":" + ZshAction(o));
  }
  std::string spec;
  if (o.names.size() > 1) {
    spec = SingleQuoted("(" + Join(o.names, " ") + ")") + "{" +
           Join(o.names, ",") + "}";
  } else {
    spec = (o.many ? "'*'" : "") + o.names[0];
  }
  std::string rest = "[" + desc + "]";
  if (o.takes_value) {
    rest += ":" + ZshDescription(o.value.empty() ? "value" : o.value) + ":" +
            ZshAction(o);
  }
  return spec + SingleQuoted(rest);
}

}  // namespace

std::string ManPage(const CLI::App& root, std::string_view version) {
  const std::vector<CommandDoc> commands = CollectAll(root);
  const CommandDoc& top = commands.front();
  // The app's own name is argv[0] once parsed (a path); the page is
  // toolcache's.
  const std::string name = "toolcache";
  std::string summary = top.description;
  const std::string prefix = name + ": ";
  if (summary.rfind(prefix, 0) == 0) summary.erase(0, prefix.size());
  std::string upper = name;
  for (char& ch : upper)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));

  std::ostringstream out;
  out << ".\\\" Generated by `" << name
      << " --help-man` from the CLI definition; do not edit.\n"
      << ".TH " << upper << " 1 \"\" \"" << Roff(name) << " " << Roff(version)
      << "\" \"User Commands\"\n"
      << ".SH NAME\n"
      << Roff(name) << " \\- " << Roff(summary) << "\n"
      << ".SH SYNOPSIS\n";
  for (const CommandDoc& c : commands) {
    if (c.path.empty()) continue;
    out << ".B " << Roff(name + " " + Join(c.path, " ")) << "\n"
        << ManUsage(c) << "\n.br\n";
  }
  out << ".SH DESCRIPTION\n" << Roff(top.description) << "\n";
  if (!top.footer.empty()) out << ".PP\n" << Roff(top.footer) << "\n";
  out << ".SH OPTIONS\n";
  ManOptions(top, out);
  out << ".SH COMMANDS\n";
  for (const CommandDoc& c : commands) {
    if (c.path.empty()) continue;
    out << ".SS \"" << Roff(name + " " + Join(c.path, " ")) << "\"\n"
        << ".B " << Roff(name + " " + Join(c.path, " ")) << "\n"
        << ManUsage(c) << "\n.PP\n"
        << Roff(c.description) << "\n";
    if (!c.footer.empty()) out << ".PP\n" << Roff(c.footer) << "\n";
    if (!c.subcommands.empty()) {
      out << ".PP\nCommands: ";
      std::vector<std::string> subs;
      for (const auto& [sub, desc] : c.subcommands) {
        subs.push_back("\\fB" + Roff(sub) + "\\fR");
      }
      out << Join(subs, ", ") << ".\n";
    }
    ManOptions(c, out);
  }
  out << ".SH \"EXIT STATUS\"\n"
      << ".TP\n"
      << kExitOk << "\nsuccess\n"
      << ".TP\n"
      << kExitFailure << "\nthe work failed\n"
      << ".TP\n"
      << kExitUsage
      << "\nbad usage or bad input (a message names the problem)\n"
      << ".PP\n"
      << Roff(name + " mcp")
      << " exits with the status of the server it runs.\n"
      << ".SH \"SEE ALSO\"\n"
      << "The documentation installed in /usr/share/doc/" << Roff(name)
      << " (or <prefix>/share/doc/" << Roff(name)
      << "): README.md and docs/.\n";
  return out.str();
}

std::string BashCompletion(const CLI::App& root) {
  const std::vector<CommandDoc> commands = CollectAll(root);
  std::ostringstream subs, opts, valued, choices;
  for (const CommandDoc& c : commands) {
    const std::string path = Join(c.path, " ");
    if (!c.subcommands.empty()) {
      std::vector<std::string> names;
      for (const auto& [n, d] : c.subcommands) names.push_back(n);
      subs << "    " << SingleQuoted(path) << ") echo "
           << SingleQuoted(Join(names, " ")) << " ;;\n";
    }
    std::vector<std::string> names;
    for (const OptionDoc& o : c.options) {
      if (o.positional) continue;
      for (const std::string& n : o.names) {
        names.push_back(n);
        if (o.takes_value)
          valued << "    " << SingleQuoted(path + "|" + n) << ") return 0 ;;\n";
        if (!o.choices.empty()) {
          choices << "    " << SingleQuoted(path + "|" + n) << ") echo "
                  << SingleQuoted(Join(o.choices, " ")) << " ;;\n";
        }
      }
    }
    opts << "    " << SingleQuoted(path) << ") echo "
         << SingleQuoted(Join(names, " ")) << " ;;\n";
  }
  std::ostringstream out;
  out << R"sh(# bash completion for toolcache, generated by `toolcache --completion bash`
# from the CLI definition; do not edit. Install it as
# <prefix>/share/bash-completion/completions/toolcache, or source it.

# Subcommands of the command path $1 ("" is the top level, "trace convert").
_toolcache_subcommands() {
  case $1 in
)sh" << subs.str()
      << R"sh(  esac
}
# Options of the command path $1.
_toolcache_options() {
  case $1 in
)sh" << opts.str()
      << R"sh(  esac
}
# True when option $2 of the command path $1 takes a value.
_toolcache_takes_value() {
  case "$1|$2" in
)sh" << valued.str()
      << R"sh(  esac
  return 1
}
# The fixed choices of option $2 of the command path $1, if any.
_toolcache_choices() {
  case "$1|$2" in
)sh" << choices.str()
      << R"sh(  esac
}
_toolcache() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local path="" i w sub after=0 value=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if ((value)); then value=0; continue; fi
    if ((after)); then after=$((after + 1)); continue; fi
    if [[ $w == -- ]]; then after=1; continue; fi
    if [[ $w == -* ]]; then
      [[ $w != *=* ]] && _toolcache_takes_value "$path" "$w" && value=1
      continue
    fi
    for sub in $(_toolcache_subcommands "$path"); do
      if [[ $w == "$sub" ]]; then path=${path:+$path }$w; break; fi
    done
  done
  COMPREPLY=()
  if ((after)); then
    # After `--` comes another program's command line: first its name.
    ((after == 1)) && mapfile -t COMPREPLY < <(compgen -c -- "$cur")
    return 0
  fi
  if ((value)); then
    local choices
    choices=$(_toolcache_choices "$path" "$prev")
    [[ -n $choices ]] && mapfile -t COMPREPLY < <(compgen -W "$choices" -- "$cur")
    return 0
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_toolcache_options "$path")" -- "$cur")
    return 0
  fi
  local subs
  subs=$(_toolcache_subcommands "$path")
  [[ -n $subs ]] && mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
  return 0
}
# An empty reply falls back to file names (-o default).
complete -o bashdefault -o default -F _toolcache toolcache
)sh";
  return out.str();
}

std::string ZshCompletion(const CLI::App& root) {
  const std::vector<CommandDoc> commands = CollectAll(root);
  std::ostringstream out;
  out << "#compdef toolcache\n"
      << "# zsh completion for toolcache, generated by `toolcache --completion "
         "zsh`\n"
      << "# from the CLI definition; do not edit. Install it as _toolcache in "
         "a\n"
      << "# directory of $fpath.\n\n";
  for (const CommandDoc& c : commands) {
    out << ZshFunction(c.path) << "() {\n";
    if (c.subcommands.empty()) {
      out << "  _arguments -s -S";
      for (const OptionDoc& o : c.options) out << " \\\n    " << ZshSpec(o);
      out << "\n}\n\n";
      continue;
    }
    out << "  local curcontext=$curcontext state line ret=1\n"
        << "  _arguments -C -s";
    for (const OptionDoc& o : c.options) out << " \\\n    " << ZshSpec(o);
    out << " \\\n    ': :->command' \\\n    '*:: :->args' && ret=0\n"
        << "  case $state in\n"
        << "    command)\n"
        << "      local -a commands=(";
    for (const auto& [n, d] : c.subcommands) {
      out << "\n        "
          << SingleQuoted(ZshDescription(n) + ":" + ZshDescription(d));
    }
    const std::string what = "toolcache" +
                             std::string(c.path.empty() ? "" : " ") +
                             Join(c.path, " ");
    out << ")\n      _describe -t commands " << SingleQuoted(what + " command")
        << " commands && ret=0 ;;\n"
        << "    args)\n"
        << "      case $words[1] in\n";
    for (const auto& [n, d] : c.subcommands) {
      std::vector<std::string> sub = c.path;
      sub.push_back(n);
      out << "        " << SingleQuoted(n) << ") " << ZshFunction(sub)
          << " && ret=0 ;;\n";
    }
    out << "      esac ;;\n  esac\n  return ret\n}\n\n";
  }
  out << ZshFunction({}) << " \"$@\"\n";
  return out.str();
}

void AddDocsOptions(CLI::App& root, std::string version) {
  root.add_flag_callback(
          "--help-man",
          [&root, version] {
            std::cout << ManPage(root, version);
            throw CLI::Success();
          },
          "print the man page (generated from this CLI)")
      ->group("");
  root.add_option_function<std::string>(
          "--completion",
          [&root](const std::string& shell) {
            std::cout << (shell == "zsh" ? ZshCompletion(root)
                                         : BashCompletion(root));
            throw CLI::Success();
          },
          "print the completion script for SHELL (bash, zsh)")
      ->check(CLI::IsMember({"bash", "zsh"}))
      ->group("");
}

}  // namespace toolcache::cli

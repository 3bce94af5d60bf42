// `toolcache classify`: prints the cacheability verdict, its reason and the
// features of every tool in a tools/list result, JSON Lines or CSV file;
// `--evaluate` scores the classifier against the readOnlyHint annotations.
//
// Every bad input (missing, unreadable or directory path, binary or non-UTF-8
// text, over the size limit, malformed JSON/CSV, --evaluate without ground
// truth) is reported before anything is printed on stdout: a message on
// stderr and exit 2.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apps/toolcache/commands.h"
#include "src/classify/eval_set.h"
#include "src/classify/tool_input.h"
#include "toolcache/classifier.h"
#include "toolcache/config.h"

namespace toolcache::cli {
namespace {

struct ClassifyArgs {
  std::string file;
  std::string config;
  std::string format = "table";
  std::string server;
  bool no_annotations = false;
  bool no_model = false;
  bool with_annotations = false;
  bool evaluate = false;
  std::vector<std::string> without;
  std::string eval_set;
  // The LLM feature extractor (overrides / sets `classifier.llm`).
  std::string llm_url;
  std::string llm_api;
  std::string llm_model;
  std::string llm_api_key_env;
  double llm_timeout_seconds = 0;
  bool llm_may_relax = false;
  bool no_llm = false;
};

// Applies --llm-* to config.classifier.llm. False (with a message on
// stderr) when the result is incomplete.
bool ApplyLlmFlags(const ClassifyArgs& args, Config* config) {
  if (args.no_llm) {
    config->classifier.llm.reset();
    return true;
  }
  const bool any = !args.llm_url.empty() || !args.llm_api.empty() ||
                   !args.llm_model.empty() || !args.llm_api_key_env.empty() ||
                   args.llm_timeout_seconds > 0 || args.llm_may_relax;
  if (!any) return true;
  LlmExtractorConfig l = config->classifier.llm.value_or(LlmExtractorConfig{});
  if (!args.llm_url.empty()) l.url = args.llm_url;
  if (!args.llm_api.empty()) l.api = args.llm_api;
  if (!args.llm_model.empty()) l.model = args.llm_model;
  if (!args.llm_api_key_env.empty()) l.api_key_env = args.llm_api_key_env;
  if (args.llm_timeout_seconds > 0)
    l.timeout_seconds = args.llm_timeout_seconds;
  if (args.llm_may_relax) l.may_relax = true;
  if (l.url.empty() || l.model.empty()) {
    std::cerr << "toolcache classify: the LLM extractor needs --llm-url and "
                 "--llm-model (or classifier.llm.url and .model in the "
                 "configuration)\n";
    return false;
  }
  config->classifier.llm = std::move(l);
  return true;
}

// Choice: tool-definition input is capped at 64 MiB (the GitHub server's
// 117 tools are ~60 KB, BFCL's 400 simple functions ~300 KB), so /dev/zero
// or a wrong multi-GB file fails fast instead of exhausting memory.
constexpr uint64_t kMaxInputBytes = uint64_t{64} << 20;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Reads `file` ("-" = stdin) into *text. On failure returns false with the
// reason (errno text, "is a directory", the size limit) in *error.
bool ReadInput(const std::string& file, std::string* text, std::string* error) {
  std::unique_ptr<std::FILE, FileCloser> owned;
  std::FILE* in = stdin;
  if (file != "-") {
    owned.reset(std::fopen(file.c_str(), "rb"));
    if (!owned) {
      *error = std::strerror(errno);
      return false;
    }
    in = owned.get();
  }
  // fopen() succeeds on a directory on Linux; reading it then fails.
  struct stat st {};
  if (fstat(fileno(in), &st) == 0 && S_ISDIR(st.st_mode)) {
    *error = "is a directory, not a file of tool definitions";
    return false;
  }
  bool too_long = false;
  if (!ReadCapped(in, kMaxInputBytes, text, &too_long, error)) return false;
  if (too_long) {
    *error = "larger than the 64 MiB limit for tool definitions";
    return false;
  }
  return true;
}

std::string Fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

nlohmann::ordered_json VerdictJson(const ToolInfo& tool, const Verdict& v) {
  nlohmann::ordered_json j;
  j["name"] = tool.name;
  if (!tool.server.empty()) j["server"] = tool.server;
  j["cacheable"] = v.cacheable;
  j["reason"] = VerdictReasonName(v.reason);
  j["request_type"] = RequestTypeName(v.request_type);
  j["ttl_seconds"] = v.ttl_seconds;
  j["parameter_category"] = v.parameter_category;
  j["source"] = FeatureSourceName(v.source);
  j["detail"] = v.detail;
  return j;
}

void PrintTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    width.resize(std::max(width.size(), r.size()));
    for (size_t i = 0; i < r.size(); ++i) {
      width[i] = std::max(width[i], r[i].size());
    }
  }
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size())
        line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    std::cout << line << "\n";
  }
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + n;
  return out.empty() ? "-" : out;
}

// `--eval-set DIR`: scores the heuristic (annotations stripped) per half of
// a labelled set (src/classify/eval_set.h).
int RunEvalSet(const ClassifyArgs& args, const Config& config) {
  Result<std::vector<classify::SetTool>> set =
      classify::LoadEvalSet(args.eval_set);
  if (!set.ok()) {
    std::cerr << "toolcache classify: " << set.status().message() << "\n";
    return kExitUsage;
  }
  const Classifier classifier(
      config, ClassifierOptions{.use_annotations = args.with_annotations,
                                .use_learned_model = !args.no_model,
                                .llm_wait = true});
  const std::vector<classify::HalfReport> reports =
      classify::EvaluateSet(classifier, *set, args.with_annotations);
  // The same set as the MCP faces see it (annotations trusted), side by
  // side with the heuristic alone, unless that is what was asked.
  std::vector<classify::HalfReport> trusted;
  if (!args.with_annotations) {
    const Classifier with(config,
                          ClassifierOptions{.use_annotations = true,
                                            .use_learned_model = !args.no_model,
                                            .use_llm = false});
    trusted = classify::EvaluateSet(with, *set, true);
  }
  auto trusted_of =
      [&](const classify::HalfReport& h) -> const classify::HalfReport* {
    for (const classify::HalfReport& t : trusted) {
      if (t.half == h.half) return &t;
    }
    return nullptr;
  };
  if (args.format == "json") {
    for (const classify::HalfReport& h : reports) {
      nlohmann::ordered_json j;
      j["half"] = h.half;
      j["servers"] = h.servers;
      j["tools"] = h.tools;
      j["reads"] = h.reads;
      j["writes"] = h.writes;
      j["writes_informational"] = h.writes_informational;
      j["writes_cacheable"] = h.writes_cacheable;
      j["read_recall"] = h.ReadRecall();
      j["reads_cacheable"] = h.reads_cacheable;
      j["reads_lost"] = h.reads_lost;
      j["ttl_classes"] = h.ttl_classes;
      if (const classify::HalfReport* t = trusted_of(h)) {
        j["annotations_trusted"] = {{"writes_cacheable", t->writes_cacheable},
                                    {"read_recall", t->ReadRecall()},
                                    {"reads_cacheable", t->reads_cacheable}};
      }
      std::cout << j.dump() << "\n";
    }
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows = {
      {"HALF", "SERVERS", "TOOLS", "READS", "WRITES", "WRITES-INFO",
       "WRITES-CACHEABLE", "READ-RECALL", "READS-CACHEABLE", "TTL-CLASSES",
       "ANN:WRITES-CACHEABLE", "ANN:READ-RECALL"}};
  for (const classify::HalfReport& h : reports) {
    std::string ttl;
    for (const auto& [name, n] : h.ttl_classes) {
      ttl += (ttl.empty() ? "" : " ") + name + "=" + std::to_string(n);
    }
    rows.push_back({h.half, std::to_string(h.servers), std::to_string(h.tools),
                    std::to_string(h.reads), std::to_string(h.writes),
                    std::to_string(h.writes_informational.size()),
                    std::to_string(h.writes_cacheable.size()),
                    Fixed(h.ReadRecall(), 3),
                    std::to_string(h.reads_cacheable) + " (" +
                        Fixed(h.ReadCacheableShare(), 3) + ")",
                    ttl.empty() ? "-" : ttl});
    const classify::HalfReport* t = trusted_of(h);
    rows.back().push_back(t ? std::to_string(t->writes_cacheable.size()) : "-");
    rows.back().push_back(t ? Fixed(t->ReadRecall(), 3) : "-");
  }
  PrintTable(rows);
  for (const classify::HalfReport& h : reports) {
    std::cout << "\n"
              << h.half << ": writes called INFORMATIONAL: "
              << JoinNames(h.writes_informational) << "\n"
              << h.half
              << ": writes cacheable: " << JoinNames(h.writes_cacheable) << "\n"
              << h.half << ": reads called COMMAND: " << JoinNames(h.reads_lost)
              << "\n";
    if (const classify::HalfReport* t = trusted_of(h)) {
      std::cout << h.half << ": writes cacheable with annotations trusted: "
                << JoinNames(t->writes_cacheable) << "\n";
    }
  }
  return kExitOk;
}

int Run(const ClassifyArgs& args) {
  // Logs (the LLM extractor's failures) go to stderr: stdout is the output.
  SetUpLogging("toolcache classify", "", "warn");
  Config config;
  if (!args.config.empty()) {
    Result<Config> c = LoadConfigFile(args.config);
    if (!c.ok()) {
      std::cerr << "toolcache classify: " << c.status().message() << "\n";
      return kExitUsage;
    }
    config = std::move(*c);
  }
  if (!ApplyLlmFlags(args, &config)) return kExitUsage;
  if (!args.eval_set.empty()) {
    if (!args.file.empty()) {
      std::cerr << "toolcache classify: give either FILE or --eval-set DIR, "
                   "not both\n";
      return kExitUsage;
    }
    return RunEvalSet(args, config);
  }
  if (args.file.empty()) {
    std::cerr << "toolcache classify: FILE (or --eval-set DIR) is required\n";
    return kExitUsage;
  }
  std::string text;
  std::string error;
  const std::string source = args.file == "-" ? "<stdin>" : args.file;
  if (!ReadInput(args.file, &text, &error)) {
    std::cerr << "toolcache classify: cannot read '" << source << "': " << error
              << "\n";
    return kExitUsage;
  }
  Result<std::vector<classify::LabeledTool>> tools =
      classify::ParseToolDefinitions(text, source);
  if (!tools.ok()) {
    std::cerr << "toolcache classify: " << tools.status().message() << "\n";
    return kExitUsage;
  }
  for (classify::LabeledTool& t : *tools) {
    if (!args.server.empty() && t.info.server.empty()) {
      t.info.server = args.server;
    }
    for (const std::string& field : args.without) {
      if (field == "name") t.info.name = "tool";
      if (field == "title") t.info.title.clear();
      if (field == "description") t.info.description.clear();
      if (field == "schema") t.info.input_schema_json.clear();
    }
  }
  const Classifier classifier(
      config, ClassifierOptions{
                  .use_annotations = !(args.no_annotations || args.evaluate),
                  .use_learned_model = !args.no_model,
                  .llm_wait = true});
  // Evaluated before any output, so input without ground truth fails fast.
  classify::Evaluation e;
  if (args.evaluate) {
    e = classify::Evaluate(classifier, *tools);
    if (e.command_positive.total() == 0) {
      std::cerr << "toolcache classify: --evaluate needs the ground-truth "
                   "column readOnlyHint (a CSV column 'readOnlyHint', or "
                   "annotations.readOnlyHint in JSON), but none of the "
                << tools->size() << " tools in '" << source
                << "' has a value for it\n";
      return kExitUsage;
    }
    std::cerr << "toolcache classify: --evaluate: readOnlyHint is the ground "
                 "truth, so annotations are ignored when classifying\n";
  }

  const bool json = args.format == "json";
  std::vector<std::vector<std::string>> rows;
  if (!json) {
    rows.push_back({"NAME", "CACHEABLE", "REASON", "TYPE", "TTL", "CATEGORY",
                    "SOURCE", "DETAIL"});
  }
  for (const classify::LabeledTool& t : *tools) {
    const Verdict v = classifier.Classify(t.info);
    if (json) {
      nlohmann::ordered_json j = VerdictJson(t.info, v);
      if (args.evaluate) {
        if (t.info.annotations && t.info.annotations->read_only) {
          const bool command = !*t.info.annotations->read_only;
          j["expected"] = command ? "COMMAND" : "INFORMATIONAL";
          j["correct"] = command == (v.request_type == RequestType::kCommand);
        } else {
          j["expected"] = nullptr;
        }
      }
      std::cout << j.dump() << "\n";
    } else {
      std::ostringstream ttl;
      ttl << v.ttl_seconds;
      rows.push_back({t.info.name, v.cacheable ? "yes" : "no",
                      std::string(VerdictReasonName(v.reason)),
                      std::string(RequestTypeName(v.request_type)), ttl.str(),
                      v.parameter_category.empty() ? "-" : v.parameter_category,
                      std::string(FeatureSourceName(v.source)), v.detail});
    }
  }
  if (!json) PrintTable(rows);
  if (!args.evaluate) return kExitOk;

  const classify::Confusion& c = e.command_positive;
  // The same matrix with INFORMATIONAL as the positive class.
  const classify::Confusion info{
      .tp = c.tn, .fp = c.fn, .tn = c.tp, .fn = c.fp};
  if (json) {
    nlohmann::ordered_json j;
    auto metrics = [](const classify::Confusion& m) {
      return nlohmann::ordered_json{{"accuracy", m.Accuracy()},
                                    {"precision", m.Precision()},
                                    {"recall", m.Recall()},
                                    {"f1", m.F1()}};
    };
    j["evaluation"] = {
        {"evaluated", c.total()},
        {"skipped", e.skipped},
        {"positive_class", "COMMAND"},
        {"tp", c.tp},
        {"fp", c.fp},
        {"tn", c.tn},
        {"fn", c.fn},
        {"command_positive", metrics(c)},
        {"informational_positive", metrics(info)},
        {"costly_errors", e.costly.size()},
        {"costly", e.costly},
        {"lost", e.lost},
    };
    std::cout << j.dump() << "\n";
    return kExitOk;
  }
  std::cout << "\nEvaluated " << c.total()
            << " tools against readOnlyHint (true = INFORMATIONAL, false = "
               "COMMAND); "
            << e.skipped << " without the hint skipped.\n\n";
  PrintTable(
      {{"", "predicted COMMAND", "predicted INFORMATIONAL"},
       {"actual COMMAND", std::to_string(c.tp), std::to_string(c.fn)},
       {"actual INFORMATIONAL", std::to_string(c.fp), std::to_string(c.tn)}});
  std::cout << "\n";
  PrintTable(
      {{"Request type (positive class)", "Accuracy", "Precision", "Recall",
        "F1"},
       {"COMMAND", Fixed(c.Accuracy(), 3), Fixed(c.Precision(), 3),
        Fixed(c.Recall(), 3), Fixed(c.F1(), 3)},
       {"INFORMATIONAL", Fixed(info.Accuracy(), 3), Fixed(info.Precision(), 3),
        Fixed(info.Recall(), 3), Fixed(info.F1(), 3)}});
  std::cout << "\nCostly errors (COMMAND read as INFORMATIONAL): "
            << e.costly.size();
  for (const std::string& n : e.costly) std::cout << " " << n;
  std::cout << "\nLost opportunities (INFORMATIONAL read as COMMAND): "
            << e.lost.size();
  for (const std::string& n : e.lost) std::cout << " " << n;
  std::cout << "\n";
  return kExitOk;
}

}  // namespace

Command AddClassifyCommand(CLI::App& root) {
  auto args = std::make_shared<ClassifyArgs>();
  Command c;
  c.app = root.add_subcommand(
      "classify",
      "Print the cacheability verdict, reason and features of tool "
      "definitions (MCP tools/list JSON, JSON Lines or CSV)");
  c.app->add_option("file", args->file,
                    "Tool definitions: tools/list result or JSON-RPC response, "
                    "JSON Lines, or CSV with a name/tool column; '-' = stdin");
  c.app->add_option("--config", args->config, "YAML configuration file");
  c.app->add_option("--format", args->format, "Output: table (default) or json")
      ->check(CLI::IsMember({"table", "json"}));
  c.app->add_option("--server", args->server,
                    "Server name for per-server configuration");
  c.app->add_flag("--no-annotations", args->no_annotations,
                  "Ignore MCP tool annotations");
  c.app->add_flag("--no-model", args->no_model,
                  "Leave out the learned write veto (the heuristic alone; "
                  "used to train the model)");
  c.app->add_flag("--with-annotations", args->with_annotations,
                  "With --eval-set: keep and trust the captured MCP "
                  "annotations (default: stripped, the heuristic alone)");
  c.app->add_flag("--evaluate", args->evaluate,
                  "Score the request type against readOnlyHint (annotations "
                  "are then ignored for classification)");
  c.app
      ->add_option("--without", args->without,
                   "Blank a field before classifying (ablation): name, "
                   "title, description, schema; repeatable")
      ->check(CLI::IsMember({"name", "title", "description", "schema"}));
  c.app->add_option(
      "--eval-set", args->eval_set,
      "Score the heuristic (annotations stripped) on a labelled set: a "
      "folder with split.csv, labels.csv and <server>.json (see "
      "docs/CLASSIFY.md)");
  c.app->add_option("--llm-url", args->llm_url,
                    "LLM feature extractor: the provider's origin (Anthropic "
                    "Messages or OpenAI Chat Completions); sets "
                    "classifier.llm.url");
  c.app->add_option("--llm-model", args->llm_model,
                    "LLM feature extractor: the model");
  c.app
      ->add_option("--llm-api", args->llm_api,
                   "LLM feature extractor: anthropic (default) or openai")
      ->check(CLI::IsMember({"anthropic", "openai"}));
  c.app->add_option("--llm-api-key-env", args->llm_api_key_env,
                    "LLM feature extractor: environment variable holding "
                    "the API key");
  c.app
      ->add_option("--llm-timeout", args->llm_timeout_seconds,
                   "LLM feature extractor: seconds per call (default 10)")
      ->check(CLI::Range(0.001, 600.0));
  c.app->add_flag("--llm-may-relax", args->llm_may_relax,
                  "LLM feature extractor: let an INFORMATIONAL answer outrank "
                  "weak evidence (default: it may only veto or shorten "
                  "the TTL)");
  c.app->add_flag("--no-llm", args->no_llm,
                  "Leave out the LLM feature extractor even when the "
                  "configuration has classifier.llm");
  c.run = [args] { return Run(*args); };
  return c;
}

}  // namespace toolcache::cli

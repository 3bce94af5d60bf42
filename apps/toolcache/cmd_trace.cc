// `toolcache trace`: convert real agent transcripts and benchmark data to the
// JSON Lines trace format, and check trace files.
//
//   toolcache trace convert --from openai-chat|anthropic|bfcl|llmcompiler|
//                                  llmcompiler-movie|llmcompiler-parallelqa
//                           [--tool-table FILE] [--bfcl-func-docs DIR]
//                           [--bfcl-questions FILE] [-o OUT] INPUT|-
//   toolcache trace convert --to bin [--from auto|jsonl|csv|oracle-general]
//                           -o OUT INPUT
//   toolcache trace check FILE|-
//
// convert writes the trace to stdout (or OUT) and a summary of what it
// assigned or dropped to stderr. check validates a trace and prints counts.
// Bad input -> message naming the place + exit 2.
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "apps/toolcache/commands.h"
#include "src/sim/trace_convert.h"
#include "src/sim/trace_formats.h"
#include "toolcache/trace.h"

namespace toolcache::cli {
namespace {

struct TraceFlags {
  std::string from;
  std::string tool_table;
  std::string bfcl_docs;
  std::string bfcl_questions;
  std::string output;
  std::string input;
  std::string check_input;
  std::string to = "jsonl";
};

// --to bin: a trace (JSON Lines, or libCacheSim's CSV / oracleGeneral) into
// toolcache's binary format (docs/TRACES.md, "Binary trace format").
int RunConvertToBinary(const TraceFlags& f) {
  Result<sim::TraceFormat> format =
      sim::ParseTraceFormat(f.from.empty() ? "auto" : f.from);
  if (!format.ok()) {
    std::cerr << "toolcache trace convert: --from with --to bin: "
              << format.status().message() << "\n";
    return kExitUsage;
  }
  if (f.output.empty() || f.output == "-" || f.input == "-") {
    std::cerr << "toolcache trace convert: --to bin needs an input file and "
                 "-o OUT (a binary trace is not written to stdout)\n";
    return kExitUsage;
  }
  Result<uint64_t> n = sim::ConvertToBinaryTrace(f.input, *format, f.output);
  if (!n.ok()) {
    std::cerr << "toolcache trace convert: " << n.status().message() << "\n";
    return n.status().code() == StatusCode::kUnavailable ? kExitFailure
                                                         : kExitUsage;
  }
  std::cerr << "toolcache trace convert: wrote " << *n << " records to "
            << f.output << "\n";
  return kExitOk;
}

int RunConvert(const TraceFlags& f) {
  if (f.to == "bin") return RunConvertToBinary(f);
  if (f.to != "jsonl") {
    std::cerr << "toolcache trace convert: --to must be jsonl or bin, got '"
              << f.to << "'\n";
    return kExitUsage;
  }
  if (f.from.empty()) {
    std::cerr << "toolcache trace convert: --from is required\n";
    return kExitUsage;
  }
  Result<TraceSource> source = ParseTraceSource(f.from);
  if (!source.ok()) {
    std::cerr << "toolcache trace convert: " << source.status().message()
              << "\n";
    return kExitUsage;
  }
  ConvertOptions opts;
  if (!f.tool_table.empty()) {
    Result<ToolTable> table = ToolTable::Load(f.tool_table);
    if (!table.ok()) {
      std::cerr << "toolcache trace convert: --tool-table: "
                << table.status().message() << "\n";
      return kExitUsage;
    }
    opts.tool_table = std::make_shared<const ToolTable>(std::move(*table));
  }
  opts.bfcl_func_doc_dir = f.bfcl_docs;
  opts.bfcl_questions_path = f.bfcl_questions;
  std::ifstream file;
  std::istream* in = &std::cin;
  std::string name = "<stdin>";
  if (f.input != "-") {
    file.open(f.input, std::ios::binary);
    if (!file) {
      std::cerr << "toolcache trace convert: cannot open input '" << f.input
                << "'\n";
      return kExitUsage;
    }
    in = &file;
    name = f.input;
    opts.input_path = f.input;
  }
  Result<ConvertResult> r = ConvertTrace(*source, *in, name, opts);
  if (!r.ok()) {
    std::cerr << "toolcache trace convert: " << r.status().message() << "\n";
    return kExitUsage;
  }
  if (f.output.empty() || f.output == "-") {
    WriteTrace(r->trace, std::cout);
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "toolcache trace convert: write to stdout failed\n";
      return kExitFailure;
    }
  } else {
    std::ofstream out(f.output, std::ios::binary | std::ios::trunc);
    if (!out) {
      std::cerr << "toolcache trace convert: cannot write '" << f.output
                << "'\n";
      return kExitFailure;
    }
    WriteTrace(r->trace, out);
    out.close();
    if (!out) {
      std::cerr << "toolcache trace convert: write to '" << f.output
                << "' failed\n";
      return kExitFailure;
    }
  }
  std::cerr << r->report.Summary();
  return kExitOk;
}

int RunCheck(const TraceFlags& f) {
  Result<Trace> t = f.check_input == "-" ? ReadTrace(std::cin, "<stdin>")
                                         : ReadTraceFile(f.check_input);
  if (!t.ok()) {
    std::cerr << "toolcache trace check: " << t.status().message() << "\n";
    return kExitUsage;
  }
  std::set<std::string> sessions, tools, keys, tenants;
  uint64_t commands = 0, informational = 0, errors = 0, bytes = 0;
  for (const TraceRecord& r : t->records) {
    sessions.insert(r.session);
    tenants.insert(r.tenant);
    tools.insert(r.tool);
    keys.insert(r.tenant + '\0' + r.tool + '\0' + r.arguments);
    if (r.request_type == RequestType::kCommand) ++commands;
    if (r.request_type == RequestType::kInformational) ++informational;
    if (r.error) ++errors;
    bytes += r.result_size;
  }
  const size_t n = t->records.size();
  std::cout << "records: " << n << "\nsessions: " << sessions.size()
            << "\ntenants: " << tenants.size() << "\ntools: " << tools.size()
            << "\ndistinct calls (tenant + tool + arguments): " << keys.size()
            << "\nrepeated calls: " << (n - keys.size())
            << "\nrequest_type COMMAND: " << commands
            << "\nrequest_type INFORMATIONAL: " << informational
            << "\nrequest_type unknown: " << (n - commands - informational)
            << "\nerror results: " << errors << "\nresult bytes: " << bytes
            << "\n";
  return kExitOk;
}

}  // namespace

Command AddTraceCommand(CLI::App& root) {
  auto flags = std::make_shared<TraceFlags>();
  Command c;
  c.app = root.add_subcommand(
      "trace",
      "Convert agent transcripts / benchmark data to traces; check traces");
  c.app->require_subcommand(1);
  CLI::App* convert = c.app->add_subcommand(
      "convert",
      "Convert INPUT to the JSON Lines trace format (docs/TRACES.md) on "
      "stdout; a summary goes to stderr");
  convert->add_option(
      "--from", flags->from,
      "Source format: openai-chat, anthropic, bfcl, llmcompiler "
      "(auto), llmcompiler-movie, llmcompiler-parallelqa; with "
      "--to bin: auto (default), jsonl, csv, oracle-general");
  convert->add_option("--to", flags->to,
                      "Output: jsonl (default) or bin (toolcache's binary "
                      "trace format; needs -o)");
  convert->add_option(
      "--tool-table", flags->tool_table,
      "JSON or CSV table (tool,latency,cost[,ttl][,result_size]) "
      "for calls whose source lacks them; default: Table 1 of "
      "the paper");
  convert->add_option("--bfcl-func-docs", flags->bfcl_docs,
                      "BFCL function-doc directory (default: "
                      "multi_turn_func_doc/ beside INPUT)");
  convert->add_option(
      "--bfcl-questions", flags->bfcl_questions,
      "BFCL multi-turn question file with each episode's initial_config "
      "(default: BFCL_v3_multi_turn_base.json beside INPUT; docs/TRACES.md)");
  convert->add_option("-o,--output", flags->output,
                      "Write the trace here instead of stdout");
  convert->add_option("input", flags->input, "Input file, or - for stdin")
      ->required();
  CLI::App* check = c.app->add_subcommand(
      "check", "Validate a trace file and print its counts");
  check->add_option("input", flags->check_input, "Trace file, or - for stdin")
      ->required();
  c.run = [flags, convert, check] {
    if (convert->parsed()) return RunConvert(*flags);
    if (check->parsed()) return RunCheck(*flags);
    return kExitUsage;
  };
  return c;
}

}  // namespace toolcache::cli

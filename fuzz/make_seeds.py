#!/usr/bin/env python3
"""Writes the seed inputs of every fuzz target into fuzz/corpus/<target>/.

Seeds come from the repository's test data (tests/data: RFC 8785 inputs,
traces, tool tables), from the raw strings of unit tests (config_test.cc,
session_test.cc) and from the small hand-written LLM API messages below.
Files are named seed-*; inputs the fuzzer finds are added beside them by
fuzz/run.sh (merged, minimal) and regression inputs are named crash-*.
Idempotent: rewrites the seed-* files only.
"""
import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
SEP = b"\xff"


def read(*parts):
    with open(os.path.join(ROOT, *parts), "rb") as f:
        return f.read()


def raw_strings(path):
    """The C++ raw string literals R"(...)" of a source file."""
    text = read(path).decode("utf-8")
    return [s.encode("utf-8") for s in re.findall(r'R"\((.*?)\)"', text, re.S)]


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def canonical_json():
    jcs = os.path.join("tests", "data", "jcs", "input")
    for name in sorted(os.listdir(os.path.join(ROOT, jcs))):
        write("canonical_json", name, read(jcs, name))
    write("canonical_json", "key-pair",
          SEP.join([b'{"b":1.0,"a":[1e2,"\\u00e9"],"_meta":{"t":1}}',
                    b'{ "a" : [100, "\xc3\xa9"], "b" : 1 }', b"", b"fs",
                    b"read_file", b"", b"fs", b"read_file"]))
    write("canonical_json", "key-exact",
          SEP.join([b'{"n":9007199254740993}', b'{"n":9007199254740992}',
                    b"u", b"s", b"t", b"u", b"s", b"t"]))
    write("canonical_json", "numbers",
          b'[0,-0,1e21,1e-7,5e-324,1.7976931348623157e308,0.1,'
          b'123456789012345678901234567890,-1.5e-10,2e-7,1E+2]')


def config():
    for i, s in enumerate(raw_strings("src/config/config_test.cc")):
        if b":" in s:
            write("config", "test-%02d" % i, s.lstrip(b"\n"))


def trace_convert():
    t = ("tests", "data", "traces")
    write("trace_convert", "openai-json", b"\x00" + read(*t, "openai_chat.json"))
    write("trace_convert", "openai-jsonl", b"\x00" + read(*t, "openai_chat.jsonl"))
    write("trace_convert", "openai-bad", b"\x00" + read(*t, "openai_bad_arguments.json"))
    write("trace_convert", "anthropic", b"\x01" + read(*t, "anthropic_messages.jsonl"))
    write("trace_convert", "claude-code", b"\x01" + read(*t, "claude_code_session.jsonl"))
    for name in ("BFCL_v3_simple.json", "BFCL_v3_multi_turn_base.json"):
        first = read(*t, "bfcl", name).split(b"\n")[0]
        write("trace_convert", "bfcl-" + name.split("_")[-1], b"\x02" + first)
    movie = json.loads(read(*t, "llmcompiler", "movie_recommendations_formatted.json"))
    qa = json.loads(read(*t, "llmcompiler", "parallelqa_dataset.json"))
    write("trace_convert", "llmcompiler-movie",
          b"\x03" + json.dumps(movie[:2]).encode())
    write("trace_convert", "llmcompiler-qa", b"\x04" + json.dumps(qa[:2]).encode())
    write("trace_convert", "llmcompiler-auto", b"\x05" + json.dumps(qa[:1]).encode())
    write("trace_convert", "tool-table-csv", b"\x06" + read(*t, "tool_table.csv"))
    write("trace_convert", "tool-table-json", b"\x06" + read(*t, "tool_table.json"))
    write("trace_convert", "python-call",
          b"\x07" + b"calculate_triangle_area(base=10, height=5.5, unit='cm', "
          b"opts={'a': [1, 2]}, flag=True)")
    write("trace_convert", "trace-jsonl", b"\x08" + read(*t, "valid.jsonl"))


MCP_LINES = [
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}',
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    b'{"jsonrpc":"2.0","id":"tl","method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/a","_meta":{"progressToken":1}}}}',
    b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"caf\\u00e9 1.0"}],"structuredContent":{"n":1.0}}}',
    b'{"jsonrpc":"2.0","id":"s1","result":{"roots":[]},"_meta":{"k":1}}',
    b'[{"jsonrpc":"2.0","id":3,"method":"ping"}]',
    b' {"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"no"}} ',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"x"}}',
    b'{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":"\\u0074l","method":"ping","extra":true}',
]


def mcp():
    write("mcp_scan", "lines", b"\x40" + b"\n".join(MCP_LINES) + b"\n" + SEP + b"\x03\x11\x40")
    write("mcp_scan", "crlf", b"\x10" + b"\r\n".join(MCP_LINES[:3]) + SEP + b"\x01")
    for i, line in enumerate(MCP_LINES):
        write("mcp_scan", "line-%02d" % i, b"\x7f" + line + SEP + b"\x05")
    # mcp_session programs (see mcp_session_fuzz.cc): 0/1 client template
    # (id, kind, tool, args), 2 raw client line, 3 client line too long,
    # 4/5 server answer (index, how), 6 server message, 7 time.
    listing = bytes([0, 0, 4, 4, 0, 3])
    call = lambda id_, tool, args: bytes([0, id_, 0, tool, args])
    answer = bytes([4, 0, 3])
    write("mcp_session", "hit",
          listing + call(0, 0, 0) + answer + call(1, 0, 2) + answer + call(2, 0, 3))
    write("mcp_session", "flight",
          listing + call(0, 0, 0) + call(1, 0, 0) + call(0, 0, 0) + answer + answer + answer)
    write("mcp_session", "commands",
          listing + call(0, 1, 0) + answer + call(1, 2, 0) + call(1, 2, 0) + answer + answer)
    write("mcp_session", "ids",
          listing + call(9, 0, 6) + call(10, 0, 6) + call(4, 0, 4) + call(5, 0, 5) + answer + answer + answer + answer)
    write("mcp_session", "cancel",
          listing + call(0, 0, 0) + call(1, 0, 0) + bytes([0, 0, 7]) + answer)
    write("mcp_session", "list-changed",
          listing + call(0, 0, 0) + answer + bytes([6, 0]) + answer + call(1, 0, 0) + answer)
    write("mcp_session", "roots",
          listing + bytes([6, 3, 0, 15, 9, 0]) + call(0, 0, 0) + answer + bytes([7, 255]) + call(1, 0, 0))
    write("mcp_session", "malformed",
          listing + call(0, 0, 0) + bytes([4, 0, 2]) + call(1, 0, 0) + bytes([4, 0, 1])
          + bytes([2]) + b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":' + SEP
          + bytes([3, 0, 0, 0, 0]))
    write("mcp_session", "raw",
          listing + bytes([2]) + MCP_LINES[3] + SEP + answer + bytes([2]) + MCP_LINES[3] + SEP)


ANTHROPIC_REQ = raw_strings("src/llm/wire_test.cc")[0]
CHAT_REQ = (b'{"model":"gpt-4o","stream":true,"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object"}}}],'
            b'"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}}]},'
            b'{"role":"tool","tool_call_id":"call_1","content":"sunny"}]}')
RESPONSES_REQ = (b'{"model":"gpt-5","instructions":"be brief","previous_response_id":"resp_1","tools":[{"type":"function","name":"lookup","parameters":{"type":"object"}}],'
                 b'"input":[{"type":"function_call","call_id":"c1","name":"lookup","arguments":"{\\"q\\":1}"},{"type":"function_call_output","call_id":"c1","output":"42"},'
                 b'{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"x"}]}]}')
ANTHROPIC_RESP = b'{"content":[{"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"/a.txt"}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":3}}'
CHAT_RESP = b'{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"call_3","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}'
RESPONSES_RESP = b'{"status":"completed","output":[{"type":"function_call","call_id":"c2","name":"lookup","arguments":"{\\"q\\":1}"}],"usage":{"input_tokens":1,"output_tokens":2}}'
ANTHROPIC_SSE = (
    b'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":5}}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"file_path\\":"}}\n\n'
    b'event: ping\ndata: {"type": "ping"}\n\n'
    b'event: content_block_delta\r\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\\"/a\\"}"}}\r\n\r\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":3}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
CHAT_SSE = (
    b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}\n\n'
    b': keep-alive\n\n'
    b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"city\\":\\"Paris\\"}"}}]},"finish_reason":"tool_calls"}]}\r\r'
    b'data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":1}}}\n\n'
    b'data: [DONE]\n\n')
RESPONSES_SSE = (
    b'\xef\xbb\xbfevent: response.output_item.done\ndata: {"type":"response.output_item.done","item":{"type":"function_call","call_id":"c1","name":"lookup","arguments":"{\\"q\\":1}"}}\n\n'
    b'event: response.completed\nid: 7\ndata: {"type":"response.completed",\ndata: "response":{"usage":{"input_tokens":1,"output_tokens":2}}}\n\n')


def llm():
    apis = [(ANTHROPIC_REQ, ANTHROPIC_RESP, ANTHROPIC_SSE),
            (CHAT_REQ, CHAT_RESP, CHAT_SSE),
            (RESPONSES_REQ, RESPONSES_RESP, RESPONSES_SSE)]
    for api, (req, resp, sse) in enumerate(apis):
        write("llm_wire", "api%d" % api,
              bytes([api]) + SEP.join([req, resp, sse, b"\x07\x0b\x40", req, b"", b"", b""]))
        write("sse", "api%d" % api, SEP.join([sse, b"\x03\x05\x01\x80", b"http://127.0.0.1:8080/v1"]))
    write("sse", "urls", SEP.join([b"data: x\r\n\r", b"\x01", b"https://[::1]:8443/a/b/"]))
    write("sse", "fields", SEP.join([b"retry: 5\nid\nevent:\ndata\ndata:  two\n:c\n\nx", b"", b"http://h"]))


if __name__ == "__main__":
    canonical_json()
    config()
    trace_convert()
    mcp()
    llm()

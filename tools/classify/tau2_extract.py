#!/usr/bin/env python3
"""Derives a labelled eval set from tau2-bench's tool definitions.

Usage: tau2_extract.py TAU2_CHECKOUT OUT_DIR

Reads every src/tau2/domains/*/*.py of a tau2-bench checkout (MIT licence,
sierra-research/tau2-bench), finds the methods decorated @is_tool(ToolType.X)
and writes, per file, OUT_DIR/<server>.json ({"tools": [...]}: name, the
docstring's text before "Args:" as description, an inputSchema built from the
signature's annotations and the docstring's Args lines) plus labels.csv and
split.csv in the format of tests/data/classify (src/classify/eval_set.h).

Labels: ToolType.READ -> read, ToolType.WRITE -> write (the benchmark
authors' own labels, which its evaluation relies on: a WRITE changes the
database); GENERIC tools by hand (HAND below, one reason each).
Split (fixed, by domain, before any classifier was run on the set): dev =
airline, telecom; test = retail, banking_knowledge, mock.
Python stdlib only.
"""
import ast
import csv
import json
import os
import re
import sys

HAND = {
    "calculate": ("read", "computes an arithmetic expression; no state"),
    "transfer_to_human_agents": ("write", "hands the conversation to a human"),
    "give_discoverable_user_tool": ("write", "changes the session's tools"),
    "unlock_discoverable_agent_tool": ("write", "changes the session's tools"),
}
DEV_DOMAINS = {"airline", "telecom"}
TYPES = {"str": "string", "int": "integer", "float": "number",
         "bool": "boolean", "dict": "object", "list": "array",
         "List": "array", "Dict": "object"}


def json_type(ann):
    if ann is None:
        return "string"
    text = ast.unparse(ann)
    head = re.split(r"[\[\s|]", text)[0]
    if head in ("Optional",):
        inner = re.match(r"Optional\[(.*)\]", text)
        head = re.split(r"[\[\s|]", inner.group(1))[0] if inner else "str"
    return TYPES.get(head, "object" if head[:1].isupper() else "string")


def parse_args_doc(doc):
    """Args: section -> {name: description}."""
    out, cur = {}, None
    m = re.search(r"\n\s*Args:\s*\n(.*?)(\n\s*(Returns|Raises|Yields|Example)s?:|\Z)",
                  doc, re.S)
    if not m:
        return out
    for line in m.group(1).splitlines():
        a = re.match(r"\s*(\w+)\s*(\([^)]*\))?:\s*(.*)", line)
        if a:
            cur = a.group(1)
            out[cur] = a.group(3).strip()
        elif cur and line.strip():
            out[cur] += " " + line.strip()
    return out


def tools_of(path):
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        kind = None
        for d in node.decorator_list:
            src = ast.unparse(d)
            m = re.match(r"is_tool\(ToolType\.(\w+)", src)
            if m:
                kind = m.group(1)
        if not kind:
            continue
        doc = ast.get_docstring(node) or ""
        desc = re.split(r"\n\s*(Args|Returns|Raises):", doc)[0].strip()
        desc = " ".join(desc.split())
        pdocs = parse_args_doc("\n" + doc)
        props, required = {}, []
        args = node.args.args[1:]  # drop self
        defaults = [None] * (len(args) - len(node.args.defaults)) + list(
            node.args.defaults)
        for a, dflt in zip(args, defaults):
            p = {"type": json_type(a.annotation)}
            if a.arg in pdocs:
                p["description"] = pdocs[a.arg]
            props[a.arg] = p
            if dflt is None:
                required.append(a.arg)
        schema = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
        yield kind, {"name": node.name, "description": desc,
                     "inputSchema": schema}


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    domains = os.path.join(src, "src", "tau2", "domains")
    labels, split = [], []
    for domain in sorted(os.listdir(domains)):
        ddir = os.path.join(domains, domain)
        if not os.path.isdir(ddir):
            continue
        for fname in sorted(os.listdir(ddir)):
            if not fname.endswith(".py"):
                continue
            found = list(tools_of(os.path.join(ddir, fname)))
            if not found:
                continue
            suffix = {"tools.py": ""}.get(fname, "-" + fname[:-3].replace("_", "-"))
            server = "tau2-" + domain.replace("_", "-") + suffix
            tools, seen = [], set()
            for kind, t in found:
                if t["name"] in seen:
                    continue
                seen.add(t["name"])
                if kind == "READ":
                    label, basis, note = "read", "author", "ToolType.READ"
                elif kind == "WRITE":
                    label, basis, note = "write", "author", "ToolType.WRITE"
                elif t["name"] in HAND:
                    label, note = HAND[t["name"]]
                    basis = "hand"
                else:
                    sys.exit(f"no label for {server}/{t['name']} ({kind})")
                tools.append(t)
                labels.append([server, t["name"], label, basis, note])
            with open(os.path.join(out, server + ".json"), "w") as f:
                json.dump({"tools": tools}, f, indent=1, sort_keys=True)
                f.write("\n")
            half = "dev" if domain in DEV_DOMAINS else "test"
            split.append([server, half, domain, "sierra-research/tau2-bench",
                          "a2c0247", "MIT"])
    with open(os.path.join(out, "labels.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["server", "tool", "label", "basis", "note"])
        w.writerows(labels)
    with open(os.path.join(out, "split.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["server", "half", "category", "package", "version",
                    "licence"])
        w.writerows(split)


if __name__ == "__main__":
    main()

#!/usr/bin/env node
// (bfcl_live3: copied unchanged from ../../bfcl_live2/capture/convert.js, only this line and the count changed.)
// Writes ../<server>.json ({"tools":[{name, description, inputSchema}]}) for the 253
// names of sample.tsv, from the first definition of each name in BFCL's live files
// (same reading and order as sample.js). Conversion of BFCL's parameter schema to an
// MCP inputSchema, recursively through "properties" and "items":
//   type dict -> object, float -> number, tuple -> array, any -> "type" removed;
//   integer, string, boolean, array unchanged (no other type occurs in these files).
// Every other key (description, enum, default, required, properties, items) is kept
// as it is, in its order. Names and descriptions are unchanged.
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const REPO = '/work/.mirror/ShishirPatil+gorilla/repo';
const COMMIT = '6ea57973c7a6097fd7c5915698c54c17c5b1b6c8';
const FILES = ['simple', 'multiple', 'parallel', 'parallel_multiple', 'irrelevance', 'relevance'];
const TYPE = { dict: 'object', float: 'number', tuple: 'array', integer: 'integer', string: 'string', boolean: 'boolean', array: 'array' };

function firstDefs() {
  const first = new Map();
  for (const f of FILES) {
    const p = `berkeley-function-call-leaderboard/bfcl_eval/data/BFCL_v4_live_${f}.json`;
    const text = execFileSync('git', ['-C', REPO, 'show', `${COMMIT}:${p}`], { encoding: 'utf8', maxBuffer: 1 << 30 });
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      for (const fn of JSON.parse(line).function) if (!first.has(fn.name)) first.set(fn.name, fn);
    }
  }
  return first;
}

function conv(s, where) {
  const out = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'type') {
      if (v === 'any') continue;
      if (!(v in TYPE)) throw new Error(`unknown type ${JSON.stringify(v)} at ${where}`);
      out.type = TYPE[v];
    } else if (k === 'properties') {
      out.properties = {};
      for (const [pk, pv] of Object.entries(v)) out.properties[pk] = conv(pv, `${where}.${pk}`);
    } else if (k === 'items') {
      out.items = conv(v, `${where}[]`);
    } else out[k] = v;
  }
  return out;
}

const first = firstDefs();
const rows = fs.readFileSync(path.join(__dirname, 'sample.tsv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
const servers = new Map();
for (const [, , name, , server] of rows) {
  const fn = first.get(name);
  if (!servers.has(server)) servers.set(server, []);
  servers.get(server).push({ name: fn.name, description: fn.description, inputSchema: conv(fn.parameters, fn.name) });
}
for (const [server, tools] of servers) {
  fs.writeFileSync(path.join(__dirname, '..', `${server}.json`), JSON.stringify({ tools }, null, 1) + '\n');
}
process.stderr.write(`wrote ${servers.size} servers, ${rows.length} tools\n`);

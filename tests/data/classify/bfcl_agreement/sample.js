#!/usr/bin/env node
// Deterministic sample for the two-labeller agreement check (issue 31).
// Lists every (set, server, tool) in the three BFCL live sets (their *.json
// files only; server = file name without .json), sorts by
// SHA-256("agreeK" + "set/server/tool") (hex, ascending), takes the first 90.
// Usage: node sample.js > sample.tsv
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

const SALT = 'agreeK';
const N = 90;
const SETS = ['bfcl_live', 'bfcl_live2', 'bfcl_live3'];
const root = path.join(__dirname, '..');

const rows = [];
for (const set of SETS) {
  const dir = path.join(root, set);
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const server = f.slice(0, -'.json'.length);
    const j = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    for (const t of j.tools) {
      const key = `${set}/${server}/${t.name}`;
      const h = crypto.createHash('sha256').update(SALT + key).digest('hex');
      rows.push({ set, server, tool: t.name, h, key });
    }
  }
}
rows.sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : a.key < b.key ? -1 : 1));
let out = 'set\tserver\ttool\n';
for (const r of rows.slice(0, N)) out += `${r.set}\t${r.server}\t${r.tool}\n`;
process.stdout.write(out);
process.stderr.write(`${rows.length} tools in all, ${Math.min(N, rows.length)} sampled\n`);

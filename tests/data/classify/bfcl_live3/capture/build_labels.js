#!/usr/bin/env node
// (bfcl_live3: copied from ../../bfcl_live2/capture/build_labels.js; only the half changed.)
// Writes ../labels.csv from hand.tsv (rank, label, note: the hand labels, one per
// sampled name, keyed by its rank in sample.tsv) and ../split.csv (every server in
// half bfcl_live3). Rows: servers in alphabetical order, tools in their JSON order.
'use strict';
const fs = require('fs');
const path = require('path');
const tsv = (f) => fs.readFileSync(path.join(__dirname, f), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
const csv = (s) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

const sample = tsv('sample.tsv'); // rank sha256 name first_id server
const hand = new Map(tsv('hand.tsv').map(([rank, label, note]) => [rank, { label, note }]));
const byName = new Map(sample.map(([rank, , name, , server]) => [name, { rank, server }]));
if (hand.size !== sample.length) throw new Error(`hand.tsv has ${hand.size} labels for ${sample.length} names`);

const servers = [...new Set(sample.map((r) => r[4]))].sort();
const labels = ['server,tool,label,basis,note'];
for (const server of servers) {
  const { tools } = JSON.parse(fs.readFileSync(path.join(__dirname, '..', `${server}.json`), 'utf8'));
  for (const t of tools) {
    const h = hand.get(byName.get(t.name).rank);
    if (!['read', 'write'].includes(h.label)) throw new Error(`bad label for ${t.name}`);
    labels.push([server, t.name, h.label, 'hand', h.note].map(csv).join(','));
  }
}
fs.writeFileSync(path.join(__dirname, '..', 'labels.csv'), labels.join('\n') + '\n');
const split = ['server,half,category,package,version,licence'];
for (const server of servers) split.push(`${server},bfcl_live3,-,ShishirPatil/gorilla,6ea5797,Apache-2.0`);
fs.writeFileSync(path.join(__dirname, '..', 'split.csv'), split.join('\n') + '\n');
process.stderr.write(`labels.csv: ${labels.length - 1} tools; split.csv: ${servers.length} servers\n`);

#!/usr/bin/env node
// Deterministic sample of BFCL live function definitions (issue 31, session 15),
// third sample (bfcl_live3; copied from ../../bfcl_live2/capture/sample.js).
// Usage: node sample.js > sample.tsv   (run from this directory)
// Reads the six BFCL_v4_live_*.json files at commit 6ea57973 of ShishirPatil/gorilla
// from the bare mirror, keeps the first definition of each distinct name in file
// order, drops names in ../../bfcl_multi_turn/labels.csv, sorts by SHA-256 (hex,
// ascending) of the UTF-8 name and takes positions 481 to the end (all the names
// after those of the ninth and tenth sets, ../../bfcl_live and ../../bfcl_live2; the
// script fails if any sampled name is in either's labels.csv). Then assigns servers
// (prefix counts over the sampled names):
//   - a name containing '.' whose prefix before the first '.' is shared by >= 2
//     sampled names goes to server "bfcl-live3-" + norm(prefix);
//   - every other name goes to "bfcl-live3-misc-<k>", k = 1, 2, ..., filled with at
//     most 15 names each, in sampled (SHA-256) order;
//   - norm(): lowercase, every run of characters outside [a-z0-9] becomes '-',
//     leading/trailing '-' removed;
//   - a server with more than 25 names is cut, in sampled order, into chunks of 25
//     named <server>-1, <server>-2, ...
'use strict';
const { execFileSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const REPO = '/work/.mirror/ShishirPatil+gorilla/repo';
const COMMIT = '6ea57973c7a6097fd7c5915698c54c17c5b1b6c8';
const FILES = ['simple', 'multiple', 'parallel', 'parallel_multiple', 'irrelevance', 'relevance'];
const FROM = 480; // 0-based start: ranks 481 to the end

function readDefs() {
  const first = new Map(); // name -> {id, file, fn}
  const distinct = new Set();
  for (const f of FILES) {
    const p = `berkeley-function-call-leaderboard/bfcl_eval/data/BFCL_v4_live_${f}.json`;
    const text = execFileSync('git', ['-C', REPO, 'show', `${COMMIT}:${p}`], { encoding: 'utf8', maxBuffer: 1 << 30 });
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      const d = JSON.parse(line);
      for (const fn of d.function) {
        distinct.add(JSON.stringify([fn.name, fn.description]));
        if (!first.has(fn.name)) first.set(fn.name, { id: d.id, file: f, fn });
      }
    }
  }
  return { first, distinct };
}

function labelNames(set) {
  const csv = fs.readFileSync(path.join(__dirname, `../../${set}/labels.csv`), 'utf8');
  const names = new Set();
  csv.split('\n').slice(1).forEach((l) => { if (l.trim()) names.add(l.split(',')[1]); });
  return names;
}

const sha = (s) => crypto.createHash('sha256').update(s, 'utf8').digest('hex');
const norm = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');

function main() {
  const { first, distinct } = readDefs();
  const drop = labelNames('bfcl_multi_turn');
  const ninth = labelNames('bfcl_live');
  const tenth = labelNames('bfcl_live2');
  const pool = [...first.keys()].filter((n) => !drop.has(n));
  const dropped = [...first.keys()].filter((n) => drop.has(n));
  const ranked = pool.map((n) => ({ n, h: sha(n) })).sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : 0));
  const sample = ranked.slice(FROM);
  const overlap = sample.filter(({ n }) => ninth.has(n) || tenth.has(n)).map(({ n }) => n);
  if (overlap.length) throw new Error(`sampled names in bfcl_live or bfcl_live2: ${overlap.join(' ')}`);
  const earlierInFirst = ranked.slice(0, FROM).filter(({ n }) => ninth.has(n) || tenth.has(n)).length;

  const prefixCount = new Map();
  for (const { n } of sample) if (n.includes('.')) {
    const p = n.split('.')[0];
    prefixCount.set(p, (prefixCount.get(p) || 0) + 1);
  }
  const groups = new Map(); // server -> [names] in sampled order
  let misc = [];
  const miscGroups = [];
  for (const s of sample) {
    const p = s.n.includes('.') ? s.n.split('.')[0] : null;
    if (p !== null && prefixCount.get(p) >= 2) {
      const srv = 'bfcl-live3-' + norm(p);
      if (!groups.has(srv)) groups.set(srv, []);
      groups.get(srv).push(s.n);
    } else {
      if (misc.length === 15) { miscGroups.push(misc); misc = []; }
      misc.push(s.n);
    }
  }
  if (misc.length) miscGroups.push(misc);
  miscGroups.forEach((g, i) => groups.set(`bfcl-live3-misc-${i + 1}`, g));
  const server = new Map();
  for (const [srv, names] of groups) {
    if (names.length <= 25) names.forEach((n) => server.set(n, srv));
    else names.forEach((n, i) => server.set(n, `${srv}-${Math.floor(i / 25) + 1}`));
  }

  process.stderr.write(`distinct (name, description): ${distinct.size}; distinct names: ${first.size}; ` +
    `dropped (in bfcl_multi_turn): ${dropped.length} [${dropped.join(' ')}]; pool: ${pool.length}; sample: ranks ${FROM + 1}-${FROM + sample.length} (${sample.length}); ` +
    `bfcl_live + bfcl_live2 names: ${ninth.size + tenth.size}, of them in ranks 1-${FROM}: ${earlierInFirst}, in the sample: ${overlap.length}; ` +
    `servers: ${new Set(server.values()).size}\n`);
  const out = ['rank\tsha256\tname\tfirst_id\tserver'];
  sample.forEach(({ n, h }, i) => out.push([FROM + i + 1, h, n, first.get(n).id, server.get(n)].join('\t')));
  process.stdout.write(out.join('\n') + '\n');
}

main();

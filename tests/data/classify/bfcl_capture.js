#!/usr/bin/env node
// The BFCL live held-out sets (issue 31, session 15: bfcl_live, bfcl_live2,
// bfcl_live3): one script for the four steps each set took, so every set is
// made the same way. Until session 15's end each set had its own copies
// (capture/sample.js, convert.js, build_labels.js, check.js); they differed
// only in the set's name, the sample's first rank and the sets it must not
// share a name with, which are the arguments here.
//
// Usage (from the repository root; BFCL_REPO defaults to the local bare
// mirror of ShishirPatil/gorilla):
//   node tests/data/classify/bfcl_capture.js sample SET FROM COUNT [SEEN...] \
//       > tests/data/classify/SET/capture/sample.tsv
//   node tests/data/classify/bfcl_capture.js convert SET
//   node tests/data/classify/bfcl_capture.js labels SET
//   node tests/data/classify/bfcl_capture.js check SET [SEEN...]
// SET is the folder under tests/data/classify (also the half in split.csv;
// its servers are named SET with '_' as '-', e.g. bfcl-live2-...). FROM is
// the 0-based first rank of the sample, COUNT its size (0 = to the end).
// SEEN are earlier sets: no sampled name may be in their labels.csv, and
// `check` also fails on a server or tool name shared with them.
//
// sample: reads the six BFCL_v4_live_*.json files at commit 6ea57973, keeps
//   the first definition of each distinct name in file order (simple,
//   multiple, parallel, parallel_multiple, irrelevance, relevance), drops the
//   names in bfcl_multi_turn/labels.csv, sorts by SHA-256 (hex, ascending) of
//   the UTF-8 name and takes ranks FROM+1 .. FROM+COUNT. Servers: a name with
//   a '.' whose prefix before the first '.' is shared by >= 2 sampled names
//   goes to "<prefix of SET>-" + norm(prefix); every other name to
//   "<prefix of SET>-misc-<k>", at most 15 each in sampled order; norm():
//   lowercase, runs outside [a-z0-9] become '-', trimmed; a server of more
//   than 25 names is cut into <server>-1, <server>-2, ... The log goes to
//   stderr (capture/sample.log).
// convert: writes SET/<server>.json ({"tools":[{name, description,
//   inputSchema}]}) for the names of capture/sample.tsv: BFCL's parameter
//   schema with type dict -> object, float -> number, tuple -> array, any ->
//   no "type", recursively through "properties" and "items"; every other
//   key kept in its order; names and descriptions unchanged.
// labels: writes SET/labels.csv from capture/hand.tsv (rank, label, note:
//   the hand labels keyed by rank in sample.tsv; basis "hand") and
//   SET/split.csv (every server in half SET). Rows: servers in alphabetical
//   order, tools in their JSON order.
// check: every SET/*.json parses and has 1-25 tools of {name, description,
//   inputSchema of type object}; labels.csv and the JSON files name the same
//   (server, tool) pairs once each; labels are read or write with basis hand
//   and a note; split.csv names exactly the servers, each in half SET. Exits 1
//   on any mismatch.
'use strict';
const { execFileSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const REPO = process.env.BFCL_REPO || '/work/.mirror/ShishirPatil+gorilla/repo';
const COMMIT = '6ea57973c7a6097fd7c5915698c54c17c5b1b6c8';
const FILES = ['simple', 'multiple', 'parallel', 'parallel_multiple',
  'irrelevance', 'relevance'];
const TYPE = { dict: 'object', float: 'number', tuple: 'array',
  integer: 'integer', string: 'string', boolean: 'boolean', array: 'array' };
const SETS = __dirname;

function usage(msg) {
  process.stderr.write(`bfcl_capture: ${msg}\n` +
    'usage: bfcl_capture.js sample SET FROM COUNT [SEEN...] | convert SET | ' +
    'labels SET | check SET [SEEN...]\n');
  process.exit(2);
}

const sha = (s) => crypto.createHash('sha256').update(s, 'utf8').digest('hex');
const norm = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-')
  .replace(/^-+|-+$/g, '');
const serverPrefix = (set) => set.replace(/_/g, '-');
const tsv = (file) => fs.readFileSync(file, 'utf8').trim().split('\n').slice(1)
  .map((l) => l.split('\t'));
const csvField = (s) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

function parseCsv(text) {
  const rows = [];
  let row = [];
  let f = '';
  let q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) {
      if (c === '"') {
        if (text[i + 1] === '"') { f += '"'; i++; } else q = false;
      } else f += c;
    } else if (c === '"') q = true;
    else if (c === ',') { row.push(f); f = ''; }
    else if (c === '\n') { row.push(f); rows.push(row); row = []; f = ''; }
    else f += c;
  }
  if (f || row.length) { row.push(f); rows.push(row); }
  return rows;
}

function labelRows(set) {
  return parseCsv(fs.readFileSync(path.join(SETS, set, 'labels.csv'), 'utf8'))
    .slice(1);
}

// name -> {id, fn} of its first definition; and the distinct (name,
// description) pairs.
function readDefs() {
  const first = new Map();
  const distinct = new Set();
  for (const f of FILES) {
    const p = `berkeley-function-call-leaderboard/bfcl_eval/data/BFCL_v4_live_${f}.json`;
    const text = execFileSync('git', ['-C', REPO, 'show', `${COMMIT}:${p}`],
      { encoding: 'utf8', maxBuffer: 1 << 30 });
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      const d = JSON.parse(line);
      for (const fn of d.function) {
        distinct.add(JSON.stringify([fn.name, fn.description]));
        if (!first.has(fn.name)) first.set(fn.name, { id: d.id, fn });
      }
    }
  }
  return { first, distinct };
}

function sample(set, from, count, seen) {
  const { first, distinct } = readDefs();
  const drop = new Set(labelRows('bfcl_multi_turn').map((r) => r[1]));
  const earlier = new Set(seen.flatMap((s) => labelRows(s).map((r) => r[1])));
  const pool = [...first.keys()].filter((n) => !drop.has(n));
  const dropped = [...first.keys()].filter((n) => drop.has(n));
  const ranked = pool.map((n) => ({ n, h: sha(n) }))
    .sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : 0));
  const picked = ranked.slice(from, count > 0 ? from + count : undefined);
  const overlap = picked.filter(({ n }) => earlier.has(n)).map(({ n }) => n);
  if (overlap.length) {
    throw new Error(`sampled names in ${seen.join(', ')}: ${overlap.join(' ')}`);
  }
  const prefix = serverPrefix(set);
  const prefixCount = new Map();
  for (const { n } of picked) {
    if (!n.includes('.')) continue;
    const p = n.split('.')[0];
    prefixCount.set(p, (prefixCount.get(p) || 0) + 1);
  }
  const groups = new Map();
  let misc = [];
  const miscGroups = [];
  for (const { n } of picked) {
    const p = n.includes('.') ? n.split('.')[0] : null;
    if (p !== null && prefixCount.get(p) >= 2) {
      const srv = `${prefix}-${norm(p)}`;
      if (!groups.has(srv)) groups.set(srv, []);
      groups.get(srv).push(n);
    } else {
      if (misc.length === 15) { miscGroups.push(misc); misc = []; }
      misc.push(n);
    }
  }
  if (misc.length) miscGroups.push(misc);
  miscGroups.forEach((g, i) => groups.set(`${prefix}-misc-${i + 1}`, g));
  const server = new Map();
  for (const [srv, names] of groups) {
    names.forEach((n, i) => server.set(n, names.length <= 25 ? srv :
      `${srv}-${Math.floor(i / 25) + 1}`));
  }
  process.stderr.write(`distinct (name, description): ${distinct.size}; ` +
    `distinct names: ${first.size}; dropped (in bfcl_multi_turn): ` +
    `${dropped.length} [${dropped.join(' ')}]; pool: ${pool.length}; ` +
    `sample: ranks ${from + 1}-${from + picked.length} (${picked.length}); ` +
    `names of ${seen.join(', ') || 'no earlier set'}: ${earlier.size}, ` +
    `in the sample: 0; servers: ${new Set(server.values()).size}\n`);
  const out = ['rank\tsha256\tname\tfirst_id\tserver'];
  picked.forEach(({ n, h }, i) => out.push(
    [from + i + 1, h, n, first.get(n).id, server.get(n)].join('\t')));
  process.stdout.write(out.join('\n') + '\n');
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
      for (const [pk, pv] of Object.entries(v)) {
        out.properties[pk] = conv(pv, `${where}.${pk}`);
      }
    } else if (k === 'items') {
      out.items = conv(v, `${where}[]`);
    } else out[k] = v;
  }
  return out;
}

function convert(set) {
  const { first } = readDefs();
  const rows = tsv(path.join(SETS, set, 'capture', 'sample.tsv'));
  const servers = new Map();
  for (const [, , name, , server] of rows) {
    const { fn } = first.get(name);
    if (!servers.has(server)) servers.set(server, []);
    servers.get(server).push({ name: fn.name, description: fn.description,
      inputSchema: conv(fn.parameters, fn.name) });
  }
  for (const [server, tools] of servers) {
    fs.writeFileSync(path.join(SETS, set, `${server}.json`),
      JSON.stringify({ tools }, null, 1) + '\n');
  }
  process.stderr.write(`wrote ${servers.size} servers, ${rows.length} tools\n`);
}

function labels(set) {
  const dir = path.join(SETS, set);
  const picked = tsv(path.join(dir, 'capture', 'sample.tsv'));
  const hand = new Map(tsv(path.join(dir, 'capture', 'hand.tsv'))
    .map(([rank, label, note]) => [rank, { label, note }]));
  const byName = new Map(picked.map(([rank, , name]) => [name, rank]));
  if (hand.size !== picked.length) {
    throw new Error(`hand.tsv has ${hand.size} labels for ${picked.length} names`);
  }
  const servers = [...new Set(picked.map((r) => r[4]))].sort();
  const out = ['server,tool,label,basis,note'];
  for (const server of servers) {
    const { tools } = JSON.parse(fs.readFileSync(path.join(dir, `${server}.json`), 'utf8'));
    for (const t of tools) {
      const h = hand.get(byName.get(t.name));
      if (!['read', 'write'].includes(h.label)) throw new Error(`bad label for ${t.name}`);
      out.push([server, t.name, h.label, 'hand', h.note].map(csvField).join(','));
    }
  }
  fs.writeFileSync(path.join(dir, 'labels.csv'), out.join('\n') + '\n');
  const split = ['server,half,category,package,version,licence'];
  for (const server of servers) {
    split.push(`${server},${set},-,ShishirPatil/gorilla,6ea5797,Apache-2.0`);
  }
  fs.writeFileSync(path.join(dir, 'split.csv'), split.join('\n') + '\n');
  process.stderr.write(`labels.csv: ${out.length - 1} tools; split.csv: ${servers.length} servers\n`);
}

function check(set, seen) {
  const dir = path.join(SETS, set);
  let bad = 0;
  const fail = (m) => { bad++; process.stderr.write(`FAIL ${m}\n`); };
  const pattern = new RegExp(`^${serverPrefix(set)}-[a-z0-9-]+$`);
  const inJson = new Set();
  const servers = new Set();
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.json')).sort()) {
    const server = f.slice(0, -5);
    servers.add(server);
    let j;
    try {
      j = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    } catch (e) {
      fail(`${f} does not parse: ${e.message}`);
      continue;
    }
    if (!pattern.test(server)) fail(`server name ${server}`);
    if (!Array.isArray(j.tools) || j.tools.length === 0 || j.tools.length > 25) {
      fail(`${f}: tools array (length ${j.tools && j.tools.length})`);
    }
    for (const t of j.tools || []) {
      if (typeof t.name !== 'string' || typeof t.description !== 'string' ||
          typeof t.inputSchema !== 'object') fail(`${f}: tool fields ${t.name}`);
      if (t.inputSchema && t.inputSchema.type !== 'object') {
        fail(`${f}: ${t.name} inputSchema type ${t.inputSchema.type}`);
      }
      const k = `${server}\t${t.name}`;
      if (inJson.has(k)) fail(`duplicate tool ${k}`);
      inJson.add(k);
    }
  }
  const rows = parseCsv(fs.readFileSync(path.join(dir, 'labels.csv'), 'utf8'));
  if (rows[0].join(',') !== 'server,tool,label,basis,note') fail('labels.csv header');
  const inLabels = new Set();
  const counts = { read: 0, write: 0 };
  for (const r of rows.slice(1)) {
    if (r.length !== 5) { fail(`labels.csv row ${r.join(',')}`); continue; }
    const k = `${r[0]}\t${r[1]}`;
    if (inLabels.has(k)) fail(`duplicate label ${k}`);
    inLabels.add(k);
    if (!inJson.has(k)) fail(`label without tool: ${k}`);
    if (!(r[2] in counts)) fail(`label ${r[2]} for ${k}`); else counts[r[2]]++;
    if (r[3] !== 'hand' || !r[4]) fail(`basis/note for ${k}`);
  }
  for (const k of inJson) if (!inLabels.has(k)) fail(`tool without label: ${k}`);
  for (const s of seen) {
    const other = labelRows(s);
    const otherServers = new Set(other.map((r) => r[0]));
    const otherTools = new Set(other.map((r) => r[1]));
    for (const x of servers) if (otherServers.has(x)) fail(`server also in ${s}: ${x}`);
    for (const k of inJson) if (otherTools.has(k.split('\t')[1])) fail(`tool also in ${s}: ${k}`);
  }
  const split = parseCsv(fs.readFileSync(path.join(dir, 'split.csv'), 'utf8'));
  if (split[0].join(',') !== 'server,half,category,package,version,licence') fail('split.csv header');
  const inSplit = new Set(split.slice(1).map((r) => r[0]));
  for (const s of servers) if (!inSplit.has(s)) fail(`server not in split.csv: ${s}`);
  for (const s of inSplit) if (!servers.has(s)) fail(`split.csv server without JSON: ${s}`);
  for (const r of split.slice(1)) {
    if (r.slice(1).join(',') !== `${set},-,ShishirPatil/gorilla,6ea5797,Apache-2.0`) {
      fail(`split row ${r.join(',')}`);
    }
  }
  if (bad) process.exit(1);
  process.stdout.write(`${servers.size} servers, ${inJson.size} tools, ${inLabels.size} labels ` +
    `(${counts.read} read, ${counts.write} write), all consistent\n`);
}

function main() {
  const [cmd, set, ...rest] = process.argv.slice(2);
  if (!cmd || !set) usage('a command and a SET are required');
  if (!/^[a-z0-9_]+$/.test(set)) usage(`bad SET ${set}`);
  if (cmd === 'sample') {
    const [from, count, ...seen] = rest;
    if (!/^\d+$/.test(from || '') || !/^\d+$/.test(count || '')) usage('sample needs FROM and COUNT');
    sample(set, Number(from), Number(count), seen);
  } else if (cmd === 'convert') convert(set);
  else if (cmd === 'labels') labels(set);
  else if (cmd === 'check') check(set, rest);
  else usage(`unknown command ${cmd}`);
}

main();

#!/usr/bin/env node
// (bfcl_live3: copied from ../../bfcl_live2/capture/check.js; the server-name
// pattern and the half changed, and the name check extended: no server and no tool
// name of this set occurs in ../../bfcl_live/labels.csv or ../../bfcl_live2/labels.csv.)
// The one check run on this set: every ../*.json parses and has a tools array of
// {name, description, inputSchema}; every (server, tool) of labels.csv exists in a
// JSON file and vice versa (no duplicates); every server of split.csv has a JSON file
// and vice versa; labels are read or write. Exits 1 on any mismatch.
'use strict';
const fs = require('fs');
const path = require('path');
const dir = path.join(__dirname, '..');
let bad = 0;
const fail = (m) => { bad++; console.error('FAIL ' + m); };

function parseCsv(text) {
  const rows = []; let row = []; let f = ''; let q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) { if (c === '"') { if (text[i + 1] === '"') { f += '"'; i++; } else q = false; } else f += c; }
    else if (c === '"') q = true;
    else if (c === ',') { row.push(f); f = ''; }
    else if (c === '\n') { row.push(f); rows.push(row); row = []; f = ''; }
    else f += c;
  }
  if (f || row.length) { row.push(f); rows.push(row); }
  return rows;
}

const inJson = new Set();
const servers = new Set();
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
  const server = f.slice(0, -5);
  servers.add(server);
  let j;
  try { j = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')); } catch (e) { fail(`${f} does not parse: ${e.message}`); continue; }
  if (!/^bfcl-live3-[a-z0-9-]+$/.test(server)) fail(`server name ${server}`);
  if (!Array.isArray(j.tools) || j.tools.length === 0 || j.tools.length > 25) fail(`${f}: tools array (length ${j.tools && j.tools.length})`);
  for (const t of j.tools || []) {
    if (typeof t.name !== 'string' || typeof t.description !== 'string' || typeof t.inputSchema !== 'object') fail(`${f}: tool fields ${t.name}`);
    if (t.inputSchema && t.inputSchema.type !== 'object') fail(`${f}: ${t.name} inputSchema type ${t.inputSchema.type}`);
    const k = `${server}\t${t.name}`;
    if (inJson.has(k)) fail(`duplicate tool ${k}`);
    inJson.add(k);
  }
}
const labels = parseCsv(fs.readFileSync(path.join(dir, 'labels.csv'), 'utf8'));
if (labels[0].join(',') !== 'server,tool,label,basis,note') fail('labels.csv header');
const inLabels = new Set();
const counts = { read: 0, write: 0 };
for (const r of labels.slice(1)) {
  if (r.length !== 5) { fail(`labels.csv row ${r.join(',')}`); continue; }
  const k = `${r[0]}\t${r[1]}`;
  if (inLabels.has(k)) fail(`duplicate label ${k}`);
  inLabels.add(k);
  if (!inJson.has(k)) fail(`label without tool: ${k}`);
  if (!(r[2] in counts)) fail(`label ${r[2]} for ${k}`); else counts[r[2]]++;
  if (r[3] !== 'hand' || !r[4]) fail(`basis/note for ${k}`);
}
for (const k of inJson) if (!inLabels.has(k)) fail(`tool without label: ${k}`);
for (const set of ['bfcl_live', 'bfcl_live2']) {
  const earlier = parseCsv(fs.readFileSync(path.join(dir, '..', set, 'labels.csv'), 'utf8')).slice(1);
  const earlierServers = new Set(earlier.map((r) => r[0]));
  const earlierTools = new Set(earlier.map((r) => r[1]));
  for (const s of servers) if (earlierServers.has(s)) fail(`server also in ${set}: ${s}`);
  for (const k of inJson) if (earlierTools.has(k.split('\t')[1])) fail(`tool also in ${set}: ${k}`);
}
const split = parseCsv(fs.readFileSync(path.join(dir, 'split.csv'), 'utf8'));
if (split[0].join(',') !== 'server,half,category,package,version,licence') fail('split.csv header');
const inSplit = new Set(split.slice(1).map((r) => r[0]));
for (const s of servers) if (!inSplit.has(s)) fail(`server not in split.csv: ${s}`);
for (const s of inSplit) if (!servers.has(s)) fail(`split.csv server without JSON: ${s}`);
for (const r of split.slice(1)) if (r.slice(1).join(',') !== 'bfcl_live3,-,ShishirPatil/gorilla,6ea5797,Apache-2.0') fail(`split row ${r.join(',')}`);
console.log(`${servers.size} servers, ${inJson.size} tools, ${inLabels.size} labels (${counts.read} read, ${counts.write} write)${bad ? `, ${bad} failures` : ', all consistent'}`);
process.exit(bad ? 1 : 0);

#!/usr/bin/env node
// Agreement between the first labels (the sets' labels.csv) and the second,
// blind labels (second.tsv) on the 90 sampled BFCL live tools (issue 31).
// Prints raw agreement, Cohen's kappa, the confusion table and every
// disagreement with both labellers' notes. Changes no label.
// Usage: node agreement.js > agreement.txt
'use strict';
const fs = require('fs');
const path = require('path');
const root = path.join(__dirname, '..');

function parseCsv(text) {
  const rows = [];
  let row = [], f = '', q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) {
      if (c === '"') { if (text[i + 1] === '"') { f += '"'; i++; } else q = false; }
      else f += c;
    } else if (c === '"') q = true;
    else if (c === ',') { row.push(f); f = ''; }
    else if (c === '\n') { row.push(f.replace(/\r$/, '')); rows.push(row); row = []; f = ''; }
    else f += c;
  }
  if (f !== '' || row.length) { row.push(f); rows.push(row); }
  return rows;
}

const first = new Map(); // set/server/tool -> {label, basis, note}
for (const set of ['bfcl_live', 'bfcl_live2', 'bfcl_live3']) {
  const rows = parseCsv(fs.readFileSync(path.join(root, set, 'labels.csv'), 'utf8'));
  const h = rows.shift();
  const ix = (k) => h.indexOf(k);
  for (const r of rows) {
    if (r.length < 3) continue;
    first.set(`${set}/${r[ix('server')]}/${r[ix('tool')]}`,
      { label: r[ix('label')], basis: r[ix('basis')], note: r[ix('note')] });
  }
}

const second = fs.readFileSync(path.join(__dirname, 'second.tsv'), 'utf8')
  .trim().split('\n').slice(1).map((l) => l.split('\t'));

const L = ['read', 'write'];
const m = { read: { read: 0, write: 0 }, write: { read: 0, write: 0 } }; // m[first][second]
const dis = [];
const bases = {};
for (const [set, server, tool, label, note] of second) {
  const key = `${set}/${server}/${tool}`;
  const f = first.get(key);
  if (!f) throw new Error(`no first label for ${key}`);
  if (!L.includes(f.label) || !L.includes(label)) throw new Error(`bad label for ${key}`);
  bases[f.basis] = (bases[f.basis] || 0) + 1;
  m[f.label][label]++;
  if (f.label !== label) dis.push({ key, first: f, second: { label, note } });
}

const n = second.length;
const agree = m.read.read + m.write.write;
const po = agree / n;
const f1 = { read: m.read.read + m.read.write, write: m.write.read + m.write.write };
const s2 = { read: m.read.read + m.write.read, write: m.read.write + m.write.write };
const pe = (f1.read * s2.read + f1.write * s2.write) / (n * n);
const kappa = (po - pe) / (1 - pe);

const out = [];
out.push(`sample: ${n} tools (sample.tsv); first labels' basis: ${Object.entries(bases).map(([k, v]) => `${k} ${v}`).join(', ')}`);
out.push(`raw agreement: ${agree}/${n} = ${po.toFixed(3)}`);
out.push(`chance agreement: ${pe.toFixed(3)}`);
out.push(`Cohen's kappa: ${kappa.toFixed(3)}`);
out.push('');
out.push('confusion (rows: first labels, columns: second labels)');
out.push(`              second read  second write  total`);
for (const a of L) {
  out.push(`first ${a.padEnd(6)}  ${String(m[a].read).padStart(11)}  ${String(m[a].write).padStart(12)}  ${String(f1[a]).padStart(5)}`);
}
out.push(`total         ${String(s2.read).padStart(11)}  ${String(s2.write).padStart(12)}  ${String(n).padStart(5)}`);
out.push('');
out.push(`disagreements: ${dis.length}`);
for (const d of dis) {
  out.push(`- ${d.key}`);
  out.push(`    first:  ${d.first.label} (${d.first.basis}): ${d.first.note}`);
  out.push(`    second: ${d.second.label}: ${d.second.note}`);
}
process.stdout.write(out.join('\n') + '\n');

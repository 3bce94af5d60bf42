// Usage: node capture_store.js CORPUS SET_DIR HALF
// (One script for the blind held-out sets fresh4-fresh8; each set's
// capture/README.md names the command that made it. HALF is the set's
// split name, e.g. fresh8.)
// Stores each captured server of CORPUS (status.txt, out/<slug>.json) whose
// licence is allowed as SET_DIR/<server>.json: serverInfo without `icons`
// and the first 15 tools of tools/list, verbatim (the sampling rule fixed
// before labelling). <server> is the package name without its leading "@",
// "/" turned into "_". Writes SET_DIR/split.csv in candidates.txt order and
// SET_DIR/capture/capture_status.tsv (package, rc, version, licence, what
// happened). Licence: package.json's `license`; where that is absent, the
// package's own LICENSE file when it is one of the allowed licences.
const fs = require('fs'), path = require('path');
if (process.argv.length !== 5) { console.error('usage: node capture_store.js CORPUS SET_DIR HALF'); process.exit(2); }
const [corpus, set, half] = process.argv.slice(2);
const allowed = /^(MIT|Apache-2\.0|ISC|BSD-[23]-Clause|0BSD)$/;
const cands = fs.readFileSync(path.join(set, 'capture/candidates.txt'), 'utf8').trim().split('\n');
const status = new Map();
for (const l of fs.readFileSync(path.join(corpus, 'status.txt'), 'utf8').trim().split('\n')) {
  const f = l.split('\t'); const pkg = f[0].split(' ')[0];
  status.set(pkg, f.length > 1 ? { rc: f[1], version: f[2], licence: f[3], log: f.slice(5).join(' ') } : { rc: f[0].split(' ')[1] });
}
const notes = fs.existsSync(path.join(set, 'capture/notes.tsv'))
  ? new Map(fs.readFileSync(path.join(set, 'capture/notes.tsv'), 'utf8').trim().split('\n').map(l => l.split('\t'))) : new Map();
function licenceFile(slug, pkg) {
  const d = path.join(corpus, 'pkgs', slug, 'node_modules', pkg);
  const f = fs.existsSync(d) && fs.readdirSync(d).find(n => /^licen[cs]e/i.test(n));
  if (!f) return null;
  const t = fs.readFileSync(path.join(d, f), 'utf8');
  if (/Permission is hereby granted, free of charge/.test(t)) return 'MIT';
  if (/Apache License[\s\S]*Version 2\.0/.test(t)) return 'Apache-2.0';
  if (/Permission to use, copy, modify, and\/or distribute/.test(t)) return 'ISC';
  return null;
}
const split = [['server', 'half', 'category', 'package', 'version', 'licence']];
const st = [];
for (const pkg of cands) {
  const slug = pkg.replace(/^@/, '').replace(/\//g, '__');
  const server = slug.replace(/__/g, '_');
  const s = status.get(pkg);
  if (!s) { st.push([pkg, 'not run', '', '', 'not run']); continue; }
  if (!s.version) { st.push([pkg, s.rc, '', '', notes.get(pkg) || s.rc]); continue; }
  let lic = s.licence, what;
  if (s.rc !== 'rc=0') what = notes.get(pkg) || 'not captured: ' + s.log.trim().slice(0, 120);
  else {
    const j = JSON.parse(fs.readFileSync(path.join(corpus, 'out', slug + '.json'), 'utf8'));
    if (lic === '"none"') { const f = licenceFile(slug, pkg); if (f) lic = f + ' (LICENSE file)'; }
    if (!allowed.test(lic.replace(' (LICENSE file)', ''))) what = 'left out: licence ' + lic;
    else if (!j.tools.length) what = 'left out: 0 tools without credentials';
    else {
      const info = { ...j.serverInfo }; delete info.icons;
      const out = { serverInfo: info, tools: j.tools.slice(0, 15) };
      fs.writeFileSync(path.join(set, server + '.json'), JSON.stringify(out, null, 1) + '\n');
      split.push([server, half, '-', pkg, s.version, lic.replace(' (LICENSE file)', '')]);
      what = `stored: ${out.tools.length} of ${j.tools.length} tools` + (lic.includes('file') ? '; licence from its LICENSE file' : '');
    }
    if (notes.has(pkg)) what += '; ' + notes.get(pkg);
  }
  st.push([pkg, s.rc, s.version, lic, what]);
}
fs.writeFileSync(path.join(set, 'split.csv'), split.map(r => r.join(',')).join('\n') + '\n');
fs.writeFileSync(path.join(set, 'capture/capture_status.tsv'), st.map(r => r.join('\t')).join('\n') + '\n');
console.error(`${split.length - 1} servers stored`);

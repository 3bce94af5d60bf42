// Usage: node tests/data/classify/merge_labels.js SET_DIR
// (e.g. tests/data/classify/npm_servers_fresh). Builds SET_DIR/labels.csv
// from every server of SET_DIR/split.csv (each captured as SET_DIR/<server>.json)
// and SET_DIR/capture/hand.csv with
// the rules of docs/CLASSIFY.md ("Labels"): an override in hand.csv (note
// starting "override:") wins; else the authors' annotations (readOnlyHint
// true and destructiveHint not true = read; readOnlyHint false = write;
// destructiveHint true = write); else the hand label. A tool with neither is
// an error, and so is a hand label naming no captured tool.
const fs = require('fs');
if (process.argv.length !== 3) {
  console.error('usage: node merge_labels.js SET_DIR');
  process.exit(2);
}
process.chdir(process.argv[2]);
function csv(line){const out=[];let cur='',q=false;for(let i=0;i<line.length;i++){const c=line[i];if(q){if(c=='"'){if(line[i+1]=='"'){cur+='"';i++}else q=false}else cur+=c}else if(c=='"')q=true;else if(c==','){out.push(cur);cur=''}else cur+=c}out.push(cur);return out}
const q=s=>/[",\n]/.test(s)?'"'+s.replace(/"/g,'""')+'"':s;
const hand=new Map();
for(const l of fs.readFileSync('capture/hand.csv','utf8').trim().split('\n').slice(1)){const [s,t,lab,note]=csv(l);if(hand.has(s+'\0'+t))throw new Error('dup '+s+' '+t);hand.set(s+'\0'+t,{lab,note})}
const servers=fs.readFileSync('split.csv','utf8').trim().split('\n').slice(1).map(l=>csv(l)[0]);
const rows=[['server','tool','label','basis','note']];const used=new Set();
for(const s of servers){const j=JSON.parse(fs.readFileSync(s+'.json'));
 for(const t of j.tools){const a=t.annotations||{};const h=hand.get(s+'\0'+t.name);let lab,basis,note;
  if(h&&h.note.startsWith('override')){lab=h.lab;basis='override';note=h.note}
  else if(a.readOnlyHint===true&&a.destructiveHint!==true){lab='read';basis='annotation';note='readOnlyHint: true'}
  else if(a.readOnlyHint===false){lab='write';basis='annotation';note='readOnlyHint: false'}
  else if(a.destructiveHint===true){lab='write';basis='annotation';note=a.readOnlyHint===true?'readOnlyHint and destructiveHint both true':'destructiveHint: true'}
  else if(h){lab=h.lab;basis='hand';note=h.note}
  else throw new Error('no label '+s+' '+t.name);
  if(h)used.add(s+'\0'+t.name);
  rows.push([s,t.name,lab,basis,note])}}
for(const k of hand.keys())if(!used.has(k))throw new Error('unused hand label '+k.replace('\0','/'));
fs.writeFileSync('labels.csv',rows.map(r=>r.map(q).join(',')).join('\n')+'\n');
const n=rows.length-1,reads=rows.filter(r=>r[2]==='read').length,by=b=>rows.filter(r=>r[3]===b).length;
console.error(`${n} labels: ${reads} read, ${n-reads} write; ${by('annotation')} annotation, ${by('hand')} hand, ${by('override')} override`);

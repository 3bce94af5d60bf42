const fs=require('fs');
function csv(line){const out=[];let cur='',q=false;for(let i=0;i<line.length;i++){const c=line[i];if(q){if(c=='"'){if(line[i+1]=='"'){cur+='"';i++}else q=false}else cur+=c}else if(c=='"')q=true;else if(c==','){out.push(cur);cur=''}else cur+=c}out.push(cur);return out}
const q=s=>/[",\n]/.test(s)?'"'+s.replace(/"/g,'""')+'"':s;
const hand=new Map();
for(const l of fs.readFileSync('hand.csv','utf8').trim().split('\n').slice(1)){const [s,t,lab,note]=csv(l);if(hand.has(s+'\0'+t))throw new Error('dup '+s+' '+t);hand.set(s+'\0'+t,{lab,note})}
const servers=process.argv.slice(2);const rows=[['server','tool','label','basis','note']];const used=new Set();
for(const s of servers){const j=JSON.parse(fs.readFileSync('out/'+s+'.json'));
 for(const t of j.tools){const a=t.annotations||{};const h=hand.get(s+'\0'+t.name);let lab,basis,note;
  if(h&&h.note.startsWith('override')){lab=h.lab;basis='override';note=h.note}
  else if(a.readOnlyHint===true&&a.destructiveHint!==true){lab='read';basis='annotation';note='readOnlyHint: true'}
  else if(a.readOnlyHint===false){lab='write';basis='annotation';note='readOnlyHint: false'}
  else if(a.destructiveHint===true){lab='write';basis='annotation';note=a.readOnlyHint===true?'readOnlyHint and destructiveHint both true':'destructiveHint: true'}
  else if(h){lab=h.lab;basis='hand';note=h.note}
  else throw new Error('no label '+s+' '+t.name);
  if(h)used.add(s+'\0'+t.name);
  rows.push([s,t.name,lab,basis,note])}}
for(const k of hand.keys())if(!used.has(k)&&servers.includes(k.split('\0')[0]))console.error('unused hand label',k.replace('\0','/'));
fs.writeFileSync('labels.csv',rows.map(r=>r.map(q).join(',')).join('\n')+'\n');
console.error(rows.length-1,'labels');

// Usage: node claude_code_reduce.js RAW.json OUT.json "CLIENT VERSION"
// Keeps only what the tests need from a Claude Code capture (RAW.json, from
// claude_code_capture.mjs): each tool's name and its input property names
// and types. Claude Code is proprietary, so its description texts are NOT
// kept: each tool gets this project's own one-line description from
// claude_code_descriptions.csv (a tool missing there is an error).
const fs = require('fs');
const path = require('path');
function csv(line){const out=[];let cur='',q=false;for(let i=0;i<line.length;i++){const c=line[i];if(q){if(c=='"'){if(line[i+1]=='"'){cur+='"';i++}else q=false}else cur+=c}else if(c=='"')q=true;else if(c==','){out.push(cur);cur=''}else cur+=c}out.push(cur);return out}
const own = new Map(fs.readFileSync(path.join(__dirname, 'claude_code_descriptions.csv'), 'utf8')
  .trim().split('\n').slice(1).map(l => csv(l)));
const raw = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const tools = raw.tools.map(t => {
  if (!own.has(t.name)) throw new Error('no description of our own for ' + t.name);
  const props = {};
  for (const [k, p] of Object.entries((t.input_schema || {}).properties || {})) props[k] = { type: p.type };
  return { name: t.name, description: own.get(t.name), input_schema: { type: 'object', properties: props } };
});
fs.writeFileSync(process.argv[3], JSON.stringify({ client: process.argv[4],
  note: "derived: each tool's name and input property names and types as the client sends them; the descriptions are this project's own one-line summaries (capture/claude_code_descriptions.csv), not the client's text",
  tools }, null, 1) + '\n');
console.log(tools.length + ' tools');

const fs=require('fs');
const cats=[['browser',['browser-tools','chrome-devtools','executeautomation-playwright','playwright','puppeteer']],
['database',['airtable','mongodb','neon','postgres','redis']],
['search',['brave-search','context7','exa','firecrawl','tavily']],
['knowledge',['memory','notion']],
['dev-tools',['circleci','desktop-commander','filesystem','git','gitlab','kubernetes']],
['issue-tracker',['linear','todoist']],['payments',['stripe']],['crm',['hubspot']],['chat',['slack']]];
const pk={'browser-tools':'@agentdeskai/browser-tools-mcp','chrome-devtools':'chrome-devtools-mcp','executeautomation-playwright':'@executeautomation/playwright-mcp-server','playwright':'@playwright/mcp','puppeteer':'@modelcontextprotocol/server-puppeteer','airtable':'airtable-mcp-server','mongodb':'mongodb-mcp-server','neon':'@neondatabase/mcp-server-neon','postgres':'@modelcontextprotocol/server-postgres','redis':'@modelcontextprotocol/server-redis','brave-search':'@modelcontextprotocol/server-brave-search','context7':'@upstash/context7-mcp','exa':'exa-mcp-server','firecrawl':'firecrawl-mcp','tavily':'tavily-mcp','memory':'@modelcontextprotocol/server-memory','notion':'@notionhq/notion-mcp-server','circleci':'@circleci/mcp-server-circleci','desktop-commander':'@wonderwhy-er/desktop-commander','filesystem':'@modelcontextprotocol/server-filesystem','git':'@cyanheads/git-mcp-server','gitlab':'@modelcontextprotocol/server-gitlab','kubernetes':'mcp-server-kubernetes','linear':'linear-mcp','todoist':'todoist-mcp','stripe':'@stripe/mcp','hubspot':'@hubspot/mcp-server','slack':'@modelcontextprotocol/server-slack','claude-code-1.0.128':'@anthropic-ai/claude-code','claude-code-2.0.77':'@anthropic-ai/claude-code','claude-code-2.1.328':'@anthropic-ai/claude-code'};
const dirs=fs.readdirSync('pk');
function meta(p, s){ if(s.startsWith('claude-code')){const v=s.slice(12);const d=v==='1.0.128'?'cc1':v==='2.0.77'?'cc2':null;
   const f=d?`pk/${d}/node_modules/${p}/package.json`:'/work/wt/classifier/tests/agent/node_modules/@anthropic-ai/claude-code/package.json';const j=JSON.parse(fs.readFileSync(f));return [j.version, typeof j.license==='string'?j.license:'see package'];}
  for(const d of dirs){const f=`pk/${d}/node_modules/${p}/package.json`;if(fs.existsSync(f)&&!(p==='@stripe/mcp'&&d!=='stripe02')){const j=JSON.parse(fs.readFileSync(f));return [j.version, typeof j.license==='string'?j.license:JSON.stringify(j.license)]}} return ['?','?']}
const rows=[['server','half','category','package','version','licence']];let i=0;
for(const [c,ss] of cats) for(const s of [...ss].sort()){const [v,l]=meta(pk[s],s);rows.push([s,i++%2===0?'dev':'heldout',c,pk[s],v,l]);}
for(const s of ['claude-code-1.0.128','claude-code-2.0.77','claude-code-2.1.328']){const [v,l]=meta(pk[s],s);rows.push([s,'claude-code','llm-agent-builtins',pk[s],v,l]);}
const q=s=>/[",\n ]/.test(s)?'"'+s.replace(/"/g,'""')+'"':s;
fs.writeFileSync('split.csv',rows.map(r=>r.map(q).join(',')).join('\n')+'\n');
console.log(fs.readFileSync('split.csv','utf8'));

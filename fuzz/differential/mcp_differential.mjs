// Differential check of the MCP proxy: generated sessions are run once
// directly against a real npm MCP server and once through `toolcache mcp`
// in front of the same server (same starting state), and the client-visible
// answers are compared: which ids are answered, in what order, and with
// exactly what (result or error, byte for byte after JSON parsing).
//
// The sessions (seeded, reproducible) contain no cacheable repeats: a read
// is repeated only after a write to the same server, which the proxy must
// forward (so a stale hit would show as a difference). They mix tool calls
// with generated arguments (Unicode, escapes, odd numbers), calls the
// server rejects (unknown tool, bad arguments), other methods (ping,
// resources/list, prompts/list, an unknown method), notifications, and
// ids of every kind (integers, 0, negative, 2^53-1, strings, Unicode
// strings), pipelined in groups of 1-4 lines per write for
// server-everything (whose tools answer in order) and one at a time for
// server-memory and server-filesystem (whose file I/O may reorder answers
// even on a direct connection). Server notifications are not compared
// (their timing is the server's).
//
// Usage: node fuzz/differential/mcp_differential.mjs --bin TOOLCACHE
//          [--sessions N] [--seed S] [--steps N] [--repeats]
// Exits 1 on any difference (the first few are printed).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, def) => (argv.indexOf(name) >= 0 ? argv[argv.indexOf(name) + 1] : def);
const BIN = opt('--bin');
const SESSIONS = Number(opt('--sessions', '30'));
const SEED = Number(opt('--seed', '16'));
const STEPS = Number(opt('--steps', '24'));
// --repeats lets reads repeat without a write between them: cache hits then
// differ from direct answers (their _meta says so), which shows the
// comparison sees a difference when there is one.
const REPEATS = argv.includes('--repeats');
if (!BIN) {
  console.error('usage: node mcp_differential.mjs --bin TOOLCACHE [--sessions N] [--seed S] [--steps N]');
  process.exit(2);
}
const MODS = join(here, '../../tests/peers/node_modules/@modelcontextprotocol');
const SERVERS = {
  everything: [join(MODS, 'server-everything/dist/index.js'), 'stdio'],
  memory: [join(MODS, 'server-memory/dist/index.js')],
  filesystem: [join(MODS, 'server-filesystem/dist/index.js')],
};
for (const [name, [path]] of Object.entries(SERVERS)) {
  if (!existsSync(path)) {
    console.error(`missing server ${name} (${path}): run scripts/setup.sh`);
    process.exit(2);
  }
}
const work = mkdtempSync(join(tmpdir(), 'toolcache-mcp-diff-'));

// mulberry32: a small seeded PRNG, so a session is reproducible from its seed.
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
    chance: (p) => next() < p,
  };
}

const PIECES = ['a', 'Z', ' ', '\\', '"', '\n', '\t', '\u0000', '\u001f', 'é', 'ß', '€', '日本', '😀',
  '\u2028', '</script>', '{"x":1}', '%s', '\ufeff', 'null', '0', '-1e308'];
function text(r, max = 12) {
  let s = '';
  for (let i = r.int(max) + 1; i > 0; i--) s += r.pick(PIECES);
  return s;
}
function number(r) {
  return r.pick([0, -0, 1, -1, 0.1, 1e21, 1e-7, 2 ** 53 - 1, -(2 ** 53), 123456.789, 5e-324,
    1.7976931348623157e308, r.int(1000), r.next() * 1e6 - 5e5, -r.int(100000)]);
}

// Ids: unique within a session, of every JSON-RPC kind.
function makeId(r, n) {
  switch (r.int(7)) {
    case 0: return n;
    case 1: return -n;
    case 2: return n === 1 ? 0 : 1000000 + n;
    case 3: return 2 ** 53 - 1 - n;
    case 4: return `s${n}`;
    case 5: return `ïd-${n}-😀`;
    default: return `${n}`.padStart(8, '0') + ' ';
  }
}

// Generates one session: a list of groups (lines written at once).
function generate(seed, server, dir) {
  const r = rng(seed);
  const groups = [];
  let n = 0;
  let unique = 0;
  const u = () => `${seed}-${++unique}`;
  const req = (method, params) => ({ jsonrpc: '2.0', id: makeId(r, ++n), method, ...(params === undefined ? {} : { params }) });
  const call = (name, args) => req('tools/call', { name, arguments: args });
  const reads = new Set();  // read arguments seen since the last write
  const read = (name, args) => {
    const k = JSON.stringify([name, args]);
    if (reads.has(k) && !REPEATS) return null;
    reads.add(k);
    return call(name, args);
  };
  const write = (name, args) => { reads.clear(); return call(name, args); };
  const common = () => r.pick([
    () => req('ping'),
    () => req('tools/list', {}),
    () => req('resources/list', {}),
    () => req('prompts/list', {}),
    () => req(`no/such/method/${u()}`, {}),
    () => call(`no_such_tool_${u()}`, {}),
    () => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: u(), progress: 1 } }),
  ])();
  const files = ['a.txt', 'b.txt', 'sub/c.txt'];
  const gen = {
    everything: () => r.pick([
      () => call('echo', { message: `${u()} ${text(r)}` }),
      () => call('echo', { message: `${u()} ${text(r, 40)}`, extra: r.pick([null, true, [1, 'x'], { k: text(r) }]) }),
      () => call('get-sum', { a: number(r), b: number(r) + unique * 1e-3 }),
      () => call('get-sum', { a: text(r), b: u() }),
      () => call('get-annotated-message', { messageType: r.pick(['error', 'success', 'debug']), includeImage: r.chance(0.3), tag: u() }),
      () => call('get-structured-content', { location: r.pick(['New York', 'Chicago', 'Los Angeles']), tag: u() }),
      () => call('echo', {}),
      common,
    ])(),
    memory: () => r.pick([
      () => write('create_entities', { entities: [{ name: `e${u()} ${text(r, 3)}`, entityType: r.pick(['person', 'tool']), observations: [text(r)] }] }),
      () => read('read_graph', {}),
      () => read('search_nodes', { query: r.pick(['e', 'person', 'tool', text(r, 2)]) }),
      () => read('open_nodes', { names: [`e${seed}-${r.int(unique + 1)}`] }),
      () => write('add_observations', { observations: [{ entityName: `e${seed}-${r.int(unique + 1)}`, contents: [text(r)] }] }),
      () => write('delete_entities', { entityNames: [`e${seed}-${r.int(unique + 1)}`] }),
      common,
    ])(),
    filesystem: () => r.pick([
      () => read('read_text_file', { path: join(dir, r.pick(files)) }),
      () => read('read_text_file', { path: join(dir, r.pick(files)), head: 1 + r.int(3) }),
      () => read('list_directory', { path: r.pick([dir, join(dir, 'sub')]) }),
      () => read('read_text_file', { path: join(dir, `missing-${u()}.txt`) }),
      () => read('read_text_file', { path: `/etc/${u()}` }),
      () => write('write_file', { path: join(dir, r.pick(files)), content: `${u()}\n${text(r, 20)}\n` }),
      () => write('create_directory', { path: join(dir, `d${u()}`) }),
      () => read('search_files', { path: dir, pattern: r.pick(['*.txt', 'c', `*${u()}*`]) }),
      common,
    ])(),
  };
  while (n < STEPS) {
    const size = server === 'everything' ? 1 + r.int(4) : 1;
    const group = [];
    while (group.length < size) {
      const m = gen[server]();
      if (m) group.push(m);
    }
    groups.push(group);
  }
  return groups;
}

function resetState(server, dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'sub'), { recursive: true });
  writeFileSync(join(dir, 'a.txt'), 'alpha\nbeta\ngamma\n');
  writeFileSync(join(dir, 'b.txt'), 'é😀\n');
  writeFileSync(join(dir, 'sub/c.txt'), '');
}

// Runs one session; returns the answers (id and result/error) in order.
async function run(groups, server, dir, proxied) {
  resetState(server, dir);
  const memFile = join(dir, 'memory.jsonl');
  const cmd = [process.execPath, ...SERVERS[server], ...(server === 'filesystem' ? [dir] : [])];
  const [exe, ...args] = proxied ? [BIN, 'mcp', '--name', server, '--', ...cmd] : cmd;
  const child = spawn(exe, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, MEMORY_FILE_PATH: memFile } });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const answers = [];
  let unparsable = 0;
  let wake = null;
  let buf = Buffer.alloc(0);
  child.stdout.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    let nl;
    while ((nl = buf.indexOf(0x0a)) >= 0) {
      const line = buf.subarray(0, nl).toString('utf8');
      buf = buf.subarray(nl + 1);
      if (!line.trim()) continue;
      let m;
      try { m = JSON.parse(line); } catch { unparsable += 1; continue; }
      if (m.id !== undefined && (m.result !== undefined || m.error !== undefined)) {
        answers.push(JSON.stringify({ id: m.id, result: m.result, error: m.error }));
        if (wake) wake();
      }
    }
  });
  const exited = new Promise((r) => child.on('exit', r));
  const waitFor = async (count) => {
    const deadline = Date.now() + 15000;
    while (answers.length < count && Date.now() < deadline) {
      await Promise.race([new Promise((r) => { wake = r; }), new Promise((r) => setTimeout(r, 100))]);
    }
  };
  const send = (msgs) => child.stdin.write(msgs.map((m) => JSON.stringify(m) + '\n').join(''));
  send([{ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'differential', version: '1' } } }]);
  await waitFor(1);
  send([{ jsonrpc: '2.0', method: 'notifications/initialized' }]);
  let expected = 1;
  for (const g of groups) {
    send(g);
    expected += g.filter((m) => m.id !== undefined).length;
    await waitFor(expected);
  }
  child.stdin.end();
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
  if (unparsable) answers.push(`UNPARSABLE LINES: ${unparsable}`);
  return { answers, stderr };
}

let compared = 0;
let answersCompared = 0;
let differences = 0;
const names = Object.keys(SERVERS);
for (let i = 0; i < SESSIONS; i++) {
  const server = names[i % names.length];
  const seed = SEED * 1000003 + i;
  const dir = join(work, `s-${server}`);
  const groups = generate(seed, server, dir);
  const direct = await run(groups, server, dir, false);
  const proxied = await run(groups, server, dir, true);
  compared += 1;
  answersCompared += direct.answers.length;
  const a = direct.answers;
  const b = proxied.answers;
  const requests = 1 + groups.flat().filter((m) => m.id !== undefined).length;
  let diff = a.length !== requests ? `direct answered ${a.length} of ${requests}` : '';
  for (let k = 0; !diff && k < Math.max(a.length, b.length); k++) {
    if (a[k] !== b[k]) diff = `answer ${k}:\n  direct:  ${(a[k] ?? '(none)').slice(0, 400)}\n  proxied: ${(b[k] ?? '(none)').slice(0, 400)}`;
  }
  if (diff) {
    differences += 1;
    if (differences <= 5) {
      console.error(`DIFFERENCE session ${i} (${server}, seed ${seed}): ${diff}`);
      if (proxied.stderr) console.error(`  proxy stderr: ${proxied.stderr.slice(0, 600)}`);
    }
  }
}
rmSync(work, { recursive: true, force: true });
console.log(`mcp_differential: ${compared} sessions (${answersCompared} answers) compared, `
  + `${differences} with differences (seed ${SEED}, ${STEPS} requests each)`);
process.exit(differences ? 1 : 0);

// Pieces shared by bench/llm_proxy.mjs (latency against nginx and Portkey)
// and bench/llm_proxy_count.mjs (syscalls, instructions, wake-ups): the same
// request bodies, the same nginx configuration and one way to start a
// process and wait for its banner, so the counts and the ratios measure the
// same requests through the same proxies.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';

// --congestion NAME: runs this same command again inside a private network
// namespace (`unshare -n` as root, `unshare -rn` otherwise) whose loopback
// TCP uses congestion control NAME, and exits with its status; returns
// (nothing to do) without the flag or once inside. The machine's own
// setting is untouched. Why (session 16): this machine's default, bbr,
// paces every connection's segments at that connection's own bandwidth
// estimate, also on lo, so a 200 KB write is spread over a time that
// differs per connection and lasts the connection's life; reno does not
// pace. In a user namespace (not root) nginx cannot switch to its worker
// user and does not start.
export function reexecWithCongestion(argv = process.argv.slice(2)) {
  const i = argv.indexOf('--congestion');
  if (i < 0 || process.env.TOOLCACHE_BENCH_NETNS) return;
  const cc = argv[i + 1] ?? '';
  if (!/^[a-z0-9_]+$/.test(cc)) throw new Error(`--congestion NAME (e.g. reno), not ${cc}`);
  const root = process.getuid?.() === 0;
  const r = spawnSync('unshare', [root ? '-n' : '-rn', 'sh', '-c',
    `ip link set lo up && echo ${cc} > /proc/sys/net/ipv4/tcp_congestion_control && exec "$0" "$@"`,
    process.execPath, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, TOOLCACHE_BENCH_NETNS: '1' } });
  if (r.error) throw r.error;
  process.exit(r.status ?? 1);
}

// The congestion control new TCP connections of this network namespace use.
export function congestionControl() {
  try {
    return fs.readFileSync('/proc/sys/net/ipv4/tcp_congestion_control', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

// `cmd argv` started with its output piped; resolves with { child, match }
// once stdout or stderr matches `pattern`, rejects if it exits first.
// child.output keeps everything it printed.
export function startProcess(cmd, argv, pattern, env = process.env) {
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], env });
  return new Promise((resolve, reject) => {
    let out = '';
    child.output = '';
    const on = (d) => {
      out += d;
      child.output += d;
      const m = out.match(pattern);
      if (m) resolve({ child, match: m });
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    child.on('exit', (c) => reject(new Error(`${cmd} exited ${c}: ${out}`)));
  });
}

// An Anthropic request of about `size` bytes: a conversation whose tool
// results carry the bulk, as an agent's history does.
// Claude Code Bash calls of the kinds agents send, none of which changes
// directory (so FirstShellMove reads every one): `history: 'bash'`.
const BASH_CALLS = [
  { command: 'ls -la src', description: 'List the source folder' },
  { command: "grep -rn 'TODO' src --include='*.ts'", description: 'Find the TODOs' },
  { command: 'git log --oneline -10', description: 'Show recent commits' },
  { command: 'npm test 2>&1 | tail -50', description: 'Run the tests. Show the end.' },
  { command: 'python3 -c "import sys; print(sys.version)"', description: 'Print the Python version' },
  { command: "find . -name '*.py' | head -20", description: 'Find Python files' },
  { command: 'cat package.json', description: 'Show package.json' },
  { command: 'echo $PATH | tr : \'\\n\'', description: 'Show PATH' },
];

// A conversation of about `size` bytes: tool calls and their results,
// `Read` calls (`history: 'read'`, the default) or Claude Code `Bash`
// calls (`history: 'bash'`).
export function requestBody(size, stream, history = 'read') {
  const messages = [{ role: 'user', content: 'go' }];
  let i = 0;
  const filler = 'lorem ipsum dolor sit amet, consectetur adipiscing elit. ';
  while (JSON.stringify(messages).length < size - 300) {
    const id = `toolu_b${i++}`;
    const use = history === 'bash'
      ? { type: 'tool_use', id, name: 'Bash', input: BASH_CALLS[i % BASH_CALLS.length] }
      : { type: 'tool_use', id, name: 'Read', input: { file_path: `/src/f${i}.txt` } };
    messages.push({ role: 'assistant', content: [use] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: filler.repeat(Math.min(40, Math.ceil((size - JSON.stringify(messages).length) / filler.length))) }] });
  }
  const tools = [{ name: 'Read', description: 'Reads a file', input_schema: { type: 'object' } }];
  if (history === 'bash') tools.push({ name: 'Bash', description: 'Runs a command', input_schema: { type: 'object' } });
  return JSON.stringify({ model: 'claude-bench', max_tokens: 64, stream, tools, messages });
}

// nginx as a plain reverse proxy to `up` (a URL), in the temporary prefix
// `dir`, listening on `port`: one worker (toolcache's proxy runs its loop on
// one thread too), upstream keep-alive, bodies buffered in memory (toolcache
// reads the whole request too), responses streamed (proxy_buffering off, as
// SSE needs). `singleProcess` adds `master_process off` (one process to
// trace or count).
export function nginxConf(dir, port, up, { singleProcess = false } = {}) {
  return `worker_processes 1;
${singleProcess ? 'master_process off;\n' : ''}daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream fake { server ${up.hostname}:${up.port}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 64m;
    client_body_buffer_size 4m;
    location / {
      proxy_pass http://fake;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`;
}

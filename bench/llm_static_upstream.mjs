// A bench upstream whose own latency is small and steady: it answers every
// POST with pre-built bytes (a JSON body, or SSE events written one write
// per event as tests/llm/fake_upstream.mjs writes them) and keeps nothing
// of the request. The fake upstream builds each reply from the parsed
// request and keeps every request it received (its p99 is 3-14 ms at
// 200 KB, its garbage collector's), which swamps the proxies' added p99;
// this one parses nothing and retains nothing.
//
// The replies are the fake upstream's own: bench/llm_proxy.mjs
// (--upstream static) sends each block's request to the fake upstream
// once, then loads the reply it got here (POST /__canned/json or
// /__canned/sse, body = the reply's bytes, x-canned-headers = its headers
// as JSON), so the proxies relay, parse and observe the same bytes as with
// the fake upstream.
//
// A request is "streamed" when its body contains `"stream":true` (the
// bench's bodies, and Portkey's re-serialisation of them, write it so; a
// tool result cannot, its quotes are escaped).
//
// Usage: node bench/llm_static_upstream.mjs [--port N]  (prints its URL)
import http from 'node:http';

const args = process.argv.slice(2);
const port = Number(args[args.indexOf('--port') + 1] || 0) || 0;
const STREAM = Buffer.from('"stream":true');
const canned = {
  json: { headers: { 'content-type': 'application/json' }, body: Buffer.from('{}'), events: [] },
  sse: { headers: { 'content-type': 'text/event-stream' }, body: Buffer.from(''), events: [] },
};
let served = 0;

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (d) => chunks.push(d));
  req.on('end', () => {
    if (req.url.startsWith('/__canned/')) {
      const kind = req.url.slice('/__canned/'.length);
      if (!canned[kind]) return res.writeHead(404).end();
      const body = Buffer.concat(chunks);
      const text = body.toString('utf8');
      // SSE events end with a blank line; each is one write, as the fake's.
      const events = kind === 'sse'
        ? text.split(/(?<=\n\n)/).filter((e) => e.length > 0).map((e) => Buffer.from(e))
        : [];
      canned[kind] = { headers: JSON.parse(req.headers['x-canned-headers'] || '{}'), body, events };
      return res.writeHead(204).end();
    }
    if (req.url === '/__served') {
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ served }));
    }
    ++served;
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    const c = body.indexOf(STREAM) >= 0 ? canned.sse : canned.json;
    res.writeHead(200, c.headers);
    if (c.events.length === 0) return res.end(c.body);
    let i = 0;
    const next = () => {
      if (i === c.events.length) return res.end();
      res.write(c.events[i++], next);
    };
    next();
  });
});
server.keepAliveTimeout = 30000;
server.listen(port, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}`));
for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => process.exit(0));

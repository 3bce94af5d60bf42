// A TLS front for the e2e tests of `toolcache mcp --url https://...`:
// terminates HTTPS with the given certificate on 127.0.0.1 (a free port) and
// relays every request and response, streamed, to a plain-HTTP MCP server on
// 127.0.0.1:UPSTREAM_PORT. Prints "listening PORT" once ready.
// Usage: node tls_front.mjs CERT.pem KEY.pem UPSTREAM_PORT
import https from 'node:https';
import http from 'node:http';
import { readFileSync } from 'node:fs';

const [cert, key, upstreamPort] = process.argv.slice(2);
const server = https.createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
  const up = http.request({
    host: '127.0.0.1', port: Number(upstreamPort), method: req.method, path: req.url, headers: req.headers,
  }, (upRes) => {
    res.writeHead(upRes.statusCode, upRes.headers);
    upRes.pipe(res);
  });
  up.on('error', () => { res.writeHead(502); res.end('bad gateway'); });
  req.pipe(up);
  res.on('close', () => up.destroy());
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));

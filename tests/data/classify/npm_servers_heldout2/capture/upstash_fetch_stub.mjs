// Capture shim: the server checks its credentials against the vendor API
// before it lists tools; answer every request with an empty JSON list.
globalThis.fetch = async () => new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } });

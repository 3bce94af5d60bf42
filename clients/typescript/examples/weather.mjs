// Example: a function tool (shaped like a Vercel AI SDK / OpenAI Agents SDK
// tool: { description, parameters, execute }) whose execute goes through
// `toolcache serve`.
//   toolcache serve --config clients/serve.example.yaml &
//   TOOLCACHE_URL=http://127.0.0.1:8090 TOOLCACHE_TOKEN=alice-secret \
//     node clients/typescript/examples/weather.mjs
import { ToolCacheClient, cacheTool } from '../index.mjs';

const tc = new ToolCacheClient(process.env.TOOLCACHE_URL ?? 'http://127.0.0.1:8090',
  { token: process.env.TOOLCACHE_TOKEN });

export const getWeather = {
  description: 'Current weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: cacheTool(tc, 'weather', 'get_weather', async ({ city }) => {
    await new Promise((r) => setTimeout(r, 200));  // the slow upstream API
    return { city, tempC: 21 };
  }, { cost: 0.002 }),
};

if (import.meta.url === `file://${process.argv[1]}`) {
  for (let i = 0; i < 3; ++i) {
    const t0 = performance.now();
    const r = await getWeather.execute({ city: 'Paris' });
    console.log(r, `${(performance.now() - t0).toFixed(1)} ms`);
  }
  console.log(await tc.explain('weather', 'get_weather', { city: 'Paris' }));
}

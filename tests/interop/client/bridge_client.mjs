// Drive `orkestrel-mcp bridge` (in front of server-everything) with the official TypeScript SDK
// client over Streamable HTTP: node bridge_client.mjs http://127.0.0.1:PORT/mcp
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.argv[2]);
const client = new Client({ name: 'orkestrel-interop', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(url));
const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
assert.ok(names.includes('echo') && names.includes('get-sum'), `tools: ${names}`);
const echo = tools.find((t) => t.name === 'echo');
assert.equal(echo.inputSchema.type, 'object');
const echoed = await client.callTool({ name: 'echo', arguments: { message: 'through the bridge' } });
assert.equal(echoed.content[0].text, 'Echo: through the bridge');
const sum = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
assert.match(sum.content[0].text, /42/);
const image = await client.callTool({ name: 'get-tiny-image', arguments: {} });
assert.ok(image.content.some((c) => c.type === 'image' && c.mimeType === 'image/png'), JSON.stringify(image));
await client.close();
console.log(`bridge ok: ${names.length} tools`);

// A Worker-style module on the wasm package: `export default { fetch }` is all a Worker runtime
// (or tests/wasm/node_adapter.mjs) needs. The package path comes from ORKESTREL_MCP_PKG (the
// nodejs build by default) so the same file serves the tests.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pkg = require(process.env.ORKESTREL_MCP_PKG ?? '../../target/wasm-pkg/node/orkestrel_mcp.js');

export const server = pkg.createMCPServer({
  name: 'wasm-worker',
  version: '1.0.0',
  tools: [
    {
      name: 'echo',
      description: 'Echo the text back',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      execute: ({ text }) => text,
    },
    {
      name: 'add',
      description: 'Add two numbers',
      inputSchema: {
        type: 'object',
        properties: { x: { type: 'number' }, y: { type: 'number' } },
        required: ['x', 'y'],
      },
      execute: async ({ x, y }) => x + y,
    },
    {
      name: 'fail',
      description: 'Always fails',
      execute: () => {
        throw new Error('this tool always fails');
      },
    },
  ],
});

export default { fetch: (request) => server.fetch(request) };

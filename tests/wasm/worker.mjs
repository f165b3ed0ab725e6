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
      name: 'count',
      description: 'Count to n, sending progress on the way',
      inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      execute: async ({ n }, context) => {
        for (let i = 1; i <= n; i++) {
          context.progress(i, n, `step ${i}`);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        return `counted to ${n}`;
      },
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

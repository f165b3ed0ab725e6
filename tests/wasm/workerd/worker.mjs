// A module Worker on the wasm package, as a user deploys it to Cloudflare: the web-target glue
// (`wasm-pack build --target web`) and its `.wasm` imported as modules, `initSync` with the
// compiled `WebAssembly.Module`, and `export default { fetch }` serving the stateless Streamable
// HTTP route at /mcp (both protocol eras). config.capnp lays the same files out for `workerd`;
// wrangler.jsonc is the README's layout (src/worker.mjs, src/pkg/), which test.mjs serves as well.
import { initSync, createMCPServer } from './pkg/orkestrel_mcp.js';
import wasm from './pkg/orkestrel_mcp_bg.wasm';

initSync({ module: wasm });

const server = createMCPServer({
  name: 'workerd-worker',
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

export default {
  fetch: (request) => server.fetch(request),
};

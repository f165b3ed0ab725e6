// Type-checks a consumer of the package's .d.ts under `tsc --strict` (run by run.sh): the
// declarations are real types, not `any`. Never executed.
import {
  createMCPServer,
  isJSONRPCMessage,
  jsonRPCError,
  jsonRPCResult,
  parseJSONRPCMessage,
  MCP_PROTOCOL_VERSION,
  JSONRPC_PARSE_ERROR,
  type JSONRPCResponse,
  type MCPTool,
  type MCPToolContext,
  type MCPToolResult,
  type RequestId,
} from '../../target/wasm-pkg/web/orkestrel_mcp.js';

const echo: MCPTool = {
  name: 'echo',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  execute: (args: Record<string, unknown>, context: MCPToolContext) => {
    context.progress(1, 2, 'half');
    context.log('info', { step: 1 });
    const id: RequestId | undefined = context.requestId;
    return String(args.text) + String(id);
  },
};
const server = createMCPServer({ name: 'n', version: '1', tools: [echo], error: (e, event) => void [e, event] });
server.on('request', (method: string, id: RequestId | undefined) => void [method, id]);

export async function uses(request: Request): Promise<[string | undefined, Response]> {
  const reply: string | undefined = await server.handle('{"jsonrpc":"2.0","id":1,"method":"ping"}');
  const response: JSONRPCResponse | undefined = await server.dispatch({ jsonrpc: '2.0', id: 2n ** 60n, method: 'ping' });
  if (response && 'result' in response) {
    const id: RequestId = response.id;
    void id;
  }
  const value: unknown = JSON.parse('{}');
  if (isJSONRPCMessage(value)) {
    const method: string | undefined = 'method' in value ? value.method : undefined;
    void method;
  }
  const parsed = parseJSONRPCMessage(value);
  const ok = jsonRPCResult(1, { a: 1 });
  const err = jsonRPCError(null, JSONRPC_PARSE_ERROR, 'Parse error');
  const code: number = err.error.code;
  const version: string = MCP_PROTOCOL_VERSION;
  const tools: string[] = server.listTools().map((t) => t.name);
  const result: MCPToolResult = { content: [{ type: 'text', text: 'x' }] };
  void [parsed, ok, code, version, tools, result];
  return [reply, await server.fetch(request)];
}

// @ts-expect-error: execute is required
const broken: MCPTool = { name: 'x' };
void broken;
// @ts-expect-error: only 'request' events exist
server.on('other', () => {});

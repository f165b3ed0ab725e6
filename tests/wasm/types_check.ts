// Type-checks a consumer of the package's .d.ts under `tsc --strict` (run by run.sh): the
// declarations are real types, not `any`. Never executed.
import {
  createFetchTransport,
  createMCPClient,
  createMCPServer,
  createWebSocketTransport,
  isJSONRPCMessage,
  jsonRPCError,
  jsonRPCResult,
  parseJSONRPCMessage,
  MCP_PROTOCOL_VERSION,
  JSONRPC_PARSE_ERROR,
  type JSONRPCResponse,
  type JSONRPCMessage,
  type MCPClient,
  type MCPClientError,
  type MCPError,
  type MCPCustomTransport,
  type MCPDiscoverResult,
  type MCPServerImplementation,
  type MCPInitializeResult,
  type MCPTool,
  type MCPToolDescriptor,
  type MCPTransport,
  type MCPTransportSink,
  type MCPToolContext,
  type MCPToolResult,
  type MCPTask,
  type MCPToolCall,
  type MCPClientHandlers,
  type MCPClientAuthOptions,
  type MCPStoredCredentials,
  type MCPResource,
  type MCPResourceTemplate,
  type MCPReadResourceResult,
  type MCPPrompt,
  type MCPGetPromptResult,
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

// The client: transports, options, events, results.
const http: MCPTransport = createFetchTransport({
  url: 'http://127.0.0.1:3000/mcp',
  headers: { authorization: 'Bearer x' },
  fetch: (request: Request) => server.fetch(request),
});
const kind: 'http' | 'websocket' = http.kind;
// OAuth: a sign-in in a popup, the tokens in localStorage.
const auth: MCPClientAuthOptions = {
  redirectUri: 'http://127.0.0.1:8080/callback.html',
  scope: 'mcp:tools',
  signIn: async (url: string) => `${url}&code=c`,
  load: () => JSON.parse(localStorage.getItem('tokens') ?? 'null') as MCPStoredCredentials | null,
  save: (credentials: MCPStoredCredentials) => {
    const expires: number | undefined = credentials.tokens?.expiresAt;
    void expires;
    localStorage.setItem('tokens', JSON.stringify(credentials));
  },
};
createFetchTransport({ url: 'http://127.0.0.1:3000/mcp', auth });
const ws: MCPTransport = createWebSocketTransport({ url: 'ws://127.0.0.1:3000/mcp' });
let sinkSeen: MCPTransportSink | undefined;
const custom: MCPCustomTransport = {
  start(sink: MCPTransportSink) {
    sinkSeen = sink;
  },
  async send(message: JSONRPCMessage) {
    const reply = await server.handle(JSON.stringify(message));
    if (reply !== undefined) sinkSeen?.receive(reply);
  },
};
const client: MCPClient = createMCPClient({
  transport: kind === 'http' ? http : custom,
  timeout: 5000,
  era: 'auto',
  name: 'types',
  version: '1.0.0',
  trace: (direction: 'send' | 'receive', message: JSONRPCMessage | JSONRPCMessage[]) => void [direction, message],
});
client.on('connect', () => {});
client.on('disconnect', (cause: string) => void cause);
client.on('notification', (message) => void message.method);
client.on('error', (error: MCPError) => void [error.code, error.data, (error as MCPClientError).kind]);

export async function usesClient(): Promise<unknown> {
  await client.connect();
  const connected: boolean = client.connected;
  const info: MCPInitializeResult | undefined = client.initializeResult;
  const session: string | undefined = client.sessionId;
  const version: string | undefined = client.protocolVersion;
  const era: 'legacy' | 'modern' | undefined = client.era;
  const discover: MCPDiscoverResult | undefined = client.discoverResult;
  const versions: string[] | undefined = discover?.supportedVersions;
  const serverInfo: MCPServerImplementation | undefined = client.serverInfo;
  const serverName: string | undefined = serverInfo?.name;
  const tools: MCPToolDescriptor[] = await client.tools();
  const whole: MCPToolResult = await client.callTool('echo', { text: 'x' }, { timeout: 1000 });
  const value: unknown = await client.call('add', { x: 1, y: 2 });
  const pong: unknown = await client.request('ping');
  const call: MCPToolCall = await client.callToolAsTask('report', {}, { ttl: 60000 });
  if (call.type === 'task') {
    const id: string = call.task.taskId;
    const state: MCPTask = await client.getTask(id);
    const interval: number | undefined = state.pollIntervalMs;
    const done: MCPToolResult = await client.waitTask(id, { onStatus: (t: MCPTask) => void t.status, timeout: 60000 });
    await client.cancelTask(id);
    void [interval, done];
  } else {
    const plain: MCPToolResult = call.result;
    void plain;
  }
  const caps: Record<string, unknown> | undefined = client.serverCapabilities;
  const resources: MCPResource[] = await client.listResources();
  const templates: MCPResourceTemplate[] = await client.listResourceTemplates();
  const read: MCPReadResourceResult = await client.readResource(resources[0].uri);
  const text: string | undefined = read.contents[0].text;
  await client.subscribeResource('mem://a');
  await client.unsubscribeResource('mem://a');
  const prompts: MCPPrompt[] = await client.listPrompts();
  const prompt: MCPGetPromptResult = await client.getPrompt(prompts[0].name, { name: 'Ada' });
  const role: 'user' | 'assistant' = prompt.messages[0].role;
  await client.setLoggingLevel('warning');
  const watched: MCPToolResult = await client.callTool('progress', {}, {
    onProgress: (p: { progress: number; total?: number; message?: string }) => void [p.progress, p.total, p.message],
    logLevel: 'info',
  });
  void watched;
  void [caps, templates, text, role];
  await client.disconnect();
  void [connected, info, session, version, era, versions, serverName, tools, whole, pong, ws];
  return value;
}

const handlers: MCPClientHandlers = {
  elicit: async (params) => ({ action: 'accept', content: { name: params.message } }),
  listRoots: () => ({ roots: [{ uri: 'file:///tmp' }] }),
};
createMCPClient({ transport: custom, handlers });
// @ts-expect-error: a task id is a string
client.getTask(1);
// @ts-expect-error: only the four client events exist
client.on('message', () => {});
// @ts-expect-error: a disconnect listener gets a string cause
client.on('disconnect', (cause: number) => void cause);
// @ts-expect-error: the era is 'auto', 'legacy' or 'modern'
createMCPClient({ transport: custom, era: 'stateless' });
// @ts-expect-error: a transport needs a url
createFetchTransport({});
// @ts-expect-error: a sign-in needs its redirect URI
createFetchTransport({ url: 'http://127.0.0.1:3000/mcp', auth: { signIn: async () => '' } });

// The browser MCP console on the orkestrel-mcp wasm package.
//
// Every mode is a *connection*: `{ label, open() → info, listTools(), callTool(name, args), close() }`
// whose methods throw an Error with `code` / `data` (an MCPError) on failure and report each
// message sent or received to `traffic`. Two connections exist: the in-page wasm server (its
// string boundary, `handle`), and a remote server through the wasm MCP client (createMCPClient
// over createFetchTransport for http(s):// or createWebSocketTransport for ws(s)://). The page
// (tool list, forms, results) only talks to a connection. A remote server that asks for OAuth
// gets a sign-in in a popup (auth.js, callback.html); the tokens stay in localStorage.
import { authOptions, forgetCredentials, keptCredentials, signedInAs } from './auth.js';
import init, {
  createFetchTransport,
  createMCPClient,
  createMCPServer,
  createWebSocketTransport,
  MCP_PROTOCOL_VERSION,
} from './pkg/orkestrel_mcp.js';
import { renderExplore, resetExplore } from './explore.js';

const $ = (selector) => document.querySelector(selector);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (v !== undefined && v !== false) node.setAttribute(k, v === true ? '' : v);
  }
  node.append(...children);
  return node;
};

// ---- traffic ------------------------------------------------------------------------------

const traffic = {
  log(direction, text) {
    let pretty = text;
    let isError = false;
    try {
      const value = JSON.parse(text);
      pretty = JSON.stringify(value, null, 2);
      isError = Boolean(value && value.error);
    } catch {
      /* not JSON: show as is */
    }
    const cls = `dir ${direction === '→' ? 'out' : 'in'}${isError || direction === '!' ? ' err' : ''}`;
    const label = direction === '→' ? '→ sent' : direction === '←' ? '← received' : '! error';
    $('#traffic').append(el('li', {}, el('span', { class: cls, text: label }), el('pre', { text: pretty })));
    $('#traffic').lastElementChild.scrollIntoView({ block: 'nearest' });
  },
  clear() {
    $('#traffic').replaceChildren();
  },
};

// ---- connections ----------------------------------------------------------------------------

/** An MCP error as a JS Error keeping `code` and `data` (as the wasm package's MCPError). */
function mcpError(error) {
  const e = new Error(error.message);
  e.name = 'MCPError';
  e.code = error.code;
  e.data = error.data;
  return e;
}

/** JSON text of a message, with `bigint` ids written as the integers they are. */
function toJSON(value) {
  const marks = [];
  const text = JSON.stringify(value, (_, v) => {
    if (typeof v !== 'bigint') return v;
    marks.push(v.toString());
    return `\u0000big${marks.length - 1}\u0000`;
  });
  return text.replace(/"\\u0000big(\d+)\\u0000"/g, (_, i) => marks[Number(i)]);
}

/** The remote mode: the wasm MCP client over fetch (http/https) or WebSocket (ws/wss), in
 * `era` (`'auto'`, `'modern'` or `'legacy'`; the client's own default when undefined). */
function remoteConnection(url, era) {
  const scheme = new URL(url).protocol;
  let transport;
  if (scheme === 'http:' || scheme === 'https:') {
    const auth = authOptions(url, { onBlocked: offerSignIn, onSaved: () => signedIn(url) });
    transport = createFetchTransport({ url, auth });
  }
  else if (scheme === 'ws:' || scheme === 'wss:') transport = createWebSocketTransport({ url });
  else throw new Error(`${url}: use an http(s):// or ws(s):// URL`);
  const kind = transport.kind;
  const client = createMCPClient({
    transport,
    name: 'orkestrel-mcp www',
    version: '0.1.0',
    timeout: 30000,
    era,
    trace: (direction, message) => traffic.log(direction === 'send' ? '→' : '←', toJSON(message)),
  });
  client.on('disconnect', (cause) => {
    if (current?.client === client) {
      setStatus(`disconnected: ${cause}`, 'err');
      $('#disconnect').disabled = true;
    }
  });
  client.on('error', (e) => {
    traffic.log('!', toJSON({ error: { message: e.message, code: e.code } }));
    // The transport's report of a failed sign-in ("MCP transport error: authorization failed: …").
    const at = e.message.indexOf('authorization failed');
    if (at >= 0) renderAuth(url, e.message.slice(at));
  });
  const connection = {
    client,
    label: `${url} (${kind === 'http' ? 'Streamable HTTP' : 'WebSocket'})`,
    async open() {
      await client.connect();
      // Either era: `serverInfo` comes from the initialize result (legacy) or the
      // server/discover result (2026-07-28, no handshake, no session).
      return {
        serverInfo: client.serverInfo ?? { name: '(unnamed server)', version: '?' },
        protocolVersion: client.protocolVersion,
        era: client.era,
        session: client.sessionId,
        kind,
      };
    },
    listTools: () => client.tools(),
    // The notifications pane's options: a progress token, its log level (explore.js).
    callTool: (name, args) => client.callTool(name, args, explore?.requestOptions()),
    close: () => client.disconnect(),
  };
  // The server changed its tools (e.g. on the GET stream): list them again.
  client.on('notification', async (message) => {
    if (message.method !== 'notifications/tools/list_changed' || current !== connection) return;
    try {
      renderTools(connection, await client.tools());
    } catch (e) {
      renderError('Could not list the tools again', e);
    }
  });
  return connection;
}

/** The in-page mode: a wasm MCP server over JS tools, called through its string boundary. */
function localConnection(tools) {
  const server = createMCPServer({ name: 'in-page', version: '1.0.0', tools });
  let next = 1;
  const connection = {
    label: `${server.name} ${server.version} (wasm, in this page)`,
    async request(method, params) {
      const text = JSON.stringify({ jsonrpc: '2.0', id: next++, method, params });
      traffic.log('→', text);
      const reply = await server.handle(text);
      traffic.log('←', reply);
      const message = JSON.parse(reply);
      if (message.error) throw mcpError(message.error);
      return message.result;
    },
    async notify(method, params) {
      const text = JSON.stringify({ jsonrpc: '2.0', method, params });
      traffic.log('→', text);
      await server.handle(text);
    },
    async open() {
      const info = await connection.request('initialize', {
        protocolVersion: MCP_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'orkestrel-mcp www', version: '0.1.0' },
      });
      await connection.notify('notifications/initialized');
      connection.capabilities = info.capabilities;
      return info;
    },
    listTools: async () => (await connection.request('tools/list', {})).tools,
    callTool: (name, args) => connection.request('tools/call', { name, arguments: args }),
    close() {
      server.free();
    },
  };
  return connection;
}

// ---- the default tools (editable in the page) ---------------------------------------------

const DEFAULT_TOOLS = `[
  {
    name: 'echo',
    description: 'Echo the text back',
    inputSchema: { type: 'object', properties: { text: { type: 'string', description: 'What to echo' } }, required: ['text'] },
    execute: ({ text }) => text,
  },
  {
    name: 'add',
    description: 'Add two numbers',
    inputSchema: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] },
    execute: async ({ x, y }) => x + y,
  },
  {
    name: 'describe',
    description: 'Return a JSON object about the input',
    inputSchema: { type: 'object', properties: { word: { type: 'string' }, shout: { type: 'boolean' },
      unit: { type: 'string', enum: ['chars', 'bytes'] } } },
    execute: ({ word = '', shout = false, unit = 'chars' }) => ({
      word: shout ? word.toUpperCase() : word,
      length: unit === 'bytes' ? new TextEncoder().encode(word).length : [...word].length,
      unit,
    }),
  },
  {
    name: 'swatch',
    description: 'Draw a colour swatch (an image result)',
    inputSchema: { type: 'object', properties: { color: { type: 'string', default: '#2f6fde' } } },
    execute: async ({ color = '#2f6fde' }) => {
      const canvas = document.createElement('canvas');
      canvas.width = 96; canvas.height = 48;
      const g = canvas.getContext('2d');
      g.fillStyle = color; g.fillRect(0, 0, 96, 48);
      g.fillStyle = '#fff'; g.font = '14px sans-serif'; g.fillText(color, 8, 29);
      const data = canvas.toDataURL('image/png').split(',')[1];
      return { content: [{ type: 'image', data, mimeType: 'image/png' }, { type: 'text', text: 'a ' + color + ' swatch' }] };
    },
  },
  {
    name: 'fail',
    description: 'Always throws (an isError result)',
    execute: () => { throw new Error('this tool always fails'); },
  },
]`;

function evaluateTools(source) {
  // The page's own tool source, written by the person using it: evaluated as an expression.
  const tools = new Function(`"use strict"; return (${source});`)();
  if (!Array.isArray(tools)) throw new Error('the tool source must evaluate to an array');
  return tools;
}

// ---- forms from inputSchema -----------------------------------------------------------------

function fieldFor(name, schema = {}, required = false) {
  const id = `f-${Math.random().toString(36).slice(2)}`;
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  let input;
  if (Array.isArray(schema.enum)) {
    input = el('select', { id, name }, ...schema.enum.map((v) => el('option', { value: JSON.stringify(v), text: String(v) })));
    input.dataset.kind = 'enum';
  } else if (type === 'boolean') {
    input = el('input', { id, name, type: 'checkbox', checked: schema.default === true });
    input.dataset.kind = 'boolean';
  } else if (type === 'number' || type === 'integer') {
    input = el('input', { id, name, type: 'number', step: type === 'integer' ? '1' : 'any', value: schema.default ?? '' });
    input.dataset.kind = 'number';
  } else if (type === 'object' || type === 'array') {
    input = el('textarea', { id, name, rows: '3', placeholder: type === 'array' ? '[]' : '{}' });
    input.dataset.kind = 'json';
  } else {
    input = el('input', { id, name, type: 'text', value: schema.default ?? '' });
    input.dataset.kind = 'string';
  }
  input.required = required;
  const caption = el('span', {}, `${name}${type ? ` (${type})` : ''}`);
  if (required) caption.append(el('span', { class: 'req', text: ' *' }));
  if (schema.description) caption.append(el('span', { class: 'muted', text: ` — ${schema.description}` }));
  return el('label', { for: id }, caption, input);
}

function readForm(form) {
  const args = {};
  for (const input of form.querySelectorAll('[name]')) {
    const { kind } = input.dataset;
    if (kind === 'boolean') args[input.name] = input.checked;
    else if (input.value === '' && !input.required) continue;
    else if (kind === 'number') args[input.name] = Number(input.value);
    else if (kind === 'enum' || kind === 'json') {
      try {
        args[input.name] = JSON.parse(input.value);
      } catch {
        throw new Error(`${input.name}: not valid JSON`);
      }
    } else args[input.name] = input.value;
  }
  return args;
}

function renderTools(connection, tools) {
  const list = $('#tools');
  list.replaceChildren();
  if (!tools.length) list.append(el('p', { class: 'muted', text: 'The server has no tools.' }));
  for (const tool of tools) {
    const schema = tool.inputSchema ?? {};
    const required = new Set(schema.required ?? []);
    const form = el('form', { 'data-tool': tool.name });
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      form.append(fieldFor(name, prop, required.has(name)));
    }
    form.append(el('div', { class: 'row' }, el('button', { type: 'submit', text: `Call ${tool.name}` })));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      await callTool(connection, tool.name, form);
    });
    list.append(el('div', { class: 'tool' }, el('h3', { text: tool.title ?? tool.name }),
      el('p', { text: tool.description ?? '' }), form));
  }
}

// ---- results --------------------------------------------------------------------------------

function renderError(title, error) {
  const box = el('div', { class: 'error', role: 'alert' }, el('strong', { text: title }),
    el('pre', { text: error.code !== undefined ? `MCP error ${error.code}: ${error.message}` : String(error.message ?? error) }));
  if (error.data !== undefined) box.append(el('pre', { text: JSON.stringify(error.data, null, 2) }));
  $('#result').replaceChildren(box);
}

function renderBlock(block) {
  if (block.type === 'text') {
    let parsed;
    try {
      parsed = JSON.parse(block.text);
    } catch {
      /* plain text */
    }
    if (parsed !== undefined && typeof parsed === 'object' && parsed !== null) {
      return el('div', { class: 'block json' }, el('span', { class: 'kind', text: 'json' }),
        el('pre', { text: JSON.stringify(parsed, null, 2) }));
    }
    return el('div', { class: 'block text' }, el('span', { class: 'kind', text: 'text' }), el('pre', { text: block.text }));
  }
  if (block.type === 'image') {
    return el('div', { class: 'block image' }, el('span', { class: 'kind', text: block.mimeType }),
      el('img', { src: `data:${block.mimeType};base64,${block.data}`, alt: 'image result' }));
  }
  return el('div', { class: 'block other' }, el('span', { class: 'kind', text: block.type }),
    el('pre', { text: JSON.stringify(block, null, 2) }));
}

async function callTool(connection, name, form) {
  let args;
  try {
    args = readForm(form);
  } catch (e) {
    renderError('Bad input', e);
    return;
  }
  try {
    const result = await connection.callTool(name, args);
    if (result.isError) {
      const text = (result.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
      renderError(`The tool ${name} failed`, { message: text });
      return;
    }
    const out = el('div', { class: 'result-ok', 'data-result-for': name });
    out.append(...(result.content ?? []).map(renderBlock));
    if (result.structuredContent !== undefined) {
      out.append(el('div', { class: 'block json' }, el('span', { class: 'kind', text: 'structuredContent' }),
        el('pre', { text: JSON.stringify(result.structuredContent, null, 2) })));
    }
    if (!out.childElementCount) out.append(el('p', { class: 'muted', text: '(no content)' }));
    $('#result').replaceChildren(out);
  } catch (e) {
    renderError(`Calling ${name} failed`, e);
  }
}

// ---- modes ----------------------------------------------------------------------------------

let current;
let selectedMode;
/** The resources, prompts and notifications panes of `current` (explore.js). */
let explore;

function resetPanels(note) {
  traffic.clear();
  $('#tools').replaceChildren(el('p', { class: 'muted', text: note }));
  $('#result').replaceChildren(el('p', { class: 'muted', text: 'Call a tool to see its result.' }));
  resetExplore($('#explore'), note);
}

async function closeCurrent() {
  const previous = current;
  current = undefined;
  explore?.close();
  explore = undefined;
  try {
    await previous?.close?.();
  } catch {
    /* closing is best effort */
  }
}

async function startLocal() {
  await closeCurrent();
  resetPanels('No server yet.');
  try {
    const connection = localConnection(evaluateTools($('#tools-source').value));
    const info = await connection.open();
    const tools = await connection.listTools();
    current = connection;
    $('#server-info').textContent = `${info.serverInfo.name} ${info.serverInfo.version}, protocol ${info.protocolVersion}, ${tools.length} tools`;
    renderTools(connection, tools);
    explore = renderExplore(connection, $('#explore'));
    setStatus(`serving ${tools.length} tools in the page`, 'ok');
  } catch (e) {
    $('#tools').replaceChildren(el('p', { class: 'muted', text: 'No server.' }));
    renderError('Could not start the server', e);
    setStatus('server failed to start', 'err');
  }
}

async function connectRemote(event) {
  event?.preventDefault();
  await closeCurrent();
  resetPanels('Connecting…');
  $('#remote-info').textContent = '';
  const url = $('#server-url').value.trim();
  delete document.body.dataset.remote;
  renderAuth(url);
  setStatus(`connecting to ${url}…`);
  $('#connect').disabled = true;
  try {
    const connection = remoteConnection(url, $('#era').value || undefined);
    current = connection;
    const info = await connection.open();
    const tools = await connection.listTools();
    if (current !== connection) return;
    const session = info.session ? `, session ${info.session}` : '';
    $('#remote-info').textContent = `${info.serverInfo.name} ${info.serverInfo.version} over ${info.kind === 'http' ? 'Streamable HTTP' : 'WebSocket'}, protocol ${info.protocolVersion} (${info.era} era)${session}, ${tools.length} tools`;
    document.body.dataset.protocol = info.protocolVersion ?? '';
    document.body.dataset.era = info.era ?? '';
    renderTools(connection, tools);
    explore = renderExplore(connection, $('#explore'));
    setStatus(`connected to ${url} (${tools.length} tools)`, 'ok');
    $('#disconnect').disabled = false;
    document.body.dataset.remote = 'connected';
  } catch (e) {
    current = undefined;
    $('#tools').replaceChildren(el('p', { class: 'muted', text: 'Not connected.' }));
    renderError(`Could not connect to ${url}`, e);
    setStatus('connection failed', 'err');
    document.body.dataset.remote = 'failed';
  } finally {
    $('#connect').disabled = false;
  }
}

// ---- sign-in (auth.js) ---------------------------------------------------------------------

/** Show who is signed in to `url` (and `problem`, the last sign-in failure), with Sign out. */
function renderAuth(url, problem) {
  const who = signedInAs(keptCredentials(url));
  const box = $('#auth');
  box.hidden = !who && !problem;
  document.body.dataset.auth = who ? 'signed-in' : 'signed-out';
  const parts = [];
  if (who) {
    parts.push(`Signed in${who.subject ? ` as ${who.subject}` : ''} at ${who.issuer}`);
    if (who.scope) parts.push(`scope ${who.scope}`);
    if (who.expiresAt) parts.push(`token until ${new Date(who.expiresAt).toLocaleTimeString()}`);
  }
  $('#auth-info').textContent = parts.join(' · ');
  $('#auth-problem').textContent = problem ?? '';
  $('#sign-out').hidden = !who;
  $('#sign-in-open').hidden = true;
}

/** A token came (a sign-in or a refresh): show it; a connect that timed out meanwhile is retried. */
function signedIn(url) {
  renderAuth(url);
  if (document.body.dataset.remote === 'failed' && $('#server-url').value.trim() === url) connectRemote();
}

/** The browser blocked the popup: a button opens it (a click may open windows). */
function offerSignIn(open, cancel) {
  const button = $('#sign-in-open');
  $('#auth').hidden = false;
  button.hidden = false;
  setStatus('the server asks you to sign in', 'err');
  button.onclick = () => {
    button.hidden = true;
    if (!open()) cancel();
  };
}

async function signOut() {
  const url = $('#server-url').value.trim();
  forgetCredentials(url);
  await disconnectRemote();
  renderAuth(url);
  setStatus(`signed out of ${url}`);
}

async function disconnectRemote() {
  await closeCurrent();
  $('#disconnect').disabled = true;
  $('#tools').replaceChildren(el('p', { class: 'muted', text: 'Disconnected.' }));
  resetExplore($('#explore'), 'Disconnected.');
  setStatus('disconnected');
  document.body.dataset.remote = 'disconnected';
}

function setStatus(text, kind) {
  const status = $('#status');
  status.textContent = text;
  status.className = `status ${kind ?? ''}`;
}

function selectMode(mode) {
  if (mode === selectedMode) return;
  selectedMode = mode;
  closeCurrent();
  resetPanels(mode === 'remote' ? 'Not connected.' : 'No server yet.');
  setStatus(mode === 'remote' ? 'enter a server URL and connect' : 'press Start server');
  for (const tab of document.querySelectorAll('.modes button')) {
    tab.setAttribute('aria-selected', String(tab.dataset.mode === mode));
  }
  for (const section of document.querySelectorAll('[data-for]')) section.hidden = section.dataset.for !== mode;
}

async function main() {
  try {
    await init();
  } catch (e) {
    setStatus('the wasm package did not load', 'err');
    renderError('Could not load the wasm package', e);
    return;
  }
  $('#tools-source').value = DEFAULT_TOOLS;
  $('#start').addEventListener('click', startLocal);
  $('#remote-form').addEventListener('submit', connectRemote);
  $('#disconnect').addEventListener('click', disconnectRemote);
  $('#sign-out').addEventListener('click', signOut);
  $('#clear-traffic').addEventListener('click', () => traffic.clear());
  for (const node of document.querySelectorAll('.origin')) node.textContent = location.origin;
  for (const tab of document.querySelectorAll('.modes button')) {
    tab.addEventListener('click', () => selectMode(tab.dataset.mode));
  }
  // `?server=<url>` opens the remote mode with that URL (and connects; `&era=auto|modern|legacy`
  // picks the era, default auto); otherwise the in-page server starts.
  const params = new URLSearchParams(location.search);
  const server = params.get('server');
  const era = params.get('era');
  if (era && [...$('#era').options].some((o) => o.value === era)) $('#era').value = era;
  if (server) {
    $('#server-url').value = server;
    selectMode('remote');
    document.body.dataset.ready = 'true';
    await connectRemote();
  } else {
    selectMode('local');
    await startLocal();
    document.body.dataset.ready = 'true';
  }
}

main();

// The console's resources, prompts and notifications panes.
//
//   renderExplore(connection, container) → { close(), requestOptions() }   after a connection opened
//   resetExplore(container, note)                        when there is none (or it closed)
//
// A connection with a `client` (the remote mode: the wasm MCPClient) is used through the
// client's own calls (`serverCapabilities`, `listResources`, `listResourceTemplates`,
// `readResource`, `subscribeResource`, `listPrompts`, `getPrompt`, `setLoggingLevel` and its
// 'notification' event). Any other connection (the in-page server) needs `capabilities` (the
// initialize result's) and `request(method, params)`; it has no way back for notifications.
// Each pane shows only what the server declares.

/** The most notifications the pane keeps (the oldest go first). */
export const MAX_NOTIFICATIONS = 200;

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

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
const muted = (text) => el('p', { class: 'muted', text });
let ids = 0;
const uid = (prefix) => `${prefix}-${(ids += 1)}`;

/** The calls the panes make, over a client or over raw requests (the in-page server). */
function adapter(connection) {
  const { client } = connection;
  if (client) {
    return {
      capabilities: client.serverCapabilities ?? {},
      listResources: () => client.listResources(),
      listResourceTemplates: () => client.listResourceTemplates(),
      readResource: (uri) => client.readResource(uri),
      subscribeResource: (uri) => client.subscribeResource(uri),
      listPrompts: () => client.listPrompts(),
      getPrompt: (name, args) => client.getPrompt(name, args),
      // 2026-07-28 has no logging/setLevel: each request carries its level.
      setLoggingLevel: client.era === 'modern' ? async () => {} : (level) => client.setLoggingLevel(level),
      onNotification: (listener) => client.on('notification', listener),
    };
  }
  const request = (method, params) => connection.request(method, params ?? {});
  // The in-page server answers one page; it has no cursor to follow.
  return {
    capabilities: connection.capabilities ?? {},
    listResources: async () => (await request('resources/list')).resources,
    listResourceTemplates: async () => (await request('resources/templates/list')).resourceTemplates,
    readResource: (uri) => request('resources/read', { uri }),
    subscribeResource: (uri) => request('resources/subscribe', { uri }),
    listPrompts: async () => (await request('prompts/list')).prompts,
    getPrompt: (name, args) => request('prompts/get', { name, arguments: args }),
    setLoggingLevel: (level) => request('logging/setLevel', { level }),
    onNotification: undefined,
  };
}

function errorBox(title, error) {
  const box = el('div', { class: 'error', role: 'alert' }, el('strong', { text: title }),
    el('pre', { text: error?.code !== undefined ? `MCP error ${error.code}: ${error.message}` : String(error?.message ?? error) }));
  if (error?.data !== undefined) box.append(el('pre', { text: JSON.stringify(error.data, null, 2) }));
  return box;
}

/** One content block of a prompt message (or an embedded resource). */
function contentBlock(block) {
  if (block?.type === 'text') {
    return el('div', { class: 'block text' }, el('span', { class: 'kind', text: 'text' }), el('pre', { text: block.text }));
  }
  if (block?.type === 'image') {
    return el('div', { class: 'block image' }, el('span', { class: 'kind', text: block.mimeType }),
      el('img', { src: `data:${block.mimeType};base64,${block.data}`, alt: 'image content' }));
  }
  if (block?.type === 'resource' && block.resource) return resourceContents(block.resource);
  return el('div', { class: 'block other' }, el('span', { class: 'kind', text: block?.type ?? 'content' }),
    el('pre', { text: JSON.stringify(block, null, 2) }));
}

/** One item of a `resources/read` result: text, an image blob, or another blob (its size). */
function resourceContents(item) {
  const kind = `${item.mimeType ?? 'resource'} · ${item.uri}`;
  if (typeof item.text === 'string') {
    return el('div', { class: 'block text' }, el('span', { class: 'kind', text: kind }), el('pre', { text: item.text }));
  }
  if (typeof item.blob === 'string' && /^image\//.test(item.mimeType ?? '')) {
    return el('div', { class: 'block image' }, el('span', { class: 'kind', text: kind }),
      el('img', { src: `data:${item.mimeType};base64,${item.blob}`, alt: `the resource ${item.uri}` }));
  }
  if (typeof item.blob === 'string') {
    const bytes = Math.floor((item.blob.replace(/=+$/, '').length * 3) / 4);
    return el('div', { class: 'block other' }, el('span', { class: 'kind', text: kind }),
      el('pre', { text: `(binary, ${bytes} bytes)` }));
  }
  return el('div', { class: 'block other' }, el('span', { class: 'kind', text: kind }),
    el('pre', { text: JSON.stringify(item, null, 2) }));
}

/** The names of an RFC 6570 template's variables (`{a}`, `{+b}`, `{?c,d}` …). */
function templateVariables(template) {
  const names = [];
  for (const [, body] of template.matchAll(/\{([^}]+)\}/g)) {
    for (const spec of body.replace(/^[+#./;?&]/, '').split(',')) {
      const name = spec.replace(/[:*].*$/, '');
      if (name && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

/** Expand an RFC 6570 template with string values (levels 1–3; the `:n` and `*` modifiers
 * are not applied). */
export function expandTemplate(template, values) {
  return template.replace(/\{([^}]+)\}/g, (_, body) => {
    const op = /^[+#./;?&]/.test(body) ? body[0] : '';
    const names = body.slice(op.length).split(',').map((s) => s.replace(/[:*].*$/, ''));
    const reserved = op === '+' || op === '#';
    const encode = (v) => (reserved ? encodeURI(v) : encodeURIComponent(v));
    const defined = names.filter((n) => values[n] !== undefined && values[n] !== '');
    if (!defined.length) return '';
    const named = op === ';' || op === '?' || op === '&';
    const parts = defined.map((n) => (named ? `${n}=${encode(values[n])}` : encode(values[n])));
    const first = { '': '', '+': '', '#': '#', '.': '.', '/': '/', ';': ';', '?': '?', '&': '&' }[op];
    const sep = { '': ',', '+': ',', '#': ',', '.': '.', '/': '/', ';': ';', '?': '&', '&': '&' }[op];
    return first + parts.join(sep);
  });
}

function textField(name, { label = name, description, required = false } = {}) {
  const id = uid('x');
  const input = el('input', { id, name, type: 'text', spellcheck: 'false' });
  input.required = required;
  const caption = el('span', {}, label);
  if (required) caption.append(el('span', { class: 'req', text: ' *' }));
  if (description) caption.append(el('span', { class: 'muted', text: ` — ${description}` }));
  return el('label', { for: id }, caption, input);
}

/** What one notification says, in a line. */
function summary(message) {
  const p = message.params ?? {};
  switch (message.method) {
    case 'notifications/message': {
      const data = typeof p.data === 'string' ? p.data : JSON.stringify(p.data);
      return `[${p.level ?? '?'}]${p.logger ? ` ${p.logger}:` : ''} ${data}`;
    }
    case 'notifications/progress':
      return `${p.progress}${p.total !== undefined ? ` / ${p.total}` : ''}${p.message ? ` — ${p.message}` : ''} (token ${p.progressToken})`;
    case 'notifications/resources/updated':
      return p.uri ?? '';
    case 'notifications/cancelled':
      return `request ${p.requestId}${p.reason ? `: ${p.reason}` : ''}`;
    default:
      return /list_changed$/.test(message.method ?? '') ? 'the list changed' : '';
  }
}

/** Empty the panes (no connection, or it closed). */
export function resetExplore(container, note = 'Not connected.') {
  container.replaceChildren(
    pane('Resources', 'explore-resources', muted(note)),
    pane('Prompts', 'explore-prompts', muted(note)),
    notificationsPane(),
  );
  container.querySelector('#notification-note').textContent = note;
}

function pane(title, id, ...children) {
  return el('section', { class: 'explore-pane', id, 'aria-labelledby': `${id}-title` },
    el('h3', { id: `${id}-title`, text: title }), ...children);
}

function notificationsPane() {
  const clear = el('button', { type: 'button', class: 'small', id: 'clear-notifications', text: 'clear' });
  const list = el('ol', { id: 'notifications', 'aria-live': 'polite', 'aria-label': 'Server notifications' });
  clear.addEventListener('click', () => list.replaceChildren());
  const title = el('h3', { id: 'explore-notifications-title' }, 'Notifications ', clear);
  return el('section', { class: 'explore-pane', id: 'explore-notifications', 'aria-labelledby': 'explore-notifications-title' },
    title, el('p', { class: 'note', id: 'notification-note' }), el('div', { class: 'row', id: 'log-level-row' }), list);
}

/** Fill the panes for an open connection; `close()` stops them (later notifications are
 * ignored); `requestOptions()` is what a tool call should pass to the client so that its
 * progress and log messages reach the notifications pane (a progress token, the chosen log
 * level). */
export function renderExplore(connection, container) {
  const api = adapter(connection);
  const caps = api.capabilities;
  let open = true;
  let level;
  resetExplore(container, '');
  const resourcesPane = container.querySelector('#explore-resources');
  const promptsPane = container.querySelector('#explore-prompts');
  const list = container.querySelector('#notifications');
  const note = container.querySelector('#notification-note');

  // ---- resources ----
  const resourceView = el('div', { id: 'resource-view', 'aria-live': 'polite' });
  const resourceList = el('ul', { id: 'resources', class: 'items' });
  const templateList = el('ul', { id: 'resource-templates', class: 'items' });
  let shownUri;
  const subscribable = Boolean(caps.resources?.subscribe);

  async function read(uri) {
    shownUri = uri;
    resourceView.replaceChildren(muted(`Reading ${uri}…`));
    try {
      const result = await api.readResource(uri);
      if (!open) return;
      const out = el('div', { class: 'result-ok', 'data-resource': uri });
      out.append(...(result.contents ?? []).map(resourceContents));
      if (!out.childElementCount) out.append(muted('(no contents)'));
      resourceView.replaceChildren(out);
    } catch (e) {
      resourceView.replaceChildren(errorBox(`Reading ${uri} failed`, e));
    }
  }

  function resourceItem(resource) {
    const readButton = el('button', { type: 'button', class: 'small', 'data-read': resource.uri, text: 'Read' });
    readButton.setAttribute('aria-label', `Read ${resource.uri}`);
    readButton.addEventListener('click', () => read(resource.uri));
    const actions = el('span', { class: 'actions' }, readButton);
    if (subscribable) {
      const sub = el('button', { type: 'button', class: 'small', text: 'Subscribe' });
      sub.setAttribute('aria-label', `Subscribe to ${resource.uri}`);
      sub.addEventListener('click', async () => {
        try {
          await api.subscribeResource(resource.uri);
          sub.textContent = 'Subscribed';
          sub.disabled = true;
        } catch (e) {
          resourceView.replaceChildren(errorBox(`Subscribing to ${resource.uri} failed`, e));
        }
      });
      actions.append(sub);
    }
    return el('li', { 'data-uri': resource.uri },
      el('div', {}, el('code', { text: resource.uri }), ' ', el('span', { text: resource.title ?? resource.name ?? '' }),
        resource.mimeType ? el('span', { class: 'muted', text: ` (${resource.mimeType})` }) : ''),
      resource.description ? el('p', { class: 'muted', text: resource.description }) : '',
      actions);
  }

  function templateItem(template) {
    const form = el('form', { 'data-template': template.uriTemplate });
    const names = templateVariables(template.uriTemplate);
    for (const name of names) form.append(textField(name));
    const preview = el('code', { class: 'muted', text: template.uriTemplate });
    form.addEventListener('input', () => {
      const values = Object.fromEntries(names.map((n) => [n, form.elements[n].value]));
      preview.textContent = expandTemplate(template.uriTemplate, values);
    });
    form.append(el('div', { class: 'row' }, el('button', { type: 'submit', text: 'Read' }), preview));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const values = Object.fromEntries(names.map((n) => [n, form.elements[n].value]));
      read(expandTemplate(template.uriTemplate, values));
    });
    return el('li', {}, el('div', {}, el('code', { text: template.uriTemplate }), ' ',
      el('span', { text: template.title ?? template.name ?? '' })),
      template.description ? el('p', { class: 'muted', text: template.description }) : '', form);
  }

  async function listResources() {
    try {
      const [resources, templates] = await Promise.all([api.listResources(), api.listResourceTemplates()]);
      if (!open) return;
      resourceList.replaceChildren(...(resources.length ? resources.map(resourceItem) : [muted('No resources.')]));
      templateList.replaceChildren(...(templates.length ? templates.map(templateItem) : [muted('No templates.')]));
    } catch (e) {
      resourceList.replaceChildren(errorBox('Could not list the resources', e));
    }
  }

  if (caps.resources) {
    resourcesPane.replaceChildren(resourcesPane.firstElementChild, resourceList,
      el('h4', { text: 'Templates' }), templateList, resourceView);
    listResources();
  } else {
    resourcesPane.replaceChildren(resourcesPane.firstElementChild, muted('The server declares no resources.'));
  }

  // ---- prompts ----
  const promptView = el('div', { id: 'prompt-view', 'aria-live': 'polite' });
  const promptList = el('ul', { id: 'prompts', class: 'items' });

  function promptItem(prompt) {
    const form = el('form', { 'data-prompt': prompt.name });
    for (const arg of prompt.arguments ?? []) {
      form.append(textField(arg.name, { label: arg.title ?? arg.name, description: arg.description, required: arg.required === true }));
    }
    form.append(el('div', { class: 'row' }, el('button', { type: 'submit', text: `Get ${prompt.name}` })));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const args = {};
      for (const input of form.querySelectorAll('input[name]')) if (input.value !== '') args[input.name] = input.value;
      promptView.replaceChildren(muted(`Getting ${prompt.name}…`));
      try {
        const result = await api.getPrompt(prompt.name, args);
        if (!open) return;
        const out = el('div', { class: 'result-ok', 'data-prompt-result': prompt.name });
        if (result.description) out.append(el('p', { class: 'muted', text: result.description }));
        for (const message of result.messages ?? []) {
          out.append(el('div', { class: 'message', 'data-role': message.role },
            el('span', { class: 'role', text: message.role }), contentBlock(message.content)));
        }
        promptView.replaceChildren(out);
      } catch (e) {
        promptView.replaceChildren(errorBox(`Getting ${prompt.name} failed`, e));
      }
    });
    return el('li', {}, el('div', {}, el('code', { text: prompt.name }),
      prompt.title ? el('span', { text: ` ${prompt.title}` }) : ''),
      prompt.description ? el('p', { class: 'muted', text: prompt.description }) : '', form);
  }

  async function listPrompts() {
    try {
      const prompts = await api.listPrompts();
      if (!open) return;
      promptList.replaceChildren(...(prompts.length ? prompts.map(promptItem) : [muted('No prompts.')]));
    } catch (e) {
      promptList.replaceChildren(errorBox('Could not list the prompts', e));
    }
  }

  if (caps.prompts) {
    promptsPane.replaceChildren(promptsPane.firstElementChild, promptList, promptView);
    listPrompts();
  } else {
    promptsPane.replaceChildren(promptsPane.firstElementChild, muted('The server declares no prompts.'));
  }

  // ---- notifications ----
  function show(message) {
    const at = new Date();
    const entry = el('li', { 'data-method': message.method ?? '' },
      el('time', { datetime: at.toISOString(), text: at.toISOString().slice(11, 23) }),
      el('span', { class: 'method', text: message.method ?? '(no method)' }),
      el('span', { class: 'summary', text: summary(message) }));
    if (message.params !== undefined) {
      entry.append(el('details', {}, el('summary', { text: 'params' }),
        el('pre', { text: JSON.stringify(message.params, null, 2) })));
    }
    list.append(entry);
    while (list.childElementCount > MAX_NOTIFICATIONS) list.firstElementChild.remove();
    list.scrollTop = list.scrollHeight;
  }

  if (api.onNotification) {
    note.textContent = `As they arrive (the last ${MAX_NOTIFICATIONS}).`;
    api.onNotification((message) => {
      if (!open) return;
      show(message);
      const method = message.method ?? '';
      if (method === 'notifications/resources/list_changed' && caps.resources) listResources();
      else if (method === 'notifications/prompts/list_changed' && caps.prompts) listPrompts();
      else if (method === 'notifications/resources/updated' && message.params?.uri === shownUri) read(shownUri);
    });
    if (caps.logging) {
      const id = uid('level');
      const select = el('select', { id, name: 'level' }, el('option', { value: '', text: '(server default)' }),
        ...LEVELS.map((level) => el('option', { value: level, text: level })));
      const status = el('span', { class: 'muted', 'aria-live': 'polite' });
      select.addEventListener('change', async () => {
        level = select.value || undefined;
        if (!level) return;
        try {
          await api.setLoggingLevel(level);
          status.textContent = `level set to ${select.value}`;
        } catch (e) {
          status.textContent = `could not set the level: ${e.message}`;
        }
      });
      container.querySelector('#log-level-row').append(el('label', { for: id }, 'Log level ', select), status);
    }
  } else {
    note.textContent = 'The in-page server answers through its string boundary, which has no way back for notifications.';
  }

  return {
    close() {
      open = false;
    },
    requestOptions() {
      // A listener makes the client send a progressToken; the pane shows the notifications.
      return { onProgress: () => {}, ...(level ? { logLevel: level } : {}) };
    },
  };
}

// Signs in as a user at provider.mjs without a browser: follows the authorization URL through
// oidc-provider's development login and consent pages (cookies kept, each form submitted with a
// made-up user, `alice`), until the authorization server redirects away from itself, and
// resolves to that redirect (the client's redirect URI with `code`, `state`, `iss`), unvisited.
// Used by sign_in.mjs (the CLI's tests) and tests/wasm/client_auth.mjs (the JS client's).
export async function walkSignIn(authorizationUrl) {
  const start = new URL(authorizationUrl);
  const cookies = new Map();
  const jar = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  let url = start.href;
  let init = { method: 'GET' };
  for (let step = 0; step < 20; step++) {
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, cookie: jar() } });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, url);
      if (next.origin !== start.origin) return next.href;
      url = next.href;
      init = { method: 'GET' };
      continue;
    }
    const html = await response.text();
    const form = html.match(/<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/);
    if (!form) throw new Error(`no form and no redirect at ${url} (HTTP ${response.status}): ${html.slice(0, 500)}`);
    const fields = new URLSearchParams();
    for (const input of form[2].matchAll(/<input[^>]*>/g)) {
      const name = input[0].match(/name="([^"]+)"/)?.[1];
      if (!name) continue;
      const value = input[0].match(/value="([^"]*)"/)?.[1] ?? (name === 'login' ? 'alice' : name === 'password' ? 'any' : '');
      fields.set(name, value);
    }
    url = new URL(form[1].replaceAll('&amp;', '&'), url).href;
    init = { method: 'POST', body: fields.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error('no redirect after 20 steps');
}

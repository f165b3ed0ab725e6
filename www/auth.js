// The console's sign-in to a protected remote server (MCP authorization, OAuth 2.1): the `auth`
// option of createFetchTransport. The library finds the authorization server, registers this page
// as a client, checks `state` and `iss`, and refreshes tokens; this file only
//   - opens a popup on the authorization URL (or, when the browser blocked it, a button that does),
//   - receives the redirect: callback.html posts its URL back to this page (postMessage to its
//     opener; a BroadcastChannel when the opener is gone),
//   - keeps the credentials (issuer, client, tokens) in localStorage, one entry per server URL,
//   - says who is signed in (issuer, scope, expiry, and the subject of a JWT access token).

const KEY_PREFIX = 'orkestrel-mcp:credentials:';
export const CHANNEL = 'orkestrel-mcp:sign-in';
export const REDIRECT_MESSAGE = 'orkestrel-mcp:redirect';

/** The page callback.html of this console (registered as the client's redirect URI). */
export const redirectUri = () => new URL('callback.html', location.href).href;

/** What is kept for `serverUrl` (`null`: nothing, or an entry that is not JSON). */
export function keptCredentials(serverUrl) {
  try {
    return JSON.parse(localStorage.getItem(KEY_PREFIX + serverUrl) ?? 'null');
  } catch {
    return null;
  }
}

/** Sign out of `serverUrl`: forget its credentials. */
export function forgetCredentials(serverUrl) {
  localStorage.removeItem(KEY_PREFIX + serverUrl);
}

/**
 * createFetchTransport's `auth` for `serverUrl`. `onBlocked(open, cancel)` is called when the
 * browser blocked the popup (call `open` from a click); `onSaved(credentials)` after each token.
 */
export function authOptions(serverUrl, { onBlocked, onSaved } = {}) {
  return {
    redirectUri: redirectUri(),
    clientName: 'orkestrel-mcp browser console',
    signIn: (url) => signInWithPopup(url, onBlocked),
    load: () => keptCredentials(serverUrl),
    save: (credentials) => {
      localStorage.setItem(KEY_PREFIX + serverUrl, JSON.stringify(credentials));
      onSaved?.(credentials);
    },
  };
}

/** Resolve with the redirect URL of the sign-in at `url`, from a popup. */
function signInWithPopup(url, onBlocked) {
  const state = new URL(url).searchParams.get('state');
  return new Promise((resolve, reject) => {
    const channel = new BroadcastChannel(CHANNEL);
    let popup;
    let watch;
    const finish = () => {
      window.removeEventListener('message', onMessage);
      channel.close();
      clearInterval(watch);
    };
    const accept = (data) => {
      if (data?.type !== REDIRECT_MESSAGE || typeof data.url !== 'string') return;
      // A redirect of another round (an older window): not this one's.
      if (new URL(data.url).searchParams.get('state') !== state) return;
      finish();
      popup?.close();
      resolve(data.url);
    };
    const onMessage = (event) => {
      if (event.origin === location.origin) accept(event.data);
    };
    window.addEventListener('message', onMessage);
    channel.onmessage = (event) => accept(event.data);
    const open = () => {
      popup = window.open(url, 'orkestrel-mcp-sign-in', 'popup,width=520,height=720');
      if (!popup) return false;
      // A window closed without a redirect: the user gave up (no event tells; look twice a second).
      watch = setInterval(() => {
        if (popup.closed) {
          finish();
          reject(new Error('the sign-in window was closed'));
        }
      }, 500);
      return true;
    };
    if (!open()) {
      if (!onBlocked) {
        finish();
        reject(new Error('the browser blocked the sign-in window'));
        return;
      }
      onBlocked(open, () => {
        finish();
        reject(new Error('the sign-in was cancelled'));
      });
    }
  });
}

/** Who the credentials speak for: `{ issuer, subject?, scope?, expiresAt? }`, or `null`. */
export function signedInAs(credentials) {
  const tokens = credentials?.tokens;
  if (!tokens?.accessToken) return null;
  let subject;
  try {
    // A JWT access token (RFC 9068) names its subject; an opaque one does not.
    const payload = tokens.accessToken.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    subject = JSON.parse(atob(payload)).sub;
  } catch {
    /* opaque */
  }
  return { issuer: credentials.issuer, subject, scope: tokens.scope, expiresAt: tokens.expiresAt };
}

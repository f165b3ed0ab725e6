// The redirect URI of the console's sign-in: posts this page's URL (the authorization response:
// `code`, `state`, `iss`, or `error`) to the console that opened it, same origin only, then
// closes. When the opener is gone (a browser that severed it), a BroadcastChannel carries it.
import { CHANNEL, REDIRECT_MESSAGE } from './auth.js';

const message = { type: REDIRECT_MESSAGE, url: location.href };
if (window.opener && !window.opener.closed) {
  window.opener.postMessage(message, location.origin);
} else {
  const channel = new BroadcastChannel(CHANNEL);
  channel.postMessage(message);
  channel.close();
}
document.getElementById('note').textContent = 'Signed in: you can close this window.';
window.close();

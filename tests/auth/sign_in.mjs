// Signs in as a user at provider.mjs (walk.mjs: its development login and consent pages), then
// delivers the final redirect (the client's loopback listener) with a GET.
//
//   node sign_in.mjs AUTHORIZATION_URL      prints "delivered URL" and exits 0; 1 otherwise
import { walkSignIn } from './walk.mjs';

try {
  const next = await walkSignIn(process.argv[2]);
  const delivered = await fetch(next);
  await delivered.text();
  console.log(`delivered ${next}`);
  process.exit(0);
} catch (e) {
  console.error(String(e?.message ?? e));
  process.exit(1);
}

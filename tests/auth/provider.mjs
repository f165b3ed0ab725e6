// A real OAuth 2 / OpenID Connect authorization server for tests/auth.rs: oidc-provider on
// 127.0.0.1, issuing JWT access tokens (RS256, RFC 9068) for a resource indicator (RFC 8707)
// to the client_credentials client `machine` / `machine-secret`, and by the authorization code
// flow (PKCE) to clients that register themselves (RFC 7591), through its development login
// and consent pages (any login name; sign_in.mjs fills them in).
//
//   node provider.mjs [PORT]      prints "issuer http://127.0.0.1:PORT" once listening (PORT 0 or
//                                 none: a free one); CORS_ORIGIN=<origin> lets a page of that
//                                 origin register (tests/wasm/page_auth.mjs)
//
// A token requested for any resource has that resource as its `aud` (a JWT, or an opaque token
// when the resource URI holds `opaque`); scopes `mcp:tools` and `mcp:admin` may be granted;
// `machine` may introspect.
//
// For the bad-input tests, two things no production server offers:
//   - a token request may carry `test_exp=SECONDS` and `test_nbf=SECONDS` (from now, negative:
//     past): the JWT's `exp` / `nbf` are set so, still signed by the provider's key, so an
//     expired token exists at once, without waiting for one to expire;
//   - `POST /test/rotate` replaces the signing key with a fresh RSA key (answering its `kid`):
//     the JWKS then publishes only the new key, and tokens signed by the old one are orphans.
// Until the first rotation the key is oidc-provider's development key, the same in every
// process (so two providers sign alike and differ only in their issuer).
import crypto from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const server = http.createServer();
await new Promise((resolve) => server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

/** The provider's configuration; `jwks` (a JWK set with private keys) or the development key. */
const configuration = (jwks) => ({
  ...(jwks ? { jwks } : {}),
  clients: [
    {
      client_id: 'machine',
      client_secret: 'machine-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: 'mcp:tools mcp:admin',
    },
  ],
  scopes: ['openid', 'offline_access', 'mcp:tools', 'mcp:admin'],
  // A client registered for refresh tokens gets one with every code (not only with
  // offline_access and a consent prompt), so tests/auth.rs can see a refresh.
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  features: {
    clientCredentials: { enabled: true },
    registration: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      getResourceServerInfo: (ctx, resourceIndicator) => ({
        scope: 'mcp:tools mcp:admin',
        audience: resourceIndicator,
        accessTokenTTL: 300,
        // A resource whose URI says `opaque` gets opaque tokens (checked by introspection).
        accessTokenFormat: resourceIndicator.includes('opaque') ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  formats: {
    customizers: {
      // `test_exp` / `test_nbf` of the token request (see the top of this file).
      jwt: (ctx, token, jwt) => {
        const body = ctx?.oidc?.body ?? {};
        const now = Math.floor(Date.now() / 1000);
        if (body.test_exp !== undefined) {
          jwt.payload.exp = now + Number(body.test_exp);
          jwt.payload.iat = Math.min(jwt.payload.iat, jwt.payload.exp - 300);
        }
        if (body.test_nbf !== undefined) {
          jwt.payload.nbf = now + Number(body.test_nbf);
        }
      },
    },
  },
});

// CORS_ORIGIN=<origin>: a page of that origin may register itself (oidc-provider answers CORS
// on its discovery and token endpoints, not on registration).
const corsOrigin = process.env.CORS_ORIGIN;

/** A provider with `jwks` (see `configuration`), as a request handler. */
const build = (jwks) => {
  const provider = new Provider(issuer, configuration(jwks));
  if (corsOrigin) {
    provider.use(async (ctx, next) => {
      if (ctx.path !== '/reg') return next();
      ctx.set('access-control-allow-origin', corsOrigin);
      if (ctx.method !== 'OPTIONS') return next();
      ctx.set('access-control-allow-methods', 'POST');
      ctx.set('access-control-allow-headers', 'accept, content-type');
      ctx.status = 204;
    });
  }
  return provider.callback();
};

let rotations = 0;
let handle = build();
server.on('request', (req, res) => {
  if (req.method === 'POST' && req.url === '/test/rotate') {
    rotations += 1;
    const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const kid = `rotated-${rotations}`;
    const jwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
    handle = build({ keys: [jwk] });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ kid }));
    return;
  }
  handle(req, res);
});
console.log(`issuer ${issuer}`);
process.on('SIGTERM', () => process.exit(0));

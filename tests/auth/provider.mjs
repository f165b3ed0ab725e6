// A real OAuth 2 / OpenID Connect authorization server for tests/auth.rs: oidc-provider on
// 127.0.0.1, issuing JWT access tokens (RS256, RFC 9068) for a resource indicator (RFC 8707)
// to the client_credentials client `machine` / `machine-secret`.
//
//   node provider.mjs [PORT]      prints "issuer http://127.0.0.1:PORT" once listening (PORT 0 or
//                                 none: a free one)
//
// A token requested for any resource has that resource as its `aud` (a JWT, or an opaque token
// when the resource URI holds `opaque`); scopes `mcp:tools` and `mcp:admin` may be granted;
// `machine` may introspect.
import http from 'node:http';
import Provider from 'oidc-provider';

const server = http.createServer();
await new Promise((resolve) => server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
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
  scopes: ['mcp:tools', 'mcp:admin'],
  features: {
    clientCredentials: { enabled: true },
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
});
server.on('request', provider.callback());
console.log(`issuer ${issuer}`);
process.on('SIGTERM', () => process.exit(0));

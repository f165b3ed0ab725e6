#!/usr/bin/env node
// A tiny static server for the page: www/ at `/`, the wasm-pack `--target web` package at
// `/pkg/`, `.wasm` as application/wasm, loopback only.
//
//   node www/serve.mjs [port]        # PKG=<dir> overrides target/wasm-pkg/web
import http from 'node:http';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.wasm': 'application/wasm', '.json': 'application/json', '.ts': 'text/plain; charset=utf-8',
  '.png': 'image/png', '.svg': 'image/svg+xml',
};

export function serveStatic({
  root = here,
  pkg = process.env.PKG ?? path.join(here, '..', 'target', 'wasm-pkg', 'web'),
  host = '127.0.0.1',
  port = 0,
} = {}) {
  const server = http.createServer(async (req, res) => {
    const { pathname } = new URL(req.url, 'http://localhost');
    const [base, rel] = pathname.startsWith('/pkg/') ? [pkg, pathname.slice(5)] : [root, pathname.slice(1) || 'index.html'];
    const file = path.resolve(base, decodeURIComponent(rel));
    if (!file.startsWith(path.resolve(base) + path.sep)) {
      res.writeHead(403).end('Forbidden');
      return;
    }
    try {
      const body = await fs.readFile(file);
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
    }
  });
  return new Promise((resolve) => {
    server.listen(port, host, () => resolve({ server, url: `http://${host}:${server.address().port}/` }));
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { url } = await serveStatic({ port: Number(process.argv[2] ?? 8080) });
  console.log(`serving the page at ${url}`);
}

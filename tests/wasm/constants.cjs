#!/usr/bin/env node
// Append the seed's constants (MCP_PROTOCOL_VERSION, JSONRPC_PARSE_ERROR, …) as top-level exports
// of the wasm-pack packages. wasm-bindgen exports functions and classes only, so the values are
// read from the Rust side (`mcpConstants()` of the freshly built nodejs package) — never retyped.
//
//   node constants.cjs <nodejs-pkg-dir> <web-pkg-dir> [more web-pkg-dirs…]
// (the extra web packages: the server-only and client-only builds, whose constants are the same)
'use strict';
const fs = require('fs');
const path = require('path');

const [nodeDir, ...webDirs] = process.argv.slice(2);
const webDir = webDirs[0];
if (!nodeDir || !webDir) {
  console.error('usage: node constants.cjs <nodejs-pkg-dir> <web-pkg-dir> [more web-pkg-dirs…]');
  process.exit(2);
}
const MARK = '// ---- constants (tests/wasm/constants.cjs) ----';
const constants = require(path.resolve(nodeDir, 'orkestrel_mcp.js')).mcpConstants();

const tsType = (v) =>
  Array.isArray(v) ? 'readonly string[]' : typeof v === 'number' ? String(v) : JSON.stringify(v);
const literal = (v) => (Array.isArray(v) ? `Object.freeze(${JSON.stringify(v)})` : JSON.stringify(v));

function append(file, text) {
  const body = fs.readFileSync(file, 'utf8');
  if (body.includes(MARK)) return; // already done for this build
  fs.writeFileSync(file, `${body}\n${MARK}\n${text}\n`);
}

const entries = Object.entries(constants);
const dts = entries.map(([k, v]) => `export declare const ${k}: ${tsType(v)};`).join('\n');
append(path.join(nodeDir, 'orkestrel_mcp.js'), entries.map(([k, v]) => `exports.${k} = ${literal(v)};`).join('\n'));
append(path.join(nodeDir, 'orkestrel_mcp.d.ts'), dts);
for (const dir of webDirs) {
  append(path.join(dir, 'orkestrel_mcp.js'), entries.map(([k, v]) => `export const ${k} = ${literal(v)};`).join('\n'));
  append(path.join(dir, 'orkestrel_mcp.d.ts'), dts);
}
console.log(`constants: ${entries.length} appended to ${webDirs.length + 1} packages`);

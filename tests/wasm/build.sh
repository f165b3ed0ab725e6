#!/usr/bin/env bash
# Build the npm packages with wasm-pack (profile wasm-release, then wasm-opt -Oz) and print their
# sizes. Used by tests/wasm/run.sh (after it has installed the toolchain) and by benches/run.sh
# (the size row; it builds the packages when they are missing).
#
#   PKG/web          the full package (server + client), --target web
#   PKG/node         the full package, --target nodejs
#   PKG/web-server   the server-only package (cargo feature js-server), --target web, npm name orkestrel-mcp-server
#   PKG/web-client   the client-only package (cargo feature js-client), --target web, npm name orkestrel-mcp-client
#
#   PKG/web-floor    with `floor` only: the size floor of benches/run.sh (benches/wasm-floor: the least
#                    JSON-RPC tool server on serde_json and wasm-bindgen), built the same way
#
#   bash tests/wasm/build.sh [PKG]          # default target/wasm-pkg
#   bash tests/wasm/build.sh PKG floor      # the floor alone
# Size lines: `wasm-size: <label> raw N B (x KB)   gzip -9 N B (x KB)`, .wasm + (minified) JS glue.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$PWD
PKG=$(realpath -m "${1:-$ROOT/target/wasm-pkg}") # absolute: wasm-pack takes --out-dir from the crate
export WASM_PACK_CACHE="${WASM_PACK_CACHE:-$ROOT/target/wasm-pack-cache}"
# binaryen's wasm-opt from tests/wasm/node_modules first (wasm-pack then neither downloads binaryen
# nor picks up an older system one).
export PATH="$HOME/.cargo/bin:$ROOT/tests/wasm/node_modules/.bin:$PATH"

# std rebuilt for the package (WASM_BUILD_STD=0 builds against the prebuilt one): `-Zbuild-std`
# with `optimize_for_size`, and `-Cpanic=immediate-abort`, so a panic is the `unreachable` trap it
# already was under `panic = "abort"` without the panic machinery (messages, locations, the
# formatting they pull in) in the module: ~10 % smaller gzipped (README, "wasm package size").
# These are unstable flags: RUSTC_BOOTSTRAP=1 admits them on the toolchain every other build and
# test here uses (rather than a nightly of another date), for the package build only; the std
# sources come from rustup's `rust-src` component, added when missing.
STD_ARGS=()
if [ "${WASM_BUILD_STD:-1}" != 0 ]; then
  rustup component list --installed 2>/dev/null | grep -q '^rust-src' || rustup component add rust-src
  export RUSTC_BOOTSTRAP=1
  export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort"
  STD_ARGS=(-Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size)
fi

CRATE=$ROOT
build() { # out-dir target [cargo args…]
  local out=$1 target=$2; shift 2
  rm -rf "$out"
  wasm-pack --log-level warn build --target "$target" --profile wasm-release --out-dir "$out" "$CRATE" -- "${STD_ARGS[@]}" "$@"
}
size_line() { # label files...
  local label=$1; shift
  local raw=0 gz=0 f
  for f in "$@"; do
    raw=$((raw + $(stat -c%s "$f")))
    gz=$((gz + $(gzip -9c "$f" | wc -c)))
  done
  awk -v l="$label" -v r="$raw" -v g="$gz" 'BEGIN { printf "wasm-size: %-26s raw %7d B (%5.1f KB)   gzip -9 %6d B (%5.1f KB)\n", l, r, r / 1024, g, g / 1024 }'
}

if [ "${2:-}" = floor ]; then
  CRATE=$ROOT/benches/wasm-floor
  build "$PKG/web-floor" web
  esbuild "$PKG/web-floor/orkestrel_mcp_wasm_floor.js" --minify --keep-names --format=esm --log-level=warning --allow-overwrite --outfile="$PKG/web-floor/orkestrel_mcp_wasm_floor.js"
  size_line "floor (web)" "$PKG/web-floor/orkestrel_mcp_wasm_floor_bg.wasm" "$PKG/web-floor/orkestrel_mcp_wasm_floor.js"
  exit 0
fi

build "$PKG/web" web
build "$PKG/node" nodejs
build "$PKG/web-server" web --features js-server
build "$PKG/web-client" web --features js-client
node tests/wasm/constants.cjs "$PKG/node" "$PKG/web" "$PKG/web-server" "$PKG/web-client"
# A string parameter given something else (`handle(42)`, `removeTool({})`) is a TypeError:
# wasm-bindgen's release glue checks no type and would hand the module a bad length (a trap,
# "memory access out of bounds"). One check in the one function every string goes through.
node -e '
  const fs = require("fs");
  const head = "function passStringToWasm0(arg, malloc, realloc) {";
  for (const dir of process.argv.slice(1)) {
    const file = dir + "/orkestrel_mcp.js";
    const glue = fs.readFileSync(file, "utf8");
    if (!glue.includes(head)) { console.error(file + ": passStringToWasm0 not found (wasm-bindgen changed?)"); process.exit(1); }
    fs.writeFileSync(file, glue.replace(head, head + " if (typeof arg !== \"string\") throw new TypeError(\"expected a string, got \" + (arg === null ? \"null\" : typeof arg));"));
  }' "$PKG/node" "$PKG/web" "$PKG/web-server" "$PKG/web-client"
# The JS glue minified (esbuild, names kept: the classes' `name`s stay MCPServer, MCPClient, …);
# wasm-bindgen writes it readable. The .d.ts files are left as written.
for d in web web-server web-client; do
  esbuild "$PKG/$d/orkestrel_mcp.js" --minify --keep-names --format=esm --log-level=warning --allow-overwrite --outfile="$PKG/$d/orkestrel_mcp.js"
done
esbuild "$PKG/node/orkestrel_mcp.js" --minify --keep-names --format=cjs --platform=node --log-level=warning --allow-overwrite --outfile="$PKG/node/orkestrel_mcp.js"
# Each half is its own npm package.
node -e '
  const fs = require("fs");
  for (const [dir, name, what] of [[process.argv[1], "orkestrel-mcp-server", "server"], [process.argv[2], "orkestrel-mcp-client", "client"]]) {
    const file = dir + "/package.json";
    const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
    pkg.name = name;
    pkg.description = `The ${what} half of orkestrel-mcp (Model Context Protocol) for browsers, Workers and node.`;
    fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
  }' "$PKG/web-server" "$PKG/web-client"

size_line "web .wasm" "$PKG/web/orkestrel_mcp_bg.wasm"
size_line "web JS glue" "$PKG/web/orkestrel_mcp.js"
size_line "web total (.wasm + glue)" "$PKG/web/orkestrel_mcp_bg.wasm" "$PKG/web/orkestrel_mcp.js"
size_line "nodejs total" "$PKG/node/orkestrel_mcp_bg.wasm" "$PKG/node/orkestrel_mcp.js"
size_line "server-only (web)" "$PKG/web-server/orkestrel_mcp_bg.wasm" "$PKG/web-server/orkestrel_mcp.js"
size_line "client-only (web)" "$PKG/web-client/orkestrel_mcp_bg.wasm" "$PKG/web-client/orkestrel_mcp.js"
echo "wasm-size: reference: the official TS SDK client + server, esbuild --minify for browsers: 441 KB, 121 KB gzipped"

# workerd's config for tests/wasm/workerd/test.mjs: one module Worker (worker.mjs) with the
# web-target package built by tests/wasm/run.sh (target/wasm-pkg/web) as its modules `pkg/…`:
# the glue as an ES module, the `.wasm` as a Wasm module (imported as a `WebAssembly.Module`).
# The socket's address is overridden by the test (`--socket-addr http=127.0.0.1:0`, the port
# read back from `--control-fd`).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "mcp", worker = .mcpWorker)],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "mcp")],
);

const mcpWorker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "pkg/orkestrel_mcp.js", esModule = embed "../../../target/wasm-pkg/web/orkestrel_mcp.js"),
    (name = "pkg/orkestrel_mcp_bg.wasm", wasm = embed "../../../target/wasm-pkg/web/orkestrel_mcp_bg.wasm"),
  ],
  compatibilityDate = "2025-09-01",
);

//! Keeps `features.md` true both ways (seed clauses 1 and 11): every seed Surface row, Methods row
//! and Contract clause is mapped; every Rust item and test it names exists; and every public
//! top-level item under `src/` is listed.
#![cfg(not(target_family = "wasm"))] // plain #[test]s: native only (tests/wasm_*.rs run on wasm)

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The seed's Surface rows (the `@orkestrel/mcp` tables), Methods rows and Contract clauses.
const SEED_ROWS: &[&str] = &[
    "createMCPServer",
    "createMCPClient",
    "MCPServer",
    "MCPClient",
    "MCP_PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "JSONRPC_PARSE_ERROR",
    "JSONRPC_INVALID_REQUEST",
    "JSONRPC_METHOD_NOT_FOUND",
    "JSONRPC_INVALID_PARAMS",
    "JSONRPC_SERVER_ERROR",
    "DEFAULT_MCP_CLIENT_NAME",
    "DEFAULT_MCP_CLIENT_VERSION",
    "DEFAULT_MCP_REQUEST_TIMEOUT",
    "isRequestId",
    "isJSONRPCRequest",
    "isJSONRPCResponse",
    "isJSONRPCMessage",
    "isInitializeRequest",
    "parseJSONRPCMessage",
    "jsonRPCResult",
    "jsonRPCError",
    "buildToolDescriptors",
    "buildToolResult",
    "initializeResult",
    "JSONRPCRequest",
    "JSONRPCErrorData",
    "JSONRPCResponse",
    "JSONRPCMessage",
    "MCPContent",
    "MCPToolResult",
    "MCPToolDescriptor",
    "MCPServerInfo",
    "MCPServerEventMap",
    "MCPServerOptions",
    "MCPServerInterface",
    "ClientTransportEventMap",
    "ClientTransportInterface",
    "MCPClientEventMap",
    "MCPClientOptions",
    "MCPClientInterface",
    "createMCPRoutes",
    "createHTTPClientTransport",
    "createMCPSession",
    "HTTPClientTransport",
    "MCPSession",
    "MCP_SESSION_HEADER",
    "MCP_PROTOCOL_VERSION_HEADER",
    "DEFAULT_MCP_PATH",
    "DEFAULT_MCP_SESSION_CAPACITY",
    "DEFAULT_MCP_SESSION_TTL",
    "acceptsEventStream",
    "readSessionHeader",
    "readLastEventId",
    "rejectUnknownSession",
    "readEventStream",
    "decodeEvent",
    "upgradeRequestPath",
    "extractLines",
    "dispatchLines",
    "HTTPTransportOptions",
    "HTTPClientTransportOptions",
    "MCPSessionOptions",
    "MCPSessionInterface",
    "MCPSessionState",
    "EventStoreEntry",
    "MCPSessionEntry",
    "createWebSocketServer",
    "createWebSocketClientTransport",
    "WebSocketServerTransport",
    "WebSocketClientTransport",
    "MCP_WEBSOCKET_SUBPROTOCOL",
    "WebSocketServerOptions",
    "WebSocketClientTransportOptions",
    "createStdioClientTransport",
    "createStdioServer",
    "StdioClientTransport",
    "StdioServerTransport",
    "StdioClientTransportOptions",
    "StdioServerOptions",
    "LineExtraction",
    "MCPServerInterface.dispatch",
    "MCPServerInterface.handle",
    "MCPClientInterface.on",
    "MCPClientInterface.connect",
    "MCPClientInterface.disconnect",
    "MCPClientInterface.tools",
    "MCPClientInterface.call",
    "ClientTransportInterface.start",
    "ClientTransportInterface.send",
    "ClientTransportInterface.close",
    "MCPSessionInterface.attach",
    "MCPSessionInterface.detach",
    "MCPSessionInterface.push",
    "MCPSessionInterface.replay",
    "clause 1",
    "clause 2",
    "clause 3",
    "clause 4",
    "clause 5",
    "clause 6",
    "clause 7",
    "clause 8",
    "clause 9",
    "clause 10",
    "clause 11",
    "clause 12",
    "clause 13",
    "clause 14",
    "clause 15",
    "clause 16",
    "clause 17",
    "clause 18",
    "clause 19",
    "clause 20",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Backticked spans of a table cell.
fn ticks(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

struct Row {
    first: String,
    item: String,
    test: String,
}

fn rows(text: &str) -> Vec<Row> {
    text.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            let n = cells.len();
            Row {
                first: ticks(cells[0]).join(" "),
                item: if n >= 4 {
                    cells[n - 2].to_owned()
                } else {
                    cells[0].to_owned()
                },
                test: cells[n - 1].to_owned(),
            }
        })
        .collect()
}

/// Whether `name` is defined somewhere in the sources (item, method, field, variant or const).
fn defined(sources: &str, name: &str) -> bool {
    let name = name.trim_end_matches("()");
    let last = name.rsplit("::").next().unwrap();
    if sources.contains(&format!("pub {last}: "))
        || sources.contains(&format!("    {last}("))
        || sources.contains(&format!("    {last} {{"))
    {
        return true; // a public field or an enum variant
    }
    [
        "fn ", "struct ", "enum ", "trait ", "type ", "const ", "static ", "mod ",
    ]
    .iter()
    .any(|kw| {
        let needle = format!("{kw}{last}");
        sources.match_indices(&needle).any(|(i, _)| {
            let after = sources[i + needle.len()..].chars().next().unwrap_or(' ');
            !(after.is_alphanumeric() || after == '_')
        })
    })
}

#[test]
fn every_seed_row_is_mapped_and_every_item_and_test_exists() {
    let text = fs::read_to_string(root().join("features.md")).unwrap();
    let rows = rows(&text);
    let firsts: BTreeSet<String> = rows.iter().map(|r| r.first.clone()).collect();
    for seed in SEED_ROWS {
        assert!(
            firsts.contains(*seed),
            "features.md has no row for seed `{seed}`"
        );
    }
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let sources: String = files
        .iter()
        .map(|f| fs::read_to_string(f).unwrap())
        .collect();
    for row in &rows {
        if row.item.starts_with("planned") {
            assert_eq!(row.test, "—", "`{}` is planned but names a test", row.first);
            continue;
        }
        for item in ticks(&row.item) {
            if item.contains(' ') || item.contains('"') || item.contains('.') {
                continue; // prose in backticks, e.g. a JSON value
            }
            assert!(
                defined(&sources, &item),
                "`{item}` (row `{}`) is not defined in src/",
                row.first
            );
        }
        let tests = ticks(&row.test);
        assert!(!tests.is_empty(), "row `{}` names no test", row.first);
        for test in tests {
            let (file, name) = test
                .split_once("::")
                .unwrap_or_else(|| panic!("bad test ref `{test}`"));
            let body = fs::read_to_string(root().join(file))
                .unwrap_or_else(|_| panic!("no file {file} (row `{}`)", row.first));
            let found = if file.ends_with(".rs") {
                body.contains(&format!("fn {name}("))
            } else {
                body.contains(name)
            };
            assert!(found, "test `{test}` (row `{}`) does not exist", row.first);
        }
    }
}

#[test]
fn every_public_top_level_item_is_listed() {
    let text = fs::read_to_string(root().join("features.md")).unwrap();
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut missing = Vec::new();
    for file in files
        .iter()
        .filter(|f| !f.to_string_lossy().contains("/bin/"))
    {
        for line in fs::read_to_string(file).unwrap().lines() {
            let Some(rest) = line.strip_prefix("pub ") else {
                continue;
            };
            let rest = rest.strip_prefix("async ").unwrap_or(rest);
            let mut words = rest.split(|c: char| !(c.is_alphanumeric() || c == '_'));
            let kind = words.next().unwrap_or("");
            if !["fn", "struct", "enum", "trait", "type", "const", "static"].contains(&kind) {
                continue;
            }
            let name = words.find(|w| !w.is_empty()).unwrap_or("");
            let listed = text.contains(&format!("`{name}`"))
                || text.contains(&format!("::{name}`"))
                || text.contains(&format!("::{name}::"))
                || text.contains(&format!(", {name}`"))
                || text.contains(&format!("`{name},"))
                || text.contains(&format!("`{name}::"));
            if !listed {
                missing.push(format!(
                    "{}: {name}",
                    file.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "public items missing from features.md:\n{}",
        missing.join("\n")
    );
}

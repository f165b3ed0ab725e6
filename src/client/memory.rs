//! An in-process transport: a client wired straight to an [`McpServer`], with no I/O (fast
//! tests, and an in-memory client↔server pair).

use std::sync::Mutex;

use crate::client::{ClientError, ClientTransport, TransportSink};
use crate::server::McpServer;
use crate::wire::jsonrpc::JsonRpcMessage;
use crate::BoxFuture;

/// A [`ClientTransport`] that dispatches each message on an [`McpServer`] in the caller's task
/// and delivers the response through the sink before `send` returns.
#[derive(Debug)]
pub struct MemoryTransport {
    server: McpServer,
    sink: Mutex<Option<TransportSink>>,
}

impl MemoryTransport {
    /// A transport to `server`.
    pub fn new(server: McpServer) -> Self {
        MemoryTransport {
            server,
            sink: Mutex::new(None),
        }
    }

    fn sink(&self) -> Option<TransportSink> {
        self.sink.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl ClientTransport for MemoryTransport {
    fn start(&self, sink: TransportSink) -> BoxFuture<'_, Result<(), ClientError>> {
        *self.sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(sink);
        Box::pin(async { Ok(()) })
    }

    fn send(&self, message: JsonRpcMessage) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            let sink = self
                .sink()
                .ok_or_else(|| ClientError::closed("the memory transport is closed"))?;
            if let Some(response) = self.server.dispatch(message).await {
                let value = serde_json::to_value(&response)
                    .map_err(|e| ClientError::Transport(e.to_string()))?;
                // The server never sends requests of its own here; nothing to write back.
                let _ = sink.receive(value);
            }
            Ok(())
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        self.sink.lock().unwrap_or_else(|e| e.into_inner()).take();
        Box::pin(async {})
    }
}

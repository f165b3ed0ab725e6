//! The same server on rmcp: `echo` through its `#[tool_router]` macros (the way its docs build
//! tools), plus fillers registered as dynamic routes for the 100-tool `tools/list`.

use futures::channel::mpsc;
use futures::future::BoxFuture;
use futures::{SinkExt, StreamExt};
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientJsonRpcMessage, ContentBlock, ServerCapabilities,
    ServerConfig, ServerJsonRpcMessage,
};
use rmcp::service::{serve_directly, RoleServer, RunningService};
use rmcp::transport::OneshotTransport;
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};

use crate::{filler_description, filler_name, EchoArgs};

/// An rmcp server with the echo tool and `fillers` more.
#[derive(Clone)]
pub struct RmcpBench {
    tool_router: ToolRouter<Self>,
}

impl RmcpBench {
    /// The server with `fillers` extra tools of echo's shape.
    pub fn new(fillers: usize) -> Self {
        let mut tool_router = Self::tool_router();
        let schema = rmcp::handler::server::common::schema_for_type::<EchoArgs>();
        for i in 0..fillers {
            let tool =
                rmcp::model::Tool::new(filler_name(i), filler_description(i), schema.clone());
            tool_router.add_route(ToolRoute::new_dyn(tool, filler));
        }
        RmcpBench { tool_router }
    }
}

fn filler(
    ctx: ToolCallContext<'_, RmcpBench>,
) -> BoxFuture<'_, Result<CallToolResponse, ErrorData>> {
    let text = ctx
        .arguments
        .as_ref()
        .and_then(|a| a.get("text"))
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    Box::pin(async move { Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into()) })
}

#[tool_router]
impl RmcpBench {
    /// Echo the text back.
    #[tool(description = "Echo the text back.")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpBench {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// rmcp's service loop, fed parsed messages through channels (its transport minus framing).
pub struct RmcpPipe {
    tx: mpsc::Sender<ClientJsonRpcMessage>,
    rx: mpsc::Receiver<ServerJsonRpcMessage>,
    _service: RunningService<RoleServer, RmcpBench>,
}

impl RmcpPipe {
    /// Start the service on `rt`.
    pub fn new(rt: &tokio::runtime::Handle, server: RmcpBench) -> Self {
        let (tx, server_rx) = mpsc::channel::<ClientJsonRpcMessage>(16);
        let (server_tx, rx) = mpsc::channel::<ServerJsonRpcMessage>(16);
        let _guard = rt.enter();
        let service = serve_directly(server, (server_tx, server_rx), None);
        RmcpPipe {
            tx,
            rx,
            _service: service,
        }
    }

    /// Parse, dispatch through the running service, serialize the reply.
    pub async fn handle(&mut self, bytes: &[u8]) -> Vec<u8> {
        let message: ClientJsonRpcMessage = serde_json::from_slice(bytes).expect("rmcp parses");
        self.tx
            .send(message)
            .await
            .expect("rmcp service is running");
        let reply = self.rx.next().await.expect("rmcp replies");
        serde_json::to_vec(&reply).expect("rmcp reply serializes")
    }
}

/// rmcp's stateless HTTP path without HTTP: a one-shot service per request.
pub async fn rmcp_oneshot(server: &RmcpBench, bytes: &[u8]) -> Vec<u8> {
    let message: ClientJsonRpcMessage = serde_json::from_slice(bytes).expect("rmcp parses");
    let (transport, mut receiver) = OneshotTransport::<RoleServer>::new(message);
    let service = serve_directly(server.clone(), transport, None);
    let reply = receiver.recv().await.expect("rmcp replies");
    drop(service);
    serde_json::to_vec(&reply).expect("rmcp reply serializes")
}

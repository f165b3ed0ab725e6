//! The same server on rmcp: `echo` through its `#[tool_router]` macros (the way its docs build
//! tools), plus fillers registered as dynamic routes for the 100-tool `tools/list`.

use futures::future::BoxFuture;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ServerCapabilities, ServerConfig,
};
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

//! The tool gateway: an MCP server named `agent-runtime` whose tools are
//! the decision kinds, with the descriptions and schemas the decision
//! schema has. A call is passed on to the attempt's thread as an
//! [`Ask::Tool`], where it takes exactly the path a decision of the
//! runtime's own loop takes; its observation is the tool's result, a
//! refusal a tool error.

use std::sync::mpsc::Sender;

use rmcp::ErrorData as McpError;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use crate::agent::{Ask, ToolAnswer};
use crate::provider::decision_tools;

/// The gateway of one attempt.
#[derive(Clone)]
pub(crate) struct Gateway {
    pub(crate) asks: Sender<Ask>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Gateway")
    }
}

/// The gateway's tools: one per decision kind.
pub(crate) fn tools() -> Vec<Tool> {
    decision_tools()
        .into_iter()
        .map(|spec| {
            let schema = match spec.parameters {
                Value::Object(schema) => schema,
                _ => serde_json::Map::new(),
            };
            Tool::new(spec.name, spec.description, schema)
        })
        .collect()
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                crate::agents::GATEWAY,
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "The only way to the task's workspace: read, list, write and replace \
                 files, run allowed commands, verify, and finish.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let ask = Ask::Tool {
            name: request.name.to_string(),
            input: request.arguments.map_or(Value::Null, Value::Object),
            answer: Box::new(move |answer: ToolAnswer| {
                let _ = tx.send(answer);
            }),
        };
        let answer = match self.asks.send(ask) {
            Ok(()) => rx.await.ok(),
            Err(_) => None,
        };
        let answer = answer.unwrap_or(ToolAnswer {
            text: "agent-runtime: the attempt has ended".to_string(),
            error: true,
        });
        let content = vec![ContentBlock::text(answer.text)];
        Ok(if answer.error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }
}

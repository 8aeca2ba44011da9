//! maskbus as an MCP server: the tools of the config's role, and nothing else, served over
//! stdio to any MCP host (Claude Code or Desktop, Cursor, ...).
//!
//! The structural limits are the model-free path's, because the calls go through the same
//! `Agent::call`: a tool outside the role's registry is blocked, arguments are checked against
//! the tool's schema by the same strict parsing, and the producer's only data tool,
//! `query_masked`, returns `MaskedRow`s. The producer's `mailbox_send` sends such a result by the
//! handle it carries, never JSON the model wrote (tracker issue 51). A failed call is an MCP error *result* (`isError: true`,
//! with a message the model can read), never a crash: the server keeps running. Logs go to
//! stderr; stdout carries only the protocol.

use maskbus_config::Role;
use maskbus_tools::{Agent, Tool as MaskbusTool};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use std::sync::Arc;

/// The MCP face of one running agent.
pub struct MaskbusServer {
    agent: Arc<Agent>,
}

impl MaskbusServer {
    pub fn new(agent: Agent) -> Self {
        Self {
            agent: Arc::new(agent),
        }
    }

    /// The role's tools as MCP tool definitions, each as the role has it.
    pub fn tools(&self) -> Vec<Tool> {
        let role = self.agent.role();
        self.agent
            .tools()
            .iter()
            .map(|tool| {
                let schema = match tool.input_schema(role) {
                    Value::Object(map) => map,
                    _ => serde_json::Map::new(),
                };
                Tool::new(tool.name(), tool.description(role), Arc::new(schema))
            })
            .collect()
    }
}

/// What the server tells the model it serves, naming the role's tools from their definitions.
fn instructions(role: Role) -> String {
    match role {
        Role::Producer => format!(
            "You are the production-side maskbus agent. Your only data tool is {query}: \
             every row it returns has been masked by the producer's policy (SSNs, cards, emails, names and account numbers are \
             masked before you see them), and a reply carries at most {max} rows. Answer requests that arrive in your mailbox \
             ({wait}) by calling {query} for the rows asked for, then {send} with the `handle` its result carries, to the \
             request's reply_to, with its correlation_id. You send a query result by its handle, as the producer built it: \
             there is no body to write, and nothing else can be sent.",
            query = MaskbusTool::QueryMasked,
            max = maskbus_tools::MAX_TOOL_ROWS,
            wait = MaskbusTool::MailboxWait,
            send = MaskbusTool::MailboxSend,
        ),
        Role::Consumer => format!(
            "You are the test-side maskbus agent. You cannot read production. Ask the \
             producer agent for rows through the bus ({send} to its mailbox with your reply_to, then {wait}), insert \
             what comes back with {insert} (parents before children; inserting the same rows twice changes nothing), read \
             the test database with {local}, and see how far it is synced with {watermark}.",
            send = MaskbusTool::MailboxSend,
            wait = MaskbusTool::MailboxWait,
            insert = MaskbusTool::InsertRows,
            local = MaskbusTool::QueryLocal,
            watermark = MaskbusTool::Watermark,
        ),
    }
}

impl ServerHandler for MaskbusServer {
    fn get_info(&self) -> ServerConfig {
        let instructions = instructions(self.agent.role());
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                format!("maskbus-{}", self.agent.role()),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(instructions)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        // Every failure, a blocked tool included, is a result the model can read.
        let result = match self.agent.call(&request.name, arguments).await {
            Ok(value) => CallToolResult::success(vec![ContentBlock::text(value.to_string())]),
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error.to_string())]),
        };
        Ok(result.into())
    }
}

/// Why MCP could not be served (the protocol library's own words: they hold no value of ours).
#[derive(Debug)]
pub enum ServeError {
    /// The client's handshake failed.
    Init(String),
    /// The session ended on an error.
    Stopped(String),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Init(e) => write!(f, "MCP initialisation failed: {e}"),
            ServeError::Stopped(e) => write!(f, "MCP server stopped: {e}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// Serves MCP on stdin/stdout until the client closes the connection.
pub async fn serve_stdio(agent: Agent) -> Result<(), ServeError> {
    let role = agent.role();
    let service = MaskbusServer::new(agent)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Init(e.to_string()))?;
    tracing::info!(role = role.name(), "MCP server ready on stdio");
    service
        .waiting()
        .await
        .map_err(|e| ServeError::Stopped(e.to_string()))?;
    Ok(())
}

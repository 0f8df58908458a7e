//! One conversation, whatever API it came in: the system prompt, the turns
//! in order, the tools offered; and one reply to it.

use serde_json::Value;

/// A model request, read from any dialect.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub model: String,
    /// The system prompt, its parts joined by blank lines.
    pub system: String,
    pub turns: Vec<Turn>,
    pub tools: Vec<Tool>,
    /// Whether the reply is to be streamed.
    pub stream: bool,
    pub max_tokens: Option<u64>,
}

/// One turn of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// What the user (or the agent on its behalf) said.
    User(String),
    /// What the model said: text and the tools it called.
    Assistant { text: String, calls: Vec<ToolCall> },
    /// What a tool call gave back.
    ToolResult {
        call_id: String,
        text: String,
        error: bool,
    },
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub description: String,
    /// Its input's JSON Schema.
    pub schema: Value,
}

/// A call of a tool, by the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// Its arguments, an object.
    pub input: Value,
}

/// Why a reply ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The model is done with its turn.
    EndTurn,
    /// It asks for tool calls.
    ToolUse,
    /// It ran into its output limit.
    MaxTokens,
}

/// The model's answer to a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub text: String,
    pub calls: Vec<ToolCall>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub stop: Stop,
}

/// A request the bridge cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a {dialect} request: {what}")]
pub struct DialectError {
    pub dialect: &'static str,
    pub what: String,
}

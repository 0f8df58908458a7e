use std::time::Duration;

use serde_json::{Value, json};

use super::mock::{MockServer, Reply};
use super::{fast, request_with_history};
use crate::cancel::CancelToken;
use crate::decision::{Decision, parse_decision};
use crate::manifest::AnthropicConfig;
use crate::provider::{ANTHROPIC_VERSION, AnthropicProvider, Provider, Secret};

const KEY: &str = "sk-ant-test-key";

fn provider(base_url: String, retries: u32) -> AnthropicProvider {
    let config = AnthropicConfig {
        base_url,
        model: "claude-test".to_string(),
        api_key_env: "TEST_ANTHROPIC_KEY".to_string(),
        max_tokens: 1024,
        timeout: Duration::from_secs(5),
        max_retries: retries,
        retry_for: std::time::Duration::ZERO,
    };
    AnthropicProvider::new(config, Secret::new(KEY)).with_retry_policy(fast(retries))
}

fn tool_use(name: &str, input: Value) -> Value {
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [
            { "type": "text", "text": "The range excludes n." },
            { "type": "tool_use", "id": "toolu_1", "name": name, "input": input },
        ],
        "stop_reason": "tool_use",
        "usage": { "input_tokens": 200, "cache_read_input_tokens": 50, "output_tokens": 30 },
    })
}

#[test]
fn tool_use_becomes_the_decision_and_history_is_replayed_as_blocks() {
    let input = json!({"path": "src/lib.rs", "expected": "1..n", "replacement": "1..=n"});
    let server = MockServer::start(vec![Reply::json(200, &tool_use("replace_text", input))]);
    let mut provider = provider(server.root_url(), 0);
    let reply = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap();
    assert!(matches!(
        parse_decision(&reply.text).unwrap(),
        Decision::ReplaceText { .. }
    ));
    assert_eq!((reply.input_tokens, reply.output_tokens), (250, 30));
    assert!(reply.retries.is_empty());
    let requests = server.finish();
    let request = &requests[0];
    assert_eq!(request.request_line, "POST /v1/messages HTTP/1.1");
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some(ANTHROPIC_VERSION));
    let body = &request.body;
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], 1024);
    assert_eq!(body["system"], "You fix bugs. Reply with one decision.");
    assert_eq!(body["tool_choice"]["type"], "any");
    assert_eq!(
        body["tools"].as_array().unwrap().len(),
        crate::decision::KINDS.len()
    );
    assert_eq!(body["tools"][0]["name"], "read_file");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[0],
        json!({"role": "user", "content": [{"type": "text", "text": "Fix sum_up_to."}]})
    );
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "src/lib.rs"}}]})
    );
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "call_1");
}

#[test]
fn overloaded_529_is_retried() {
    let overloaded = Reply::json(
        529,
        &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    let server = MockServer::start(vec![
        overloaded,
        Reply::json(200, &tool_use("verify", json!({}))),
    ]);
    let mut provider = provider(server.root_url(), 2);
    let reply = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap();
    assert_eq!(reply.text, r#"{"kind":"verify"}"#);
    assert_eq!(reply.retries.len(), 1);
    assert_eq!(reply.retries[0].reason, "http 529");
    assert_eq!(server.finish().len(), 2);
}

#[test]
fn a_reply_without_tool_use_is_its_text_and_errors_name_the_url() {
    let text_only = json!({"content": [{"type": "text", "text": "{\"kind\":\"verify\"}"}], "usage": {"input_tokens": 5, "output_tokens": 6}});
    let invalid = Reply::json(
        401,
        &json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
    );
    let server = MockServer::start(vec![Reply::json(200, &text_only), invalid]);
    let root = server.root_url();
    let mut provider = provider(root.clone(), 2);
    let reply = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap();
    assert_eq!(reply.text, r#"{"kind":"verify"}"#);
    let err = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("anthropic provider: http 401 from {root}/v1/messages: invalid x-api-key")
    );
    assert!(err.retries().is_empty());
    server.finish();
}

/// An agent's conversation (through the model bridge) goes out with its
/// own tools and history, and the reply's calls come back as calls.
#[test]
fn an_agent_s_conversation_is_answered_with_its_own_tools() {
    use crate::protocol::{Conversation, Stop, Tool, ToolCall, Turn};
    use crate::provider::ConverseTurn;
    let input = json!({"path": "src/lib.rs"});
    let server = MockServer::start(vec![Reply::json(200, &tool_use("read_file", input))]);
    let mut provider = provider(server.root_url(), 0);
    let conversation = Conversation {
        model: "whatever-the-agent-asked".into(),
        system: "You are an agent.".into(),
        turns: vec![
            Turn::User("Fix it.".into()),
            Turn::Assistant {
                text: String::new(),
                calls: vec![ToolCall {
                    id: "toolu_0".into(),
                    name: "list_files".into(),
                    input: json!({"path": "."}),
                }],
            },
            Turn::ToolResult {
                call_id: "toolu_0".into(),
                text: "src/lib.rs".into(),
                error: false,
            },
        ],
        tools: vec![Tool {
            name: "read_file".into(),
            description: "Read a file.".into(),
            schema: json!({"type": "object"}),
        }],
        stream: true,
        max_tokens: None,
    };
    let turn = ConverseTurn {
        attempt: 1,
        side: false,
    };
    let conversed = provider
        .converse(&conversation, turn, &CancelToken::new())
        .unwrap();
    assert_eq!(conversed.reply.stop, Stop::ToolUse);
    assert_eq!(conversed.reply.calls[0].name, "read_file");
    assert_eq!(conversed.reply.calls[0].input["path"], "src/lib.rs");
    assert_eq!(conversed.billed.input_tokens, 200);
    let requests = server.finish();
    let body = &requests[0].body;
    assert_eq!(requests[0].header("x-api-key"), Some(KEY));
    // The job's model, not the agent's; the agent's tools, not the
    // decision kinds; its history as blocks.
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["tools"].as_array().unwrap().len(), 1);
    assert_eq!(body["system"], "You are an agent.");
    assert_eq!(body["messages"][1]["content"][0]["type"], "tool_use");
    assert_eq!(body["messages"][2]["content"][0]["tool_use_id"], "toolu_0");
}

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::mock::{MockServer, Reply, refused_url};
use super::{fast, request_with_history};
use crate::cancel::CancelToken;
use crate::decision::{Decision, DecisionError, parse_decision};
use crate::manifest::{OpenAiConfig, OpenAiMode};
use crate::provider::{OpenAiProvider, Provider, ProviderError, Secret};

const KEY: &str = "sk-test-0123456789";

fn config(base_url: String, mode: OpenAiMode) -> OpenAiConfig {
    OpenAiConfig {
        base_url,
        model: "local-model".to_string(),
        api_key_env: Some("TEST_OPENAI_KEY".to_string()),
        mode,
        temperature: Some(0.2),
        max_tokens: Some(512),
        timeout: Duration::from_secs(5),
        max_retries: 2,
        retry_for: std::time::Duration::ZERO,
    }
}

fn provider(base_url: String, mode: OpenAiMode, retries: u32) -> OpenAiProvider {
    OpenAiProvider::new(config(base_url, mode), Some(Secret::new(KEY)))
        .with_retry_policy(fast(retries))
}

fn completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-1",
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 120, "completion_tokens": 14, "total_tokens": 134 },
    })
}

fn ok(content: &str) -> Reply {
    Reply::json(200, &completion(content))
}

const DECISION: &str =
    r#"{"kind":"replace_text","path":"src/lib.rs","expected":"1..n","replacement":"1..=n"}"#;

#[test]
fn json_schema_mode_sends_the_schema_and_reads_the_reply() {
    let server = MockServer::start(vec![ok(DECISION)]);
    let mut provider = provider(server.base_url(), OpenAiMode::JsonSchema, 2);
    let reply = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap();
    assert_eq!(reply.text, DECISION);
    assert_eq!((reply.input_tokens, reply.output_tokens), (120, 14));
    assert!(reply.retries.is_empty());
    let requests = server.finish();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = &request.body;
    assert_eq!(body["model"], "local-model");
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(body["max_tokens"], 512);
    let format = &body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "decision");
    assert_eq!(format["json_schema"]["strict"], false);
    assert_eq!(
        format["json_schema"]["schema"],
        crate::decision::decision_schema()
    );
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert!(body.get("tools").is_none());
}

#[test]
fn json_object_mode_sends_a_top_level_schema() {
    let server = MockServer::start(vec![ok(DECISION)]);
    let mut provider = provider(server.base_url(), OpenAiMode::JsonObject, 0);
    let mut request = request_with_history();
    request.schema = Some(json!({"type": "object"}));
    let reply = provider.complete(&request, &CancelToken::new()).unwrap();
    assert_eq!(reply.text, DECISION);
    let body = &server.finish()[0].body;
    assert_eq!(
        body["response_format"],
        json!({"type": "json_object", "schema": {"type": "object"}})
    );
}

#[test]
fn text_mode_constrains_nothing_and_the_decision_is_parsed_from_prose() {
    let prose = format!("The range is off by one.\n```json\n{DECISION}\n```");
    let server = MockServer::start(vec![Reply::json(
        200,
        &json!({"choices": [{"message": {"content": prose}}]}),
    )]);
    let mut provider = provider(server.base_url(), OpenAiMode::Text, 0);
    let request = request_with_history();
    let reply = provider.complete(&request, &CancelToken::new()).unwrap();
    assert!(matches!(
        parse_decision(&reply.text).unwrap(),
        Decision::ReplaceText { .. }
    ));
    // No usage reported: estimated, never zero for a real prompt.
    assert!(reply.input_tokens > 0 && reply.output_tokens > 0);
    let body = &server.finish()[0].body;
    assert!(body.get("response_format").is_none());
    assert!(body.get("tools").is_none());
}

#[test]
fn tools_mode_replays_history_as_calls_and_maps_the_call_to_a_decision() {
    let response = json!({
        "choices": [{ "message": { "role": "assistant", "content": null, "tool_calls": [{
            "id": "call_abc", "type": "function",
            "function": { "name": "replace_text", "arguments": "{\"path\":\"src/lib.rs\",\"expected\":\"1..n\",\"replacement\":\"1..=n\"}" }
        }]}, "finish_reason": "tool_calls" }],
        "usage": { "prompt_tokens": 300, "completion_tokens": 20 },
    });
    let server = MockServer::start(vec![Reply::json(200, &response)]);
    let mut provider = provider(server.base_url(), OpenAiMode::Tools, 0);
    let reply = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap();
    assert_eq!(
        parse_decision(&reply.text).unwrap(),
        parse_decision(DECISION).unwrap()
    );
    let body = &server.finish()[0].body;
    assert_eq!(
        body["tools"].as_array().unwrap().len(),
        crate::decision::KINDS.len()
    );
    assert_eq!(body["tool_choice"], "required");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "assistant");
    let call = &messages[2]["tool_calls"][0];
    assert_eq!(call["id"], "call_1");
    assert_eq!(call["function"]["name"], "read_file");
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"path": "src/lib.rs"}));
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "pub fn sum_up_to(n: u32) -> u32 { (1..n).sum() }"})
    );
}

#[test]
fn a_tool_call_with_broken_arguments_is_an_invalid_decision_not_a_crash() {
    let response = json!({"choices": [{"message": {"tool_calls": [{
        "id": "c", "type": "function",
        "function": { "name": "write_file", "arguments": "{\"path\": \"src/lib.rs\", \"content\": \"fn x() {" }
    }]}}]});
    let server = MockServer::start(vec![Reply::json(200, &response)]);
    let mut provider = provider(server.base_url(), OpenAiMode::Tools, 0);
    let reply = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap();
    assert!(
        reply.text.contains(r#""content": "fn x() {"#),
        "{}",
        reply.text
    );
    let err = parse_decision(&reply.text).unwrap_err();
    assert!(matches!(err, DecisionError::Json { .. }), "{err:?}");
    server.finish();
}

#[test]
fn a_429_with_retry_after_is_retried_after_the_asked_wait() {
    let limited = Reply::json(429, &json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}))
        .with_header("Retry-After", "0.2");
    let server = MockServer::start(vec![limited, ok(DECISION)]);
    let mut provider = provider(server.base_url(), OpenAiMode::JsonSchema, 2);
    let started = Instant::now();
    let reply = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(reply.text, DECISION);
    assert_eq!(reply.retries.len(), 1);
    assert_eq!(reply.retries[0].attempt, 1);
    assert_eq!(reply.retries[0].reason, "http 429");
    assert_eq!(reply.retries[0].wait_ms, 200);
    assert!(reply.latency >= Duration::from_millis(200));
    assert_eq!(server.finish().len(), 2);
}

#[test]
fn a_503_then_success_is_one_retry() {
    let server = MockServer::start(vec![
        Reply::json(503, &json!({"error": "loading model"})),
        ok(DECISION),
    ]);
    let mut provider = provider(server.base_url(), OpenAiMode::JsonSchema, 2);
    let reply = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap();
    assert_eq!(reply.text, DECISION);
    assert_eq!(reply.retries.len(), 1);
    assert_eq!(reply.retries[0].reason, "http 503");
    assert!(reply.retries[0].wait_ms <= 1);
    assert_eq!(server.finish().len(), 2);
}

#[test]
fn connection_refused_is_retried_then_reported_with_the_retries() {
    let url = refused_url();
    let mut provider = provider(url.clone(), OpenAiMode::JsonSchema, 2);
    let err = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap_err();
    assert!(err.is_retryable());
    let reasons: Vec<&str> = err.retries().iter().map(|r| r.reason.as_str()).collect();
    assert_eq!(reasons, ["connection refused", "connection refused"]);
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "openai provider: connection refused from {url}/chat/completions"
        )),
        "{message}"
    );
    assert!(message.ends_with("(after 2 retries)"), "{message}");
    assert!(!message.contains('\n'));
}

#[test]
fn a_server_that_does_not_answer_times_out() {
    let server = MockServer::start(vec![Reply::Stall(Duration::from_secs(2))]);
    let mut config = config(server.base_url(), OpenAiMode::JsonSchema);
    config.timeout = Duration::from_millis(300);
    let mut provider = OpenAiProvider::new(config, None).with_retry_policy(fast(0));
    let started = Instant::now();
    let err = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(err.is_retryable());
    assert!(err.to_string().contains("timeout"), "{err}");
    assert!(err.to_string().contains("within 300ms"), "{err}");
    server.finish();
}

#[test]
fn a_cancel_returns_promptly_while_the_server_is_silent() {
    let server = MockServer::start(vec![Reply::Stall(Duration::from_secs(1))]);
    let mut provider = provider(server.base_url(), OpenAiMode::JsonSchema, 0);
    let cancel = CancelToken::new();
    let canceller = cancel.clone();
    let thread = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        canceller.cancel();
    });
    let started = Instant::now();
    let err = provider
        .complete(&request_with_history(), &cancel)
        .unwrap_err();
    assert!(matches!(err, ProviderError::Cancelled), "{err}");
    assert!(started.elapsed() < Duration::from_millis(800));
    thread.join().unwrap();
    server.finish();
}

#[test]
fn a_truncated_body_is_retried() {
    let truncated = Reply::Raw("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\nConnection: close\r\n\r\n{\"choices\": [".to_string());
    let server = MockServer::start(vec![truncated, ok(DECISION)]);
    let mut provider = provider(server.base_url(), OpenAiMode::JsonSchema, 1);
    let reply = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap();
    assert_eq!(reply.text, DECISION);
    assert_eq!(reply.retries.len(), 1);
    assert_eq!(reply.retries[0].reason, "truncated response body");
    server.finish();
}

#[test]
fn invalid_json_is_not_retried() {
    let garbage = Reply::Http {
        status: 200,
        headers: Vec::new(),
        body: "<html>proxy error</html>".to_string(),
    };
    let server = MockServer::start(vec![garbage]);
    let mut provider = provider(server.base_url(), OpenAiMode::JsonSchema, 3);
    let err = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap_err();
    assert!(!err.is_retryable());
    assert!(err.retries().is_empty());
    assert!(
        err.to_string()
            .starts_with("openai provider: invalid JSON in the response from http://127.0.0.1:"),
        "{err}"
    );
    assert_eq!(server.finish().len(), 1);
}

#[test]
fn insufficient_quota_is_not_retried() {
    let quota = Reply::json(429, &json!({"error": {"message": "You exceeded your current quota.", "type": "insufficient_quota", "code": "insufficient_quota"}}))
        .with_header("Retry-After", "1");
    let server = MockServer::start(vec![quota]);
    let mut provider = provider(server.base_url(), OpenAiMode::JsonSchema, 3);
    let err = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap_err();
    assert!(!err.is_retryable());
    assert!(err.retries().is_empty());
    assert!(err.to_string().contains("http 429"), "{err}");
    assert!(
        err.to_string()
            .ends_with("You exceeded your current quota."),
        "{err}"
    );
    assert_eq!(server.finish().len(), 1);
}

#[test]
fn a_400_is_not_retried_and_reads_in_one_line() {
    let server = MockServer::start(vec![Reply::json(
        400,
        &json!({"error": {"message": "'messages' must\ncontain at least one message"}}),
    )]);
    let base = server.base_url();
    let mut provider = provider(base.clone(), OpenAiMode::JsonSchema, 3);
    let err = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "openai provider: http 400 from {base}/chat/completions: 'messages' must contain at least one message"
        )
    );
    assert_eq!(server.finish().len(), 1);
}

#[test]
fn the_key_never_appears_in_an_error() {
    let echo = Reply::json(
        401,
        &json!({"error": {"message": format!("Incorrect API key provided: {KEY}.")}}),
    );
    let server = MockServer::start(vec![echo]);
    let base = server.base_url();
    let mut provider = provider(base.clone(), OpenAiMode::JsonSchema, 3);
    let err = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "openai provider: http 401 from {base}/chat/completions: Incorrect API key provided: [redacted]."
        )
    );
    assert!(!format!("{err:?}").contains(KEY));
    assert!(!format!("{provider:?}").contains(KEY));
    server.finish();
}

/// An agent's conversation (through the model bridge) goes out as a Chat
/// Completions request with its own tools and history; a tool call comes
/// back as a call; a transient failure is retried as for any call.
#[test]
fn an_agent_s_conversation_is_answered_with_its_own_tools() {
    use crate::protocol::{Conversation, Stop, Tool, ToolCall, Turn};
    use crate::provider::ConverseTurn;
    let call = json!({
        "id": "chatcmpl-2",
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": null,
            "tool_calls": [{ "id": "call_7", "type": "function",
                "function": { "name": "read_file", "arguments": "{\"path\":\"src/lib.rs\"}" } }] },
            "finish_reason": "tool_calls" }],
        "usage": { "prompt_tokens": 300, "completion_tokens": 9, "total_tokens": 309 },
    });
    let server = MockServer::start(vec![
        Reply::json(503, &json!({"error": {"message": "loading"}})),
        Reply::json(200, &call),
    ]);
    let mut provider = provider(server.base_url(), OpenAiMode::JsonSchema, 2);
    let conversation = Conversation {
        model: "claude-sonnet-whatever".into(),
        system: "You are Claude Code.".into(),
        turns: vec![
            Turn::User("Fix it.".into()),
            Turn::Assistant {
                text: "Looking.".into(),
                calls: vec![ToolCall {
                    id: "toolu_1".into(),
                    name: "list_files".into(),
                    input: json!({"path": "."}),
                }],
            },
            Turn::ToolResult {
                call_id: "toolu_1".into(),
                text: "src/lib.rs".into(),
                error: false,
            },
        ],
        tools: vec![Tool {
            name: "read_file".into(),
            description: "Read a file.".into(),
            schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        stream: true,
        max_tokens: Some(32000),
    };
    let turn = ConverseTurn {
        attempt: 1,
        side: false,
    };
    let conversed = provider
        .converse(&conversation, turn, &CancelToken::new())
        .unwrap();
    assert_eq!(conversed.reply.stop, Stop::ToolUse);
    assert_eq!(conversed.reply.calls[0].id, "call_7");
    assert_eq!(conversed.reply.calls[0].input["path"], "src/lib.rs");
    assert_eq!(conversed.billed.retries.len(), 1);
    assert_eq!(conversed.billed.input_tokens, 300);
    let requests = server.finish();
    let body = &requests[1].body;
    assert_eq!(
        requests[1].header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    // The job's model and limits; the agent's system prompt, history and
    // tools in Chat Completions' shape.
    assert_eq!(body["model"], "local-model");
    assert_eq!(body["max_tokens"], 512);
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][2]["tool_calls"][0]["id"], "toolu_1");
    assert_eq!(body["messages"][3]["role"], "tool");
    assert_eq!(body["messages"][3]["tool_call_id"], "toolu_1");
    assert_eq!(body["tools"][0]["function"]["name"], "read_file");
}

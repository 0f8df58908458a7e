//! The model bridge's endpoint, one per attempt: the agent's model API
//! (Anthropic Messages; OpenAI Responses and Chat Completions) and the
//! tool gateway (MCP, streamable HTTP at `/mcp`) on one local port. Each
//! request is read into one conversation, passed to the attempt's thread
//! as an [`Ask`] and answered in the agent's own dialect, whole or as the
//! stream of events its client reads. Served by axum on a current-thread
//! tokio runtime of the bridge's own thread; the attempt's thread stays
//! synchronous. Every request and its answer are appended to a records
//! file when one is given (`trace = "full"`).

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};

use super::gateway::Gateway;
use super::naming::Naming;
use crate::agent::Ask;
use crate::protocol::{Conversation, Reply};
use crate::wire::anthropic::{anthropic_events, anthropic_reply, read_anthropic};
use crate::wire::openai;

/// A running bridge; dropping it stops it.
#[derive(Debug)]
pub(crate) struct Bridge {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// What every request handler shares.
#[derive(Clone)]
struct Shared {
    asks: Sender<Ask>,
    naming: Arc<Naming>,
    records: Option<Arc<Mutex<File>>>,
    seq: Arc<AtomicU64>,
}

impl Bridge {
    /// Serves on `listener` (bound where the agent can reach it), passing
    /// requests on to `asks`.
    pub(crate) fn start(
        listener: std::net::TcpListener,
        asks: Sender<Ask>,
        naming: Naming,
        records: Option<PathBuf>,
    ) -> std::io::Result<Bridge> {
        listener.set_nonblocking(true)?;
        let records = match records {
            Some(path) => Some(Arc::new(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            ))),
            None => None,
        };
        let shared = Shared {
            asks,
            naming: Arc::new(naming),
            records,
            seq: Arc::new(AtomicU64::new(0)),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("model-bridge".into())
            .spawn(move || runtime.block_on(serve(listener, shared, stopped)))?;
        Ok(Bridge {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    shared: Shared,
    stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let gateway = Gateway {
        asks: shared.asks.clone(),
    };
    // Stateless, plain JSON answers: each call is one POST and its
    // answer, nothing kept between them.
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let cancel = config.cancellation_token.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(gateway.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let app = Router::new()
        .route("/", get(|| async { StatusCode::OK }))
        .route("/v1/messages", post(messages))
        .route("/v1/messages/count_tokens", post(count_tokens))
        .route("/v1/responses", post(responses))
        .route("/v1/chat/completions", post(chat))
        .route(crate::agents::STOPPED_PATH, post(agent_stopped))
        .nest_service("/mcp", mcp)
        .fallback(not_found)
        .with_state(shared);
    tokio::select! {
        _ = axum::serve(listener, app) => {}
        _ = stopped => {}
    }
    cancel.cancel();
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(
            json!({"error": {"message": "agent-runtime's model bridge has no such endpoint"}}),
        ),
    )
        .into_response()
}

/// Passes a model call on and waits for its answer.
async fn ask_model(shared: &Shared, conversation: Conversation) -> Result<Reply, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let ask = Ask::Model {
        conversation,
        answer: Box::new(move |answer| {
            let _ = tx.send(answer);
        }),
    };
    if shared.asks.send(ask).is_err() {
        return Err("agent-runtime: the attempt has ended".to_string());
    }
    rx.await
        .unwrap_or_else(|_| Err("agent-runtime: the attempt has ended".to_string()))
}

impl Shared {
    fn record(&self, path: &str, request: &Value, answer: &Value) {
        let Some(records) = &self.records else {
            return;
        };
        let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        let line = json!({"seq": seq, "path": path, "request": request, "answer": answer});
        if let Ok(mut file) = records.lock() {
            // Records are diagnostics: a failed write must not fail a call.
            let _ = writeln!(file, "{line}");
        }
    }
}

/// One model API as the bridge serves it: how a request is read, and how
/// a reply (or an error) is written, whole or streamed.
struct Api {
    path: &'static str,
    read: fn(&Value) -> Result<Conversation, crate::protocol::DialectError>,
    whole: fn(&Reply, &str, &str) -> Value,
    /// The stream's body: server-sent events.
    stream: fn(&Reply, &str, &str) -> String,
    error: fn(StatusCode, &str) -> Response,
}

const MESSAGES: Api = Api {
    path: "/v1/messages",
    read: read_anthropic,
    whole: |reply, model, id| anthropic_reply(id, model, reply),
    stream: |reply, model, id| named_events(anthropic_events(id, model, reply)),
    error: anthropic_error,
};

const RESPONSES: Api = Api {
    path: "/v1/responses",
    read: openai::read_responses,
    whole: openai::responses_reply,
    stream: |reply, model, id| named_events(openai::responses_events(reply, model, id)),
    error: openai_error,
};

const CHAT: Api = Api {
    path: "/v1/chat/completions",
    read: openai::read_chat,
    whole: openai::chat_reply,
    stream: |reply, model, id| {
        let mut text = String::new();
        for chunk in openai::chat_chunks(reply, model, id) {
            text.push_str(&format!("data: {chunk}\n\n"));
        }
        text.push_str("data: [DONE]\n\n");
        text
    },
    error: openai_error,
};

/// Server-sent events, each named.
fn named_events<N: std::fmt::Display>(events: Vec<(N, Value)>) -> String {
    events
        .into_iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

/// `POST /v1/messages`: the Anthropic Messages API.
async fn messages(State(shared): State<Shared>, body: axum::body::Bytes) -> Response {
    model_call(&MESSAGES, &shared, &body).await
}

/// `POST /v1/responses`: the OpenAI Responses API.
async fn responses(State(shared): State<Shared>, body: axum::body::Bytes) -> Response {
    model_call(&RESPONSES, &shared, &body).await
}

/// `POST /v1/chat/completions`: OpenAI's Chat Completions.
async fn chat(State(shared): State<Shared>, body: axum::body::Bytes) -> Response {
    model_call(&CHAT, &shared, &body).await
}

/// A model call in `api`'s dialect: read, passed on, answered.
async fn model_call(api: &Api, shared: &Shared, body: &[u8]) -> Response {
    let request: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => return (api.error)(StatusCode::BAD_REQUEST, &format!("invalid JSON: {e}")),
    };
    let mut conversation = match (api.read)(&request) {
        Ok(conversation) => conversation,
        Err(e) => return (api.error)(StatusCode::BAD_REQUEST, &e.to_string()),
    };
    shared.naming.to_plain(&mut conversation);
    let (stream, model) = (conversation.stream, conversation.model.clone());
    let id = format!("msg_{:016x}", shared.seq.load(Ordering::Relaxed) + 1);
    match ask_model(shared, conversation).await {
        Ok(mut reply) => {
            shared.naming.to_agent(&mut reply);
            let whole = (api.whole)(&reply, &model, &id);
            shared.record(api.path, &request, &whole);
            if stream {
                event_stream((api.stream)(&reply, &model, &id))
            } else {
                axum::Json(whole).into_response()
            }
        }
        Err(message) => {
            shared.record(api.path, &request, &json!({"error": message}));
            (api.error)(StatusCode::BAD_REQUEST, &message)
        }
    }
}

/// `POST /agent-runtime/stopped`: a contained agent's driver says its
/// agent has stopped, and waits for the forced verify; the answer's
/// `message` is verify's output to go on with, or null to end.
async fn agent_stopped(State(shared): State<Shared>) -> Response {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let ask = Ask::Stopped {
        answer: Box::new(move |answer| {
            let _ = tx.send(answer);
        }),
    };
    let message = if shared.asks.send(ask).is_err() {
        None
    } else {
        rx.await.unwrap_or(None)
    };
    let answer = json!({ "message": message });
    shared.record(crate::agents::STOPPED_PATH, &json!({}), &answer);
    axum::Json(answer).into_response()
}

/// `POST /v1/messages/count_tokens`: an estimate, as the script provider
/// counts.
async fn count_tokens(body: axum::body::Bytes) -> Response {
    let tokens = (body.len() as u64).div_ceil(4);
    axum::Json(json!({"input_tokens": tokens})).into_response()
}

/// A stream of server-sent events, written whole.
fn event_stream(text: String) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from(text))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// An error as the Anthropic API writes one; 400 (`invalid_request_error`)
/// is not retried by its clients, so an ended attempt is not hammered.
fn anthropic_error(status: StatusCode, message: &str) -> Response {
    (
        status,
        axum::Json(json!({
            "type": "error",
            "error": {"type": "invalid_request_error", "message": message},
        })),
    )
        .into_response()
}

/// An error as the OpenAI APIs write one; a 400 is not retried.
fn openai_error(status: StatusCode, message: &str) -> Response {
    (
        status,
        axum::Json(json!({
            "error": {"type": "invalid_request_error", "message": message, "code": null},
        })),
    )
        .into_response()
}

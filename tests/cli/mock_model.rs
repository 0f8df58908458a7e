//! A minimal OpenAI-compatible chat-completions server side, for tests
//! that need a real HTTP provider: read one request, answer one reply.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// Reads one HTTP request from `stream` and returns its JSON body (`Null`
/// when it is not JSON), or `None` if the peer closed before the headers
/// ended.
pub fn read_request(stream: &TcpStream) -> Option<serde_json::Value> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    Some(serde_json::from_slice(&body).unwrap_or_default())
}

/// How many replies of the model the request's conversation holds.
pub fn assistant_turns(request: &serde_json::Value) -> usize {
    request["messages"]
        .as_array()
        .map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count())
}

/// Answers with a completion whose text is `content`, reporting `usage`
/// as (prompt, completion) tokens; the connection closes after it.
pub fn reply(mut stream: TcpStream, content: &str, usage: (u64, u64)) {
    let response = serde_json::json!({
        "choices": [{"message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": usage.0, "completion_tokens": usage.1}
    })
    .to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}",
        response.len(),
        response
    );
}

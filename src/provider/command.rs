//! The `command` provider: a local model CLI run through the bounded
//! executor (allow list of exactly the configured program, timeout, output
//! cap, own process group, sandbox with network), one run per reply.
//!
//! - The prompt goes on stdin, never in argv (where `ps` shows it and
//!   argument-length limits bite): the system prompt, then each turn under
//!   a `--- user ---` or `--- assistant ---` line.
//! - `args` may hold `{schema}`, replaced by the decision schema as compact
//!   JSON text (one argument; no shell is involved, so no quoting is
//!   needed), and `{model}`, replaced by `model`.
//! - `preset = "agy"` puts the AGY flags first: `--print --output-format
//!   json` (`stream-json` with `stream = true`) `--json-schema {schema}`,
//!   and `--model {model}` when a model is set; `args` come after them.
//! - Output: one JSON envelope, or with `stream = true` an NDJSON event
//!   stream whose last `{"type": "result", ...}` event is the envelope. The
//!   decision is the envelope's `structured_output` (as JSON) or else its
//!   `result` text; tokens come from its `usage` (`input_tokens` plus cache
//!   tokens, `output_tokens`), estimated when absent. Output that is not an
//!   envelope is taken as the reply text itself.
//! - Environment: cleared like every command's (private HOME and TMPDIR),
//!   except that the variable named by `api_key_env`, when set in the
//!   runner's environment, is passed through so the CLI can authenticate.
//! - It runs in a fresh empty directory, never the job's workspace.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use super::api::{Provider, ProviderReply, ProviderRequest, Role};
use super::error::ProviderError;
use super::http::{Secret, cut, one_line};
use super::reply::{Envelope, ReplyError, read};
use super::tokens::{estimate_request, estimate_tokens};
use crate::cancel::CancelToken;
use crate::decision::decision_schema;
use crate::exec::{AllowList, ExecOutcome, ExecRequest, SearchPath, run};
use crate::manifest::{CommandConfig, CommandPreset};
use crate::sandbox::{SandboxMode, SandboxPolicy};

/// Longest stderr excerpt kept in an error.
const MAX_STDERR: usize = 300;

/// A model CLI run once per reply.
#[derive(Debug)]
pub(crate) struct CommandProvider {
    config: CommandConfig,
    /// The program name as started (argv[0]).
    program: String,
    /// Directory of a program given as a path (searched first, readable).
    program_dir: Option<PathBuf>,
    search_path: SearchPath,
    /// The passed-through key variable, when set.
    key: Option<(String, Secret)>,
}

impl CommandProvider {
    /// A provider for `config`; `key` is the `api_key_env` variable and its
    /// value, if set. Fails if the program cannot be found.
    pub(crate) fn new(
        name: impl Into<String>,
        config: CommandConfig,
        key: Option<(String, Secret)>,
    ) -> Result<CommandProvider, ProviderError> {
        let name = name.into();
        let (program, program_dir, search_path) = if config.program.contains('/') {
            let path = Path::new(&config.program);
            let file = path.file_name().map(|f| f.to_string_lossy().into_owned());
            let (Some(file), Some(dir)) = (file, path.parent()) else {
                return Err(ProviderError::Config {
                    name,
                    message: format!(
                        "command provider: {:?} is not a program path",
                        config.program
                    ),
                });
            };
            let mut dirs = vec![dir.to_path_buf()];
            dirs.extend(SearchPath::fixed().dirs().iter().cloned());
            (file, Some(dir.to_path_buf()), SearchPath::new(dirs))
        } else {
            (config.program.clone(), None, SearchPath::fixed())
        };
        if let Err(err) = search_path.resolve(&program) {
            return Err(ProviderError::Config {
                name,
                message: format!("command provider: {err}"),
            });
        }
        Ok(CommandProvider {
            config,
            program,
            program_dir,
            search_path,
            key,
        })
    }

    /// The argv of one run: the program, the preset's flags, then `args`,
    /// placeholders replaced.
    pub(crate) fn argv(&self, request: &ProviderRequest) -> Vec<String> {
        let schema = request
            .schema
            .clone()
            .unwrap_or_else(decision_schema)
            .to_string();
        let model = self.config.model.clone().unwrap_or_default();
        let mut args: Vec<String> = Vec::new();
        if self.config.preset == Some(CommandPreset::Agy) {
            let format = if self.config.stream {
                "stream-json"
            } else {
                "json"
            };
            args.extend(
                [
                    "--print",
                    "--output-format",
                    format,
                    "--json-schema",
                    "{schema}",
                ]
                .map(String::from),
            );
            if self.config.model.is_some() {
                args.extend(["--model", "{model}"].map(String::from));
            }
        }
        args.extend(self.config.args.iter().cloned());
        let mut argv = vec![self.program.clone()];
        argv.extend(
            args.iter()
                .map(|arg| arg.replace("{schema}", &schema).replace("{model}", &model)),
        );
        argv
    }

    fn exec_request(
        &self,
        request: &ProviderRequest,
        dir: &Path,
    ) -> Result<ExecRequest, ProviderError> {
        let allow = AllowList::program_any_args(&self.program)
            .map_err(|err| self.error(err.to_string(), false))?;
        let mut exec = ExecRequest::new(self.argv(request), allow, dir.to_path_buf());
        exec.search_path = self.search_path.clone();
        exec.timeout = self.config.timeout;
        exec.output_cap = usize::try_from(self.config.output_cap.bytes()).unwrap_or(usize::MAX);
        exec.stdin = Some(prompt(request).into_bytes());
        exec.extra_env = self
            .key
            .iter()
            .map(|(name, value)| (name.clone(), value.expose().to_string()))
            .collect::<BTreeMap<_, _>>();
        exec.sandbox = SandboxPolicy {
            mode: SandboxMode::Auto,
            network: true,
            readable: self.program_dir.iter().cloned().collect(),
            ..SandboxPolicy::default()
        };
        Ok(exec)
    }

    fn error(&self, message: String, retryable: bool) -> ProviderError {
        ProviderError::Request {
            message: self.redact(&one_line(&format!("command provider: {message}"))),
            retryable,
            retries: Vec::new(),
            billed: None,
        }
    }

    fn redact(&self, text: &str) -> String {
        match &self.key {
            Some((_, secret)) if !secret.expose().is_empty() => {
                text.replace(secret.expose(), "[redacted]")
            }
            _ => text.to_string(),
        }
    }

    /// Turns a finished run into a reply or an error.
    fn finish(
        &self,
        request: &ProviderRequest,
        outcome: &ExecOutcome,
    ) -> Result<ProviderReply, ProviderError> {
        let program = &self.program;
        if outcome.cancelled {
            return Err(ProviderError::Cancelled);
        }
        if outcome.timed_out {
            return Err(self.error(
                format!("`{program}` timed out after {:?}", self.config.timeout),
                true,
            ));
        }
        if !outcome.success() {
            let status = match (outcome.exit_code, outcome.signal) {
                (Some(code), _) => format!("exited with status {code}"),
                (None, Some(signal)) => format!("was killed by signal {signal}"),
                (None, None) => "failed".to_string(),
            };
            let stderr = cut(&one_line(&outcome.stderr.to_text()), MAX_STDERR);
            let detail = if stderr.is_empty() {
                "no error output".to_string()
            } else {
                stderr
            };
            return Err(self.error(format!("`{program}` {status}: {detail}"), false));
        }
        if outcome.stdout.truncated {
            return Err(self.error(
                format!(
                    "`{program}` printed more than output_cap ({} bytes)",
                    self.config.output_cap.bytes()
                ),
                false,
            ));
        }
        let stdout = outcome.stdout.to_text();
        let parsed = parse_output(&stdout, self.config.stream)
            .map_err(|why| self.error(format!("`{program}`: {why}"), false))?;
        let (input_tokens, output_tokens) = parsed
            .usage
            .unwrap_or_else(|| (estimate_request(request), estimate_tokens(&parsed.text)));
        Ok(ProviderReply {
            text: parsed.text,
            input_tokens,
            cached_input_tokens: 0,
            output_tokens,
            latency: outcome.duration,
            retries: Vec::new(),
        })
    }
}

impl Provider for CommandProvider {
    fn complete(
        &mut self,
        request: &ProviderRequest,
        cancel: &CancelToken,
    ) -> Result<ProviderReply, ProviderError> {
        let started = Instant::now();
        if cancel.is_cancelled() {
            return Err(ProviderError::Cancelled);
        }
        let dir = tempfile::Builder::new()
            .prefix("agent-runtime-provider-")
            .tempdir()
            .map_err(|err| {
                self.error(format!("cannot create a working directory: {err}"), false)
            })?;
        let exec = self.exec_request(request, dir.path())?;
        let outcome = run(&exec, cancel)
            .map_err(|err| self.error(format!("cannot run `{}`: {err}", self.program), false))?;
        let mut reply = self.finish(request, &outcome)?;
        reply.latency = started.elapsed();
        Ok(reply)
    }
}

/// The prompt written to the program's stdin.
pub(crate) fn prompt(request: &ProviderRequest) -> String {
    let mut text = String::new();
    if !request.system.is_empty() {
        text.push_str(&request.system);
        text.push_str("\n\n");
    }
    for message in &request.messages {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        text.push_str(&format!("--- {role} ---\n{}\n\n", message.content));
    }
    text
}

/// What a program printed, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParsedOutput {
    pub(crate) text: String,
    /// Input and output tokens, when the envelope reports them.
    pub(crate) usage: Option<(u64, u64)>,
}

/// Reads a program's stdout: an envelope, the last `result` event of an
/// NDJSON stream, or (not streaming) plain reply text.
pub(crate) fn parse_output(stdout: &str, stream: bool) -> Result<ParsedOutput, ReplyError> {
    let envelope = |text: &str| {
        serde_json::from_str::<Value>(text.trim())
            .ok()
            .filter(Value::is_object)
            .and_then(|value| read::<Envelope>(&value, "an envelope").ok())
            .filter(Envelope::is_one)
    };
    if stream {
        let result = stdout
            .lines()
            .rev()
            .filter_map(envelope)
            .find(|event| event.kind == "result");
        return match result {
            Some(envelope) => from_envelope(envelope),
            None => Err(ReplyError::NoResultEvent),
        };
    }
    let trimmed = stdout.trim();
    if trimmed.is_empty() {
        return Err(ReplyError::PrintedNothing);
    }
    match envelope(trimmed) {
        Some(envelope) => from_envelope(envelope),
        None => Ok(ParsedOutput {
            text: trimmed.to_string(),
            usage: None,
        }),
    }
}

fn from_envelope(envelope: Envelope) -> Result<ParsedOutput, ReplyError> {
    if envelope.is_error == true {
        let why = envelope
            .result
            .as_ref()
            .and_then(Value::as_str)
            .or_else(|| envelope.subtype.as_str())
            .unwrap_or("no detail");
        return Err(ReplyError::Reported(cut(&one_line(why), MAX_STDERR)));
    }
    let text = match (&envelope.structured_output, &envelope.result) {
        (Some(structured @ (Value::Object(_) | Value::Array(_))), _) => structured.to_string(),
        (Some(Value::String(text)), _) | (_, Some(Value::String(text))) => text.clone(),
        _ => return Err(ReplyError::EmptyEnvelope),
    };
    let tokens = envelope
        .usage
        .checked()?
        .map(|usage| (usage.input, usage.output));
    Ok(ParsedOutput {
        text,
        usage: tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_streams_and_plain_text_are_read() {
        let envelope = r#"{"type":"result","is_error":false,"result":"{\"kind\":\"verify\"}","usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":3}}"#;
        let parsed = parse_output(envelope, false).unwrap();
        assert_eq!(parsed.text, r#"{"kind":"verify"}"#);
        assert_eq!(parsed.usage, Some((15, 3)));
        let structured = r#"{"type":"result","result":"","structured_output":{"kind":"finish","summary":"done"}}"#;
        let parsed = parse_output(structured, false).unwrap();
        assert_eq!(parsed.text, r#"{"kind":"finish","summary":"done"}"#);
        assert_eq!(parsed.usage, None);
        let stream = "{\"type\":\"system\"}\nnot json\n{\"type\":\"assistant\"}\n{\"type\":\"result\",\"result\":\"{\\\"kind\\\":\\\"verify\\\"}\"}\n";
        assert_eq!(
            parse_output(stream, true).unwrap().text,
            r#"{"kind":"verify"}"#
        );
        assert!(
            parse_output("{\"type\":\"system\"}\n", true)
                .unwrap_err()
                .to_string()
                .contains("no result event")
        );
        assert_eq!(
            parse_output("{\"kind\":\"verify\"}\n", false).unwrap().text,
            r#"{"kind":"verify"}"#
        );
        assert_eq!(
            parse_output("Let me look.\n", false).unwrap().text,
            "Let me look."
        );
        let failed = r#"{"type":"result","is_error":true,"result":"model overloaded"}"#;
        assert!(
            parse_output(failed, false)
                .unwrap_err()
                .to_string()
                .contains("model overloaded")
        );
        assert!(parse_output("  \n", false).is_err());
    }

    #[test]
    fn the_prompt_lists_every_turn() {
        let request = ProviderRequest {
            system: "Be brief.".to_string(),
            messages: vec![
                crate::provider::Message::user("Fix it."),
                crate::provider::Message::assistant("{\"kind\":\"verify\"}"),
            ],
            schema: None,
            attempt: 1,
        };
        assert_eq!(
            prompt(&request),
            "Be brief.\n\n--- user ---\nFix it.\n\n--- assistant ---\n{\"kind\":\"verify\"}\n\n"
        );
    }
}

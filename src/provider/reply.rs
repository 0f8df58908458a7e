//! The replies of model APIs as typed structs: as much of each shape as the
//! runtime reads (a chat completion, an Anthropic message, a model CLI's
//! result envelope, an error body), every field optional or defaulted, so a
//! server that leaves something out or adds something is still read. A
//! token count that is not a number reads as absent; one that is a number
//! is checked by [`super::usage`].

use serde::{Deserialize, Deserializer};
use serde_json::{Number, Value};

use super::usage::{UsageError, count_of};

/// Why a reply holds no text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ReplyError {
    #[error("the response is not {expected}: {why}")]
    Shape { expected: &'static str, why: String },
    #[error("no choices in the response")]
    NoChoices,
    #[error("a tool call has no function name")]
    NoFunctionName,
    #[error("the message content is not text")]
    ContentNotText,
    #[error("no content in the response")]
    NoContent,
    #[error("the event stream has no result event")]
    NoResultEvent,
    #[error("printed nothing")]
    PrintedNothing,
    #[error("the program reported an error: {0}")]
    Reported(String),
    #[error("the result envelope has neither `structured_output` nor `result`")]
    EmptyEnvelope,
    #[error(transparent)]
    Usage(#[from] UsageError),
}

/// Reads `value` as a `T`, naming what it should have been.
pub(super) fn read<'v, T: Deserialize<'v>>(
    value: &'v Value,
    expected: &'static str,
) -> Result<T, ReplyError> {
    T::deserialize(value).map_err(|e| ReplyError::Shape {
        expected,
        why: e.to_string(),
    })
}

/// A token count as a reply gives it: a number, or absent (any other JSON
/// value reads as absent, and the caller estimates).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Count(Option<Number>);

impl Count {
    /// The checked count, `field` naming it in an error.
    pub(super) fn get(&self, field: &str) -> Result<Option<u64>, UsageError> {
        count_of(self.0.as_ref(), field)
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Count, D::Error> {
        Ok(Count(match Value::deserialize(deserializer)? {
            Value::Number(n) => Some(n),
            _ => None,
        }))
    }
}

/// Any value, a wrong-shaped one read as its default (a `usage` that is
/// not an object, say).
fn lenient<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    let value = Value::deserialize(deserializer)?;
    Ok(T::deserialize(value).unwrap_or_default())
}

/// An OpenAI chat completion.
#[derive(Debug, Deserialize)]
pub(super) struct ChatCompletion {
    #[serde(default)]
    pub(crate) choices: Vec<Choice>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Choice {
    #[serde(default)]
    pub(crate) message: ChatMessage,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct ChatMessage {
    #[serde(default)]
    pub(crate) content: Value,
    #[serde(default, deserialize_with = "lenient")]
    pub(crate) tool_calls: Vec<ToolCall>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct ToolCall {
    #[serde(default)]
    pub(crate) function: Function,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct Function {
    #[serde(default)]
    pub(crate) name: Option<String>,
    /// A JSON string of the arguments (the API's form) or, from some
    /// servers, the arguments object itself.
    #[serde(default)]
    pub(crate) arguments: Value,
}

/// A part of a message's content given as parts.
#[derive(Debug, Deserialize)]
pub(super) struct ContentPart {
    #[serde(default, deserialize_with = "lenient")]
    pub(crate) text: Option<String>,
}

/// The `usage` of a chat completion.
#[derive(Debug, Default, Deserialize)]
pub(super) struct ChatUsage {
    #[serde(default)]
    pub(crate) prompt_tokens: Count,
    #[serde(default)]
    pub(crate) completion_tokens: Count,
    #[serde(default, deserialize_with = "lenient")]
    pub(crate) prompt_tokens_details: PromptDetails,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct PromptDetails {
    #[serde(default)]
    pub(crate) cached_tokens: Count,
}

/// The usage part of any reply, read apart from the rest so a reply whose
/// text cannot be read still reports what it used.
#[derive(Debug, Default, Deserialize)]
#[serde(bound(deserialize = "U: Deserialize<'de> + Default"))]
pub(super) struct WithUsage<U> {
    #[serde(default, deserialize_with = "lenient")]
    pub(crate) usage: U,
}

/// An Anthropic message.
#[derive(Debug, Deserialize)]
pub(super) struct Message {
    pub(crate) content: Vec<Block>,
}

/// A content block of an Anthropic message.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Block {
    Text {
        #[serde(default, deserialize_with = "lenient")]
        text: Option<String>,
    },
    ToolUse {
        #[serde(default, deserialize_with = "lenient")]
        name: Option<String>,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

/// The `usage` of an Anthropic message or of a model CLI's envelope.
#[derive(Debug, Default, Deserialize)]
pub(super) struct MessageUsage {
    #[serde(default)]
    pub(crate) input_tokens: Count,
    #[serde(default)]
    pub(crate) output_tokens: Count,
    #[serde(default)]
    pub(crate) cache_read_input_tokens: Count,
    #[serde(default)]
    pub(crate) cache_creation_input_tokens: Count,
}

impl MessageUsage {
    /// Input tokens (cache reads and writes included) and output tokens,
    /// when both are reported; a count that is negative or beyond what one
    /// reply can use is an error.
    pub(super) fn checked(&self) -> Result<Option<super::api::Usage>, UsageError> {
        let cached = self
            .cache_read_input_tokens
            .get("cache_read_input_tokens")?
            .unwrap_or(0);
        let written = self
            .cache_creation_input_tokens
            .get("cache_creation_input_tokens")?
            .unwrap_or(0);
        let input = self.input_tokens.get("input_tokens")?;
        let output = self.output_tokens.get("output_tokens")?;
        let (Some(input), Some(output)) = (input, output) else {
            return Ok(None);
        };
        super::api::Usage {
            input: input.saturating_add(written).saturating_add(cached),
            cached,
            output,
        }
        .checked()
        .map(Some)
    }
}

/// A model CLI's result envelope (`--output-format json`, or the `result`
/// event of a stream).
#[derive(Debug, Deserialize)]
pub(super) struct Envelope {
    #[serde(default, rename = "type")]
    pub(crate) kind: Value,
    #[serde(default)]
    pub(crate) is_error: Value,
    #[serde(default)]
    pub(crate) result: Option<Value>,
    #[serde(default)]
    pub(crate) subtype: Value,
    #[serde(default)]
    pub(crate) structured_output: Option<Value>,
    #[serde(default, deserialize_with = "lenient")]
    pub(crate) usage: MessageUsage,
}

impl Envelope {
    /// Whether `value` is a result envelope at all.
    pub(super) fn is_one(&self) -> bool {
        self.kind == "result" || self.result.is_some() || self.structured_output.is_some()
    }
}

/// A server's error body: `error.message`, `error` as a string, or
/// `message`; `error.code` / `error.type`.
#[derive(Debug, Default, Deserialize)]
pub(super) struct ErrorBody {
    #[serde(default)]
    pub(crate) error: Value,
    #[serde(default, deserialize_with = "lenient")]
    pub(crate) message: Option<String>,
}

impl ErrorBody {
    /// What the body says went wrong, if it says.
    pub(super) fn detail(&self) -> Option<&str> {
        self.error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| self.error.as_str())
            .or(self.message.as_deref())
    }

    /// Whether `error.code` or `error.type` is `code`.
    pub(super) fn has_code(&self, code: &str) -> bool {
        ["code", "type"]
            .iter()
            .any(|key| self.error.get(*key).and_then(Value::as_str) == Some(code))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_that_are_not_numbers_read_as_absent_and_numbers_are_checked() {
        let usage: WithUsage<ChatUsage> = read(
            &json!({"usage": {"prompt_tokens": "12", "completion_tokens": -1,
                    "prompt_tokens_details": 7}}),
            "a reply",
        )
        .unwrap();
        assert_eq!(usage.usage.prompt_tokens.get("prompt_tokens"), Ok(None));
        assert!(
            usage
                .usage
                .completion_tokens
                .get("completion_tokens")
                .is_err()
        );
        assert_eq!(
            usage
                .usage
                .prompt_tokens_details
                .cached_tokens
                .get("cached_tokens"),
            Ok(None)
        );
        let none: WithUsage<ChatUsage> = read(&json!({"usage": 5}), "a reply").unwrap();
        assert_eq!(none.usage.prompt_tokens, Count::default());
    }

    #[test]
    fn blocks_of_unknown_types_are_kept_apart_and_wrong_shapes_are_named() {
        let message: Message = read(
            &json!({"content": [{"type": "thinking", "thinking": "x"},
                                {"type": "text", "text": "hi"}]}),
            "an Anthropic message",
        )
        .unwrap();
        assert!(matches!(message.content[0], Block::Other));
        assert!(matches!(&message.content[1], Block::Text { text: Some(t) } if t == "hi"));
        let e = read::<Message>(&json!({"content": 3}), "an Anthropic message").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the response is not an Anthropic message: "),
            "{e}"
        );
    }

    #[test]
    fn error_bodies_say_what_went_wrong() {
        let body: ErrorBody = read(
            &json!({"error": {"message": "quota", "type": "insufficient_quota"}}),
            "",
        )
        .unwrap();
        assert_eq!(body.detail(), Some("quota"));
        assert!(body.has_code("insufficient_quota"));
        let body: ErrorBody = read(&json!({"error": "down"}), "").unwrap();
        assert_eq!(body.detail(), Some("down"));
        let body: ErrorBody = read(&json!({"message": "later"}), "").unwrap();
        assert_eq!(body.detail(), Some("later"));
    }
}

//! The decision union a model returns, one per step, and the one table that
//! defines it: the parser checks replies against [`KINDS`] and the
//! published JSON Schema is generated from it, so the two never disagree.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One step the model asks the runtime to take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Decision {
    ReadFile {
        path: String,
    },
    ListFiles {
        #[serde(default = "current_dir")]
        path: String,
    },
    WriteFile {
        path: String,
        content: String,
    },
    ReplaceText {
        path: String,
        expected: String,
        replacement: String,
    },
    RunTool {
        program: String,
        #[serde(default)]
        args: Vec<String>,
    },
    Verify {},
    Finish {
        summary: String,
    },
}

fn current_dir() -> String {
    ".".to_string()
}

impl Decision {
    /// The `kind` tag, as written on the wire.
    pub(crate) fn kind(&self) -> &'static str {
        self.logged_kind().as_str()
    }

    /// The kind as the log records it.
    pub(crate) fn logged_kind(&self) -> crate::protocol::DecisionKind {
        use crate::protocol::DecisionKind as K;
        match self {
            Decision::ReadFile { .. } => K::ReadFile,
            Decision::ListFiles { .. } => K::ListFiles,
            Decision::WriteFile { .. } => K::WriteFile,
            Decision::ReplaceText { .. } => K::ReplaceText,
            Decision::RunTool { .. } => K::RunTool,
            Decision::Verify {} => K::Verify,
            Decision::Finish { .. } => K::Finish,
        }
    }

    /// What the decision names, as its headline shows it: the path it
    /// reads or writes, or the program it runs (never the arguments).
    pub(crate) fn subject(&self) -> Option<&str> {
        match self {
            Decision::ReadFile { path }
            | Decision::ListFiles { path }
            | Decision::WriteFile { path, .. }
            | Decision::ReplaceText { path, .. } => Some(path),
            Decision::RunTool { program, .. } => Some(program),
            Decision::Verify {} | Decision::Finish { .. } => None,
        }
    }
}

/// The JSON type of a decision field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldType {
    String,
    StringList,
}

impl FieldType {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            FieldType::String => "a string",
            FieldType::StringList => "an array of strings",
        }
    }
}

/// One field of one decision kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FieldSpec {
    pub name: &'static str,
    pub ty: FieldType,
    pub required: bool,
    pub description: &'static str,
}

/// One decision kind: its tag, what it does and its fields.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KindSpec {
    pub kind: &'static str,
    pub description: &'static str,
    pub fields: &'static [FieldSpec],
}

const fn field(
    name: &'static str,
    ty: FieldType,
    required: bool,
    description: &'static str,
) -> FieldSpec {
    FieldSpec {
        name,
        ty,
        required,
        description,
    }
}

const PATH: FieldSpec = field(
    "path",
    FieldType::String,
    true,
    "Path relative to the workspace root.",
);

/// Every decision kind, in the order they are documented.
pub(crate) const KINDS: &[KindSpec] = &[
    KindSpec {
        kind: "read_file",
        description: "Read a file of the workspace.",
        fields: &[PATH],
    },
    KindSpec {
        kind: "list_files",
        description: "List the files under a directory of the workspace.",
        fields: &[field(
            "path",
            FieldType::String,
            false,
            "Directory relative to the workspace root; default \".\".",
        )],
    },
    KindSpec {
        kind: "write_file",
        description: "Create or overwrite an editable file with the given content.",
        fields: &[
            PATH,
            field(
                "content",
                FieldType::String,
                true,
                "The whole new content of the file.",
            ),
        ],
    },
    KindSpec {
        kind: "replace_text",
        description: "Replace the one occurrence of `expected` in a file with `replacement`.",
        fields: &[
            PATH,
            field(
                "expected",
                FieldType::String,
                true,
                "Text that occurs exactly once in the file.",
            ),
            field(
                "replacement",
                FieldType::String,
                true,
                "Text to put in its place.",
            ),
        ],
    },
    KindSpec {
        kind: "run_tool",
        description: "Run an allowed program with arguments (no shell).",
        fields: &[
            field(
                "program",
                FieldType::String,
                true,
                "Program name, e.g. \"cargo\".",
            ),
            field(
                "args",
                FieldType::StringList,
                false,
                "Arguments, one string each; default none.",
            ),
        ],
    },
    KindSpec {
        kind: "verify",
        description: "Run the job's verify command.",
        fields: &[],
    },
    KindSpec {
        kind: "finish",
        description: "End the attempt; the runtime verifies any unverified edit first.",
        fields: &[field(
            "summary",
            FieldType::String,
            true,
            "What was changed and why.",
        )],
    },
];

/// The known kinds as one comma-separated list, for messages.
pub(crate) fn known_kinds() -> String {
    KINDS.iter().map(|k| k.kind).collect::<Vec<_>>().join(", ")
}

/// Why a reply is not a decision. The text is sent back to the model as an
/// observation, so it says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DecisionError {
    #[error("empty reply; send one JSON object such as {{\"kind\":\"verify\"}}")]
    Empty,
    #[error(
        "no JSON object found in the reply; send one object such as {{\"kind\":\"read_file\",\"path\":\"src/lib.rs\"}}"
    )]
    NoObject,
    #[error("invalid JSON at line {line}, column {column}: {message}")]
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("expected one JSON object, found {found}")]
    NotAnObject { found: &'static str },
    #[error("the reply holds {count} decisions; send exactly one per reply")]
    Multiple { count: usize },
    #[error("missing field `kind`; known kinds: {known}")]
    MissingKind { known: String },
    #[error("unknown kind {kind:?}; known kinds: {known}")]
    UnknownKind { kind: String, known: String },
    #[error("{kind}: missing field `{field}`")]
    MissingField { kind: String, field: String },
    #[error("{kind}: field `{field}` must be {expected}, found {found}")]
    WrongType {
        kind: String,
        field: String,
        expected: &'static str,
        found: &'static str,
    },
    #[error("{kind}: unknown field `{field}` (fields of {kind}: {allowed})")]
    UnknownField {
        kind: String,
        field: String,
        allowed: String,
    },
    #[error("the reply is {bytes} bytes, too long to read as a decision")]
    TooLarge { bytes: usize },
}

/// The JSON type name of a value, for messages.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks one JSON object against [`KINDS`] and builds the decision.
/// A `null` optional field counts as absent.
pub(crate) fn decision_from_object(object: &Map<String, Value>) -> Result<Decision, DecisionError> {
    let kind = match object.get("kind") {
        None => {
            return Err(DecisionError::MissingKind {
                known: known_kinds(),
            });
        }
        Some(Value::String(kind)) => kind.as_str(),
        Some(other) => {
            return Err(DecisionError::WrongType {
                kind: "decision".to_string(),
                field: "kind".to_string(),
                expected: "a string",
                found: json_type(other),
            });
        }
    };
    let Some(spec) = KINDS.iter().find(|k| k.kind == kind) else {
        return Err(DecisionError::UnknownKind {
            kind: kind.to_string(),
            known: known_kinds(),
        });
    };
    for name in object.keys() {
        if name != "kind" && !spec.fields.iter().any(|f| f.name == name) {
            let allowed = if spec.fields.is_empty() {
                "none".to_string()
            } else {
                spec.fields
                    .iter()
                    .map(|f| f.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(DecisionError::UnknownField {
                kind: kind.to_string(),
                field: name.clone(),
                allowed,
            });
        }
    }
    let fields = Fields { kind, object, spec };
    Ok(match kind {
        "read_file" => Decision::ReadFile {
            path: fields.string("path")?,
        },
        "list_files" => Decision::ListFiles {
            path: fields.optional_string("path")?.unwrap_or_else(current_dir),
        },
        "write_file" => Decision::WriteFile {
            path: fields.string("path")?,
            content: fields.string("content")?,
        },
        "replace_text" => Decision::ReplaceText {
            path: fields.string("path")?,
            expected: fields.string("expected")?,
            replacement: fields.string("replacement")?,
        },
        "run_tool" => Decision::RunTool {
            program: fields.string("program")?,
            args: fields.optional_list("args")?.unwrap_or_default(),
        },
        "verify" => Decision::Verify {},
        _ => Decision::Finish {
            summary: fields.string("summary")?,
        },
    })
}

struct Fields<'a> {
    kind: &'a str,
    object: &'a Map<String, Value>,
    spec: &'a KindSpec,
}

impl Fields<'_> {
    fn get(&self, name: &str) -> Option<&Value> {
        self.object
            .get(name)
            .filter(|v| !v.is_null() || self.required(name))
    }

    fn required(&self, name: &str) -> bool {
        self.spec
            .fields
            .iter()
            .any(|f| f.name == name && f.required)
    }

    fn wrong(&self, name: &str, expected: FieldType, found: &Value) -> DecisionError {
        DecisionError::WrongType {
            kind: self.kind.to_string(),
            field: name.to_string(),
            expected: expected.describe(),
            found: json_type(found),
        }
    }

    fn string(&self, name: &str) -> Result<String, DecisionError> {
        self.optional_string(name)?
            .ok_or_else(|| DecisionError::MissingField {
                kind: self.kind.to_string(),
                field: name.to_string(),
            })
    }

    fn optional_string(&self, name: &str) -> Result<Option<String>, DecisionError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.wrong(name, FieldType::String, other)),
        }
    }

    fn optional_list(&self, name: &str) -> Result<Option<Vec<String>>, DecisionError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(DecisionError::WrongType {
                        kind: self.kind.to_string(),
                        field: name.to_string(),
                        expected: "an array of strings",
                        found: match json_type(other) {
                            "a number" => "an array holding a number",
                            "a boolean" => "an array holding a boolean",
                            "null" => "an array holding null",
                            "an array" => "an array holding an array",
                            _ => "an array holding an object",
                        },
                    }),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(self.wrong(name, FieldType::StringList, other)),
        }
    }
}

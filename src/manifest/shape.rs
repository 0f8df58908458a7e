//! The shape of the two file formats: every table, the keys it takes and
//! the kind of value each key holds, in the words a message uses. The
//! walk in `load_shape.rs` checks a document against it before anything
//! is deserialized, so every unknown key and wrongly typed value of a file
//! is found at once, with a suggestion. `raw.rs` stays the deserializer;
//! a test below holds the two in step, and `docs/manifest.md` with them.

/// What a key's value must be.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    /// A string; the words say what it holds (`a path`).
    Text(&'static str),
    Bool,
    /// An integer in `min..=max` (the deserializer's type; finer bounds are
    /// checked with the value).
    Whole {
        min: i64,
        max: i64,
    },
    /// An integer or a float.
    Number,
    /// A string such as `"90s"`.
    Duration,
    /// An integer, or a string such as `"16KiB"`.
    Size,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// A list of strings, named by the plural noun (`globs`) and shown with
    /// an example; `split`: a string given instead is one item per word
    /// (`args = "-p --json"`), else one item.
    List {
        noun: &'static str,
        example: &'static str,
        split: bool,
    },
    /// A program and its arguments: a list of strings.
    Argv {
        example: &'static str,
    },
    /// A list of argvs.
    Commands,
    /// A path, or a list of paths.
    Paths,
    /// A table of string values under any name (`[env]`).
    Strings,
    Table(&'static Shape),
    /// Read only to refuse it with a message of its own; never listed.
    Refused,
}

/// One key of a table.
#[derive(Debug)]
pub(super) struct Key {
    pub name: &'static str,
    pub kind: Kind,
}

/// A table: what a message calls it, and its keys in file-format order.
#[derive(Debug)]
pub(super) struct Shape {
    pub title: &'static str,
    pub keys: &'static [Key],
}

impl Shape {
    pub(super) fn key(&self, name: &str) -> Option<&Key> {
        self.keys.iter().find(|k| k.name == name)
    }

    /// The names a user may write (refused keys left out).
    pub(super) fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.keys
            .iter()
            .filter(|k| !matches!(k.kind, Kind::Refused))
            .map(|k| k.name)
    }
}

const fn key(name: &'static str, kind: Kind) -> Key {
    Key { name, kind }
}

const U32: Kind = Kind::Whole {
    min: 0,
    max: u32::MAX as i64,
};
const U64: Kind = Kind::Whole {
    min: 0,
    max: i64::MAX,
};
const PATH: Kind = Kind::Text("a path");
const TEXT: Kind = Kind::Text("a string");

/// The keys that make a file a job manifest: a file with none of them
/// is something else (a crate's `Cargo.toml`, a provider file).
pub(super) const JOB_KEYS: [&str; 6] = [
    "prompt",
    "prompt_file",
    "source",
    "editable",
    "allow",
    "verify",
];

pub(super) static MANIFEST: Shape = Shape {
    title: "a job manifest",
    keys: &[
        key("id", Kind::Text("a job id")),
        key("family", Kind::Text("a family name")),
        key("prompt", TEXT),
        key("prompt_file", PATH),
        key("source", PATH),
        key(
            "editable",
            Kind::List {
                noun: "globs",
                example: "src/**/*.rs",
                split: false,
            },
        ),
        key(
            "allow",
            Kind::List {
                noun: "allow rules",
                example: "cargo test **",
                split: false,
            },
        ),
        key(
            "verify",
            Kind::Argv {
                example: "cargo test",
            },
        ),
        key("trace", Kind::Choice(&["metadata", "full"])),
        key("env", Kind::Strings),
        key("metadata", Kind::Strings),
        key("acceptance", Kind::Table(&ACCEPTANCE)),
        key("setup", Kind::Table(&SETUP)),
        key("limits", Kind::Table(&LIMITS)),
        key("provider", Kind::Table(&PROVIDER)),
        key("sandbox", Kind::Table(&SANDBOX)),
        key("agent", Kind::Table(&AGENT)),
        key("oracle", Kind::Table(&ORACLE)),
        key("check", Kind::Table(&CHECK)),
        key("price", Kind::Table(&PRICE)),
    ],
};

pub(super) static ACCEPTANCE: Shape = Shape {
    title: "[acceptance]",
    keys: &[
        key("dir", PATH),
        key(
            "command",
            Kind::Argv {
                example: "cargo test",
            },
        ),
        key("baseline", Kind::Choice(&["must_fail", "skip"])),
        key(
            "results",
            Kind::Text("a results format (libtest, junit:PATH, exit)"),
        ),
        key("test_timeout", Kind::Duration),
        key("canary", Kind::Bool),
        key("twins", Kind::Bool),
        key(
            "plugins",
            Kind::List {
                noun: "pytest plugin names",
                example: "pytest_asyncio",
                split: false,
            },
        ),
        key("strict_integrity", Kind::Bool),
        key(
            "flaky",
            Kind::List {
                noun: "test names",
                example: "tests::sometimes",
                split: false,
            },
        ),
        key(
            "fail_to_pass",
            Kind::List {
                noun: "test names",
                example: "tests::it_works",
                split: false,
            },
        ),
        key(
            "pass_to_pass",
            Kind::List {
                noun: "test names",
                example: "tests::it_still_works",
                split: false,
            },
        ),
    ],
};

pub(super) static SETUP: Shape = Shape {
    title: "[setup]",
    keys: &[
        key("commands", Kind::Commands),
        key("network", Kind::Bool),
        key(
            "inputs",
            Kind::List {
                noun: "globs",
                example: "Cargo.lock",
                split: false,
            },
        ),
    ],
};

pub(super) static LIMITS: Shape = Shape {
    title: "[limits]",
    keys: &[
        key("attempts", U32),
        key("max_steps", U32),
        key("max_invalid", U32),
        key("max_restarts", U32),
        key("wall_time", Kind::Duration),
        key("command_timeout", Kind::Duration),
        key("output_cap", Kind::Size),
        key("observation_cap", Kind::Size),
        key("token_budget", U64),
        key("memory", Kind::Size),
        key("processes", U64),
    ],
};

pub(super) static SANDBOX: Shape = Shape {
    title: "[sandbox]",
    keys: &[
        key("mode", Kind::Choice(&["off", "auto", "required"])),
        key("network", Kind::Bool),
        key(
            "toolchains",
            Kind::List {
                noun: "directories",
                example: "../.venv/bin",
                split: false,
            },
        ),
    ],
};

pub(super) static AGENT: Shape = Shape {
    title: "[agent]",
    keys: &[
        key(
            "name",
            Kind::Text(
                "an agent of the table: runtime, claude-code, codex, mini-swe-agent, command",
            ),
        ),
        key("version", Kind::Text("a version, e.g. 2.1.197")),
        key("mode", Kind::Choice(&["leashed", "contained"])),
        key(
            "command",
            Kind::Argv {
                example: "python3 my_agent.py",
            },
        ),
        key("verify_rounds", U32),
        key("memory", Kind::Size),
    ],
};

pub(super) static ORACLE: Shape = Shape {
    title: "[oracle]",
    keys: &[key("script", PATH), key("patch", PATH)],
};

pub(super) static CHECK: Shape = Shape {
    title: "[check]",
    keys: &[key(
        "waive",
        Kind::List {
            noun: "findings",
            example: "leaky:prompt",
            split: false,
        },
    )],
};

pub(super) static PRICE: Shape = Shape {
    title: "[price]",
    keys: &[
        key("input_per_mtok", Kind::Number),
        key("output_per_mtok", Kind::Number),
        key("cached_input_per_mtok", Kind::Number),
    ],
};

/// Every key of every provider kind; which ones a kind takes is
/// `ProviderKind::keys`.
pub(super) static PROVIDER: Shape = Shape {
    title: "[provider]",
    keys: &[
        key(
            "kind",
            Kind::Choice(&["script", "openai", "anthropic", "command", "oracle", "noop"]),
        ),
        key("script", Kind::Paths),
        key("dialect", Kind::Choice(&["anthropic", "openai"])),
        key("base_url", Kind::Text("a URL")),
        key("model", TEXT),
        key("api_key_env", Kind::Text("a variable name")),
        key("api_key", Kind::Refused),
        key(
            "mode",
            Kind::Choice(&["json_schema", "json_object", "tools", "text"]),
        ),
        key("temperature", Kind::Number),
        key("max_tokens", U32),
        key("timeout", Kind::Duration),
        key("max_retries", U32),
        key("retry_for", Kind::Duration),
        key("program", Kind::Text("a program name or path")),
        key(
            "args",
            Kind::List {
                noun: "arguments",
                example: "--json",
                split: true,
            },
        ),
        key("preset", Kind::Choice(&["agy"])),
        key("stream", Kind::Bool),
        key("output_cap", Kind::Size),
    ],
};

pub(super) static PROVIDER_FILE: Shape = Shape {
    title: "a provider file",
    keys: &[
        key("name", Kind::Text("a provider name")),
        key("provider", Kind::Table(&PROVIDER)),
        key("price", Kind::Table(&PRICE)),
        key("agent", Kind::Table(&AGENT)),
    ],
};

#[cfg(test)]
#[path = "shape_tests.rs"]
mod tests;

//! Allow rules: which argv the executor may run.
//!
//! A rule is whitespace-separated glob tokens matched against the argv
//! position by position. The first token matches the program name (never a
//! path). A final `**` matches any remaining arguments, including none;
//! without it the argv must have exactly as many tokens as the rule.

use globset::{Glob, GlobBuilder, GlobMatcher};

use super::error::{AllowError, Refusal};

/// How many argv tokens a refusal quotes, and how much of each: enough to
/// say what was refused without echoing a long argument list.
const QUOTED_TOKENS: usize = 2;
const QUOTED_TOKEN_CHARS: usize = 40;

/// One parsed rule, e.g. `cargo test **`.
#[derive(Debug, Clone)]
pub struct AllowRule {
    text: String,
    tokens: Vec<GlobMatcher>,
    rest: bool,
}

impl AllowRule {
    pub fn parse(text: &str) -> Result<AllowRule, AllowError> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let Some((program, _)) = words.split_first() else {
            return Err(AllowError::Empty);
        };
        if *program == "**" {
            return Err(AllowError::bad(text, "the program token cannot be `**`"));
        }
        if program.contains('/') {
            return Err(AllowError::bad(
                text,
                "the program must be a name, not a path",
            ));
        }
        let rest = words.last() == Some(&"**");
        let fixed = if rest {
            &words[..words.len() - 1]
        } else {
            &words[..]
        };
        let mut tokens = Vec::with_capacity(fixed.len());
        for word in fixed {
            if *word == "**" {
                return Err(AllowError::bad(
                    text,
                    "`**` is only allowed as the last token",
                ));
            }
            tokens.push(compile(text, word)?);
        }
        Ok(AllowRule {
            text: words.join(" "),
            tokens,
            rest,
        })
    }

    /// The rule as written (whitespace normalized).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn matches(&self, argv: &[String]) -> bool {
        let arity_ok = if self.rest {
            argv.len() >= self.tokens.len()
        } else {
            argv.len() == self.tokens.len()
        };
        arity_ok
            && self
                .tokens
                .iter()
                .zip(argv)
                .all(|(glob, arg)| glob.is_match(arg.as_str()))
    }
}

fn compile(rule: &str, word: &str) -> Result<GlobMatcher, AllowError> {
    // Tokens are not paths: `*` may match `/`, and matching is exact-case.
    let glob: Glob = GlobBuilder::new(word)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map_err(|err| AllowError::bad(rule, &format!("bad glob `{word}`: {err}")))?;
    Ok(glob.compile_matcher())
}

/// An ordered set of rules; an argv is allowed if any rule matches.
#[derive(Debug, Clone, Default)]
pub struct AllowList {
    rules: Vec<AllowRule>,
}

impl AllowList {
    pub fn parse(rules: &[String]) -> Result<AllowList, AllowError> {
        let rules = rules
            .iter()
            .map(|text| AllowRule::parse(text))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AllowList { rules })
    }

    /// A list allowing exactly this argv and nothing else (each token is
    /// escaped, so glob characters in it match only themselves).
    /// Built token by token, so an argument may hold spaces or be empty
    /// (`["sh", "-c", "exit 1"]`).
    pub fn exact(argv: &[String]) -> Result<AllowList, AllowError> {
        let text = argv.join(" ");
        let Some(program) = argv.first() else {
            return Err(AllowError::Empty);
        };
        if program.contains('/') {
            return Err(AllowError::bad(
                &text,
                "the program must be a name, not a path",
            ));
        }
        let tokens = argv
            .iter()
            .map(|arg| compile(&text, &escape(arg)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AllowList {
            rules: vec![AllowRule {
                text,
                tokens,
                rest: false,
            }],
        })
    }

    /// This list's rules and `other`'s together.
    pub fn union(mut self, other: AllowList) -> AllowList {
        self.rules.extend(other.rules);
        self
    }

    /// A list allowing `program` with any arguments (`program **`), the
    /// program name taken literally.
    pub fn program_any_args(program: &str) -> Result<AllowList, AllowError> {
        if program.is_empty() || program.contains(char::is_whitespace) {
            return Err(AllowError::bad(program, "not a program name"));
        }
        AllowList::parse(&[format!("{} **", escape(program))])
    }

    pub fn rules(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(AllowRule::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Checks an argv before anything is resolved or spawned.
    pub fn check(&self, argv: &[String]) -> Result<(), Refusal> {
        let Some(program) = argv.first() else {
            return Err(Refusal::EmptyArgv);
        };
        if program.contains('/') {
            return Err(Refusal::ProgramIsPath(quote(program)));
        }
        if program.is_empty() || program == "." || program == ".." {
            return Err(Refusal::BadProgram(quote(program)));
        }
        if argv.iter().any(|arg| arg.contains('\0')) {
            return Err(Refusal::NulByte);
        }
        if self.rules.is_empty() {
            return Err(Refusal::NoRules);
        }
        if self.rules.iter().any(|rule| rule.matches(argv)) {
            return Ok(());
        }
        let shown: Vec<String> = argv.iter().take(QUOTED_TOKENS).map(|a| quote(a)).collect();
        Err(Refusal::NoMatch {
            shown: shown.join(" "),
            rules: self.rules().collect::<Vec<_>>().join(", "),
        })
    }
}

fn quote(token: &str) -> String {
    let mut chars = token.chars();
    let head: String = chars.by_ref().take(QUOTED_TOKEN_CHARS).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

fn escape(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    for c in token.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\' | '!') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(rules: &[&str]) -> AllowList {
        let rules: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
        AllowList::parse(&rules).unwrap()
    }

    fn argv(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn final_double_star_matches_the_rest_including_nothing() {
        let allow = list(&["cargo test **"]);
        assert!(allow.check(&argv("cargo test")).is_ok());
        assert!(
            allow
                .check(&argv("cargo test --quiet -- --nocapture"))
                .is_ok()
        );
        assert!(allow.check(&argv("cargo install x")).is_err());
        assert!(allow.check(&argv("cargo")).is_err());
    }

    #[test]
    fn without_double_star_the_arity_is_exact() {
        let allow = list(&["cargo check"]);
        assert!(allow.check(&argv("cargo check")).is_ok());
        assert!(allow.check(&argv("cargo check --all")).is_err());
    }

    #[test]
    fn tokens_are_globs_per_position() {
        let allow = list(&["cargo test --features=* --quiet", "ls {src,tests}"]);
        assert!(
            allow
                .check(&argv("cargo test --features=a,b --quiet"))
                .is_ok()
        );
        assert!(
            allow
                .check(&argv("cargo test --quiet --features=a"))
                .is_err()
        );
        assert!(allow.check(&argv("ls src")).is_ok());
        assert!(allow.check(&argv("ls target")).is_err());
        // `*` is one whole token, `/` included; it never spans two tokens.
        let star = list(&["cat *"]);
        assert!(star.check(&argv("cat a/b.rs")).is_ok());
        assert!(star.check(&argv("cat a b")).is_err());
    }

    #[test]
    fn program_globs_match_names_only() {
        let allow = list(&["*"]);
        assert!(allow.check(&argv("ls")).is_ok());
        let refusal = allow.check(&argv("/bin/sh")).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "program must be a name, not a path: /bin/sh"
        );
        assert!(matches!(
            allow.check(&argv("./x")),
            Err(Refusal::ProgramIsPath(_))
        ));
        assert!(matches!(
            allow.check(&argv("..")),
            Err(Refusal::BadProgram(_))
        ));
    }

    #[test]
    fn refusal_names_the_command_and_the_rules() {
        let allow = list(&["cargo test **", "cargo  check   **"]);
        let refusal = allow.check(&argv("cargo install x")).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "`cargo install` does not match any allow rule (cargo test **, cargo check **)"
        );
    }

    #[test]
    fn bad_rules_are_rejected_with_the_reason() {
        let bad = |rule: &str| AllowRule::parse(rule).unwrap_err().to_string();
        assert!(bad("").contains("empty"));
        assert!(bad("/bin/sh **").contains("not a path"));
        assert!(bad("cargo ** test").contains("last token"));
        assert!(bad("**").contains("program"));
        assert!(bad("cargo [").contains("bad glob"));
    }

    #[test]
    fn empty_list_and_empty_argv_refuse() {
        assert!(matches!(
            AllowList::default().check(&argv("ls")),
            Err(Refusal::NoRules)
        ));
        assert!(matches!(list(&["ls"]).check(&[]), Err(Refusal::EmptyArgv)));
        let nul = vec!["ls".to_string(), "a\0b".to_string()];
        assert!(matches!(list(&["ls *"]).check(&nul), Err(Refusal::NulByte)));
    }

    #[test]
    fn exact_lists_escape_glob_characters() {
        let allow = AllowList::exact(&argv("echo [x] *")).unwrap();
        assert!(allow.check(&argv("echo [x] *")).is_ok());
        assert!(allow.check(&argv("echo x anything")).is_err());
        // Arguments with spaces, or empty, are allowed exactly as given.
        let spaced: Vec<String> = vec!["sh".into(), "-c".into(), "exit 1".into(), String::new()];
        let allow = AllowList::exact(&spaced).unwrap();
        assert!(allow.check(&spaced).is_ok());
        let split: Vec<String> = vec!["sh".into(), "-c".into(), "exit".into(), "1".into()];
        assert!(allow.check(&split).is_err());
        assert!(AllowList::exact(&["/bin/sh".into()]).is_err());
        assert!(AllowList::exact(&[]).is_err());
    }

    #[test]
    fn long_arguments_are_shortened_in_refusals() {
        let allow = list(&["ls"]);
        let long = format!("ls {}", "a".repeat(200));
        let text = allow.check(&argv(&long)).unwrap_err().to_string();
        assert!(text.len() < 120, "{text}");
    }
}

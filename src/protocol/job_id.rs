//! Job ids: safe as a single path component and in every report format.

/// Longest id accepted.
pub const MAX_ID_LEN: usize = 128;

/// Why a string is not a job id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("job id is empty")]
    Empty,
    #[error("job id {0:?} is longer than {MAX_ID_LEN} characters")]
    TooLong(String),
    #[error("job id {id:?} contains {found:?}; use only letters, digits, '.', '_' and '-'")]
    BadChar { id: String, found: char },
    #[error("job id {0:?} must not start with '.' or contain \"..\"")]
    Dots(String),
}

/// Checks `id` against `[A-Za-z0-9._-]+`, at most [`MAX_ID_LEN`] characters,
/// not starting with `.` and without `..`.
pub fn validate_id(id: &str) -> Result<(), IdError> {
    if id.is_empty() {
        return Err(IdError::Empty);
    }
    if let Some(found) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(IdError::BadChar {
            id: id.to_string(),
            found,
        });
    }
    if id.len() > MAX_ID_LEN {
        return Err(IdError::TooLong(id.to_string()));
    }
    if id.starts_with('.') || id.contains("..") {
        return Err(IdError::Dots(id.to_string()));
    }
    Ok(())
}

/// The id of one instance of a job in a sweep: `<job>@<provider>#<k>`.
pub fn instance_id(
    job: &str,
    provider: Option<&str>,
    agent: Option<&str>,
    repeat: Option<u32>,
) -> String {
    let mut id = job.to_string();
    if let Some(provider) = provider {
        id.push('@');
        id.push_str(provider);
    }
    if let Some(agent) = agent {
        id.push('+');
        id.push_str(agent);
    }
    if let Some(k) = repeat {
        id.push('#');
        id.push_str(&k.to_string());
    }
    id
}

/// Checks a job id or a sweep instance id: a plain id, optionally followed
/// by `@<provider name>`, `+<agent>` and `#<repeat>`, each part a plain id.
pub fn validate_instance_id(id: &str) -> Result<(), IdError> {
    let (rest, repeat) = match id.rsplit_once('#') {
        Some((rest, k)) if !k.is_empty() && k.chars().all(|c| c.is_ascii_digit()) => {
            (rest, Some(k))
        }
        Some(_) => {
            return Err(IdError::BadChar {
                id: id.to_string(),
                found: '#',
            });
        }
        None => (id, None),
    };
    let _ = repeat;
    let rest = match rest.split_once('+') {
        Some((rest, agent)) => {
            validate_id(agent).map_err(|_| IdError::BadChar {
                id: id.to_string(),
                found: '+',
            })?;
            rest
        }
        None => rest,
    };
    match rest.split_once('@') {
        Some((job, provider)) => {
            validate_id(job)?;
            validate_id(provider).map_err(|_| IdError::BadChar {
                id: id.to_string(),
                found: '@',
            })
        }
        None => validate_id(rest),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn instance_ids() {
        assert_eq!(instance_id("a", Some("p"), None, Some(2)), "a@p#2");
        assert_eq!(instance_id("a", None, None, None), "a");
        assert_eq!(
            instance_id("a", Some("p"), Some("claude-code"), Some(2)),
            "a@p+claude-code#2"
        );
        for ok in ["a", "a@p", "a@p#3", "a#1", "a@p+codex#2", "a+codex"] {
            validate_instance_id(ok).unwrap();
        }
        for bad in [
            "a@", "@p", "a#", "a#x", "a@p@q", "a/b@p", "a@../p", "a+", "a@p+x+y", "a+../x",
        ] {
            assert!(validate_instance_id(bad).is_err(), "{bad}");
        }
    }

    use super::*;

    #[test]
    fn accepts_plain_ids() {
        for id in ["demo-task", "off_by_one", "a.b", "X9", "job-1.2_3"] {
            validate_id(id).unwrap();
        }
    }

    #[test]
    fn refuses_what_could_escape_or_confuse() {
        assert_eq!(validate_id(""), Err(IdError::Empty));
        assert!(matches!(
            validate_id("a b"),
            Err(IdError::BadChar { found: ' ', .. })
        ));
        assert!(matches!(
            validate_id("a/b"),
            Err(IdError::BadChar { found: '/', .. })
        ));
        assert!(matches!(validate_id("é"), Err(IdError::BadChar { .. })));
        assert_eq!(validate_id(".."), Err(IdError::Dots("..".into())));
        assert_eq!(validate_id(".hidden"), Err(IdError::Dots(".hidden".into())));
        assert_eq!(validate_id("a..b"), Err(IdError::Dots("a..b".into())));
        assert!(matches!(
            validate_id(&"x".repeat(129)),
            Err(IdError::TooLong(_))
        ));
    }
}

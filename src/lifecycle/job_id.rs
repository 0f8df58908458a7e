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

#[cfg(test)]
mod tests {
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

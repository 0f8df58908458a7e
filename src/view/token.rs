//! The viewer's access token: 32 bytes from the OS random number
//! generator, shown as 64 hex digits in the printed URL and carried
//! afterwards in a cookie. Checking it takes the same time wherever a
//! wrong token differs.

/// Bytes of a token.
const TOKEN_BYTES: usize = 32;

/// An unguessable token; its [`std::fmt::Debug`] form hides it.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Token {
    hex: String,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// A fresh token from the OS random number generator.
    pub(super) fn generate() -> Result<Token, getrandom::Error> {
        let mut bytes = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut bytes)?;
        Ok(Token::from_bytes(&bytes))
    }

    /// The token of `bytes` (tests use fixed ones).
    pub(super) fn from_bytes(bytes: &[u8]) -> Token {
        let hex = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Token { hex }
    }

    /// The token as it appears in the URL and the cookie.
    pub(super) fn as_str(&self) -> &str {
        &self.hex
    }

    /// Whether `given` is this token, compared in time that does not
    /// depend on where they differ.
    pub(super) fn matches(&self, given: &str) -> bool {
        let (a, b) = (self.hex.as_bytes(), given.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
    }
}

/// The cookie that carries the token after the first page load. Cookies
/// do not tell ports apart, so two viewers on one machine each have their
/// own name.
pub(super) fn cookie_name(port: u16) -> String {
    format!("agent_runtime_view_{port}")
}

/// The `Set-Cookie` value that hands `token` to the browser: never sent
/// to another site, never readable by the page's script.
pub(super) fn set_cookie(port: u16, token: &Token) -> String {
    format!(
        "{}={}; Path=/; HttpOnly; SameSite=Strict",
        cookie_name(port),
        token.as_str()
    )
}

/// The value of cookie `name` in a `Cookie` header (`a=1; b=2`).
pub(super) fn cookie_value<'h>(header: &'h str, name: &str) -> Option<&'h str> {
    header.split(';').find_map(|pair| {
        let (key, value) = pair.trim().split_once('=')?;
        (key.trim() == name).then(|| value.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_token_is_64_hex_digits_and_differs_each_time() {
        let a = Token::generate().unwrap();
        let b = Token::generate().unwrap();
        assert_eq!(a.as_str().len(), 64);
        assert!(a.as_str().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert_eq!(format!("{a:?}"), "Token(..)", "Debug never shows it");
    }

    #[test]
    fn only_the_exact_token_matches() {
        let token = Token::from_bytes(&[0xab; 32]);
        assert!(token.matches(&"ab".repeat(32)));
        assert!(!token.matches(&"ab".repeat(31)));
        assert!(!token.matches(&format!("{}ac", "ab".repeat(31))));
        assert!(
            !token.matches(&"AB".repeat(32)),
            "hex digits are lower case"
        );
        assert!(!token.matches(""));
    }

    #[test]
    fn the_cookie_is_http_only_same_site_strict_and_named_by_port() {
        let token = Token::from_bytes(&[1; 32]);
        let cookie = set_cookie(8123, &token);
        assert!(cookie.starts_with("agent_runtime_view_8123=0101"));
        assert!(cookie.contains("; HttpOnly") && cookie.contains("; SameSite=Strict"));
        assert_eq!(
            cookie_value(
                "a=1; agent_runtime_view_8123=xyz ; b=2",
                "agent_runtime_view_8123"
            ),
            Some("xyz")
        );
        assert_eq!(
            cookie_value("agent_runtime_view_9=xyz", "agent_runtime_view_8123"),
            None
        );
        assert_eq!(cookie_value("garbage", "x"), None);
    }
}

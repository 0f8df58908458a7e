//! Who may ask the viewer anything: a request must name the viewer itself
//! in its `Host` header (`127.0.0.1:PORT` or `localhost:PORT`: a page of
//! another site that rebinds its DNS name to 127.0.0.1 sends its own name)
//! and must carry the token, in the query of the printed URL or in the
//! cookie the first such load set. Pure: the server hands it the headers.

use super::token::{Token, cookie_name, cookie_value};

/// The viewer's port and token.
#[derive(Debug, Clone)]
pub(super) struct Access {
    port: u16,
    token: Token,
}

/// What to do with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Admit {
    /// Serve it; `set_cookie` when the token came in the query, so later
    /// requests can carry it in the cookie.
    Yes { set_cookie: bool },
    /// 403: the `Host` header is missing or names something else.
    WrongHost,
    /// 401: no token, or a wrong one.
    NoToken,
}

impl Access {
    pub(super) fn new(port: u16, token: Token) -> Access {
        Access { port, token }
    }

    pub(super) fn port(&self) -> u16 {
        self.port
    }

    pub(super) fn token(&self) -> &Token {
        &self.token
    }

    /// The URL to open: the token in its query.
    pub(super) fn url(&self) -> String {
        format!(
            "http://127.0.0.1:{}/?token={}",
            self.port,
            self.token.as_str()
        )
    }

    /// Whether a request with these headers and the query's `token` may be
    /// served. The host is checked first: a rebinding page never learns
    /// whether it guessed a token.
    pub(super) fn admit(
        &self,
        host: Option<&str>,
        query_token: Option<&str>,
        cookie: Option<&str>,
    ) -> Admit {
        if !host.is_some_and(|h| host_allowed(h, self.port)) {
            return Admit::WrongHost;
        }
        if query_token.is_some_and(|t| self.token.matches(t)) {
            return Admit::Yes { set_cookie: true };
        }
        let name = cookie_name(self.port);
        if cookie
            .and_then(|c| cookie_value(c, &name))
            .is_some_and(|t| self.token.matches(t))
        {
            return Admit::Yes { set_cookie: false };
        }
        Admit::NoToken
    }
}

/// Whether `host` (a `Host` header) names this viewer: `127.0.0.1:PORT` or
/// `localhost:PORT` (the name in any case), exactly.
pub(super) fn host_allowed(host: &str, port: u16) -> bool {
    let Some((name, given_port)) = host.rsplit_once(':') else {
        return false;
    };
    // Digits only: `+80` or ` 80` parse as numbers but are not what a
    // browser sends.
    let port_ok = !given_port.is_empty()
        && given_port.bytes().all(|b| b.is_ascii_digit())
        && given_port.parse::<u16>() == Ok(port);
    port_ok && (name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access() -> Access {
        Access::new(8123, Token::from_bytes(&[7; 32]))
    }

    fn good() -> String {
        "07".repeat(32)
    }

    #[test]
    fn only_the_viewer_s_own_names_and_port_are_hosts() {
        for ok in ["127.0.0.1:8123", "localhost:8123", "LocalHost:8123"] {
            assert!(host_allowed(ok, 8123), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8123",
            "127.0.0.1",
            "127.0.0.1:8124",
            "127.0.0.1:08123x",
            "127.0.0.1:+8123",
            "127.0.0.2:8123",
            "localhost.evil.example:8123",
            "[::1]:8123",
            "0.0.0.0:8123",
            "",
            ":8123",
        ] {
            assert!(!host_allowed(bad, 8123), "{bad}");
        }
    }

    #[test]
    fn a_request_needs_the_host_and_then_the_token() {
        let a = access();
        let cookie = format!("{}={}", cookie_name(8123), good());
        let host = Some("127.0.0.1:8123");
        assert_eq!(
            a.admit(host, Some(&good()), None),
            Admit::Yes { set_cookie: true }
        );
        assert_eq!(
            a.admit(host, None, Some(&cookie)),
            Admit::Yes { set_cookie: false }
        );
        assert_eq!(a.admit(host, None, None), Admit::NoToken);
        assert_eq!(a.admit(host, Some("07"), None), Admit::NoToken);
        let other_port = format!("{}={}", cookie_name(9000), good());
        assert_eq!(a.admit(host, None, Some(&other_port)), Admit::NoToken);
        // The right token from the wrong host is still refused.
        assert_eq!(
            a.admit(Some("evil.example"), Some(&good()), Some(&cookie)),
            Admit::WrongHost
        );
        assert_eq!(a.admit(None, Some(&good()), None), Admit::WrongHost);
    }

    #[test]
    fn the_url_holds_the_port_and_the_token() {
        assert_eq!(
            access().url(),
            format!("http://127.0.0.1:8123/?token={}", good())
        );
    }
}

//! A request target split into decoded path segments and query pairs.
//! Pure. Segments are decoded one by one, so `%2F` inside a segment never
//! becomes a separator; what a segment may hold is the route's concern.

use percent_encoding::percent_decode_str;

/// A request's path and query, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    /// The non-empty segments of the path, percent-decoded.
    pub segments: Vec<String>,
    query: Vec<(String, String)>,
}

impl Target {
    /// Parses a request target (`/a/b?x=1`); `None` for one that is not a
    /// path or does not decode to UTF-8.
    pub(super) fn parse(url: &str) -> Option<Target> {
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        if !path.starts_with('/') {
            return None;
        }
        let segments = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(decode)
            .collect::<Option<Vec<_>>>()?;
        let query = query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                Some((decode_form(key)?, decode_form(value)?))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Target { segments, query })
    }

    /// The first value of query key `key`.
    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The segments as `&str`s, for matching.
    pub(super) fn path(&self) -> Vec<&str> {
        self.segments.iter().map(String::as_str).collect()
    }
}

fn decode(text: &str) -> Option<String> {
    percent_decode_str(text)
        .decode_utf8()
        .ok()
        .map(|s| s.into_owned())
}

/// A query value: `+` is a space, then percent-decoding.
fn decode_form(text: &str) -> Option<String> {
    decode(&text.replace('+', " "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_and_query_values_are_decoded() {
        let t = Target::parse("/runs/0/a%2Fb/x%20y.txt?id=off%40p%231&q=a+b&flag").unwrap();
        assert_eq!(t.path(), ["runs", "0", "a/b", "x y.txt"]);
        assert_eq!(t.get("id"), Some("off@p#1"));
        assert_eq!(t.get("q"), Some("a b"));
        assert_eq!(t.get("flag"), Some(""));
        assert_eq!(t.get("missing"), None);
        assert_eq!(Target::parse("/").unwrap().path(), Vec::<&str>::new());
        assert_eq!(Target::parse("//a//b/").unwrap().path(), ["a", "b"]);
    }

    #[test]
    fn dot_dot_stays_a_segment_and_bad_targets_are_refused() {
        let t = Target::parse("/runs/0/%2e%2e/x").unwrap();
        assert_eq!(t.path(), ["runs", "0", "..", "x"]);
        assert_eq!(Target::parse("http://evil.example/"), None);
        assert_eq!(Target::parse("/%ff"), None, "not UTF-8");
        assert_eq!(Target::parse("*"), None);
    }
}

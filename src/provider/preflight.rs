//! Checking a provider once, before a batch or a run uses it: a mistake in
//! its configuration (a key variable that is not set, a program that is not
//! there, a server that does not answer) is a usage error before any
//! baseline runs or any attempt is spent, not a failed job.

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use super::error::ProviderError;
use super::factory::build_provider;
use crate::manifest::ProviderConfig;

/// How long the endpoint gets to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Builds the provider (which checks its key variable, its script or its
/// program) and, for an HTTP provider, opens and closes one TCP connection
/// to its endpoint. Nothing is sent, so nothing is billed.
pub(crate) fn preflight(config: &ProviderConfig, name: &str) -> Result<(), ProviderError> {
    if matches!(config, ProviderConfig::Oracle | ProviderConfig::Noop) {
        // Each job's own script, made by `batch`: nothing to reach.
        return Ok(());
    }
    build_provider(config, name)?;
    let base_url = match config {
        ProviderConfig::Openai(openai) => &openai.base_url,
        ProviderConfig::Anthropic(anthropic) => &anthropic.base_url,
        ProviderConfig::Script(_)
        | ProviderConfig::Command(_)
        | ProviderConfig::Oracle
        | ProviderConfig::Noop => return Ok(()),
    };
    reachable(base_url).map_err(|message| ProviderError::Config {
        name: name.to_string(),
        message: format!("{base_url} does not answer: {message}"),
    })
}

/// Why a server cannot be reached.
#[derive(Debug, thiserror::Error)]
enum Unreachable {
    #[error("{url}: {why}")]
    BadUrl { url: String, why: String },
    #[error("unsupported scheme {0}")]
    Scheme(String),
    #[error("{0} is not an http(s) URL")]
    NotHttp(String),
    #[error("no host in {0}")]
    NoHost(String),
    #[error("cannot resolve {host}: {source}")]
    Resolve {
        host: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0} has no address")]
    NoAddress(String),
    #[error("{addr}: {source}")]
    Connect {
        addr: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// Whether a TCP connection to the host and port of `url` opens.
fn reachable(url: &str) -> Result<(), Unreachable> {
    let (host, port) = host_port(url)?;
    let addrs = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|source| Unreachable::Resolve {
            host: host.clone(),
            source,
        })?;
    let mut last = Unreachable::NoAddress(host.clone());
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(_) => return Ok(()),
            Err(source) => last = Unreachable::Connect { addr, source },
        }
    }
    Err(last)
}

/// `http://host:port/...` → (host, port), the port defaulting by scheme.
fn host_port(url: &str) -> Result<(String, u16), Unreachable> {
    let uri: ureq::http::Uri =
        url.parse()
            .map_err(|e: ureq::http::uri::InvalidUri| Unreachable::BadUrl {
                url: url.to_string(),
                why: e.to_string(),
            })?;
    let default = match uri.scheme_str() {
        Some("http") => 80,
        Some("https") => 443,
        Some(other) => return Err(Unreachable::Scheme(other.to_string())),
        None => return Err(Unreachable::NotHttp(url.to_string())),
    };
    let host = uri
        .host()
        .ok_or_else(|| Unreachable::NoHost(url.to_string()))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Ok((host.to_string(), uri.port_u16().unwrap_or(default)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port_come_from_the_url() {
        assert_eq!(
            host_port("http://127.0.0.1:8080/v1").unwrap(),
            ("127.0.0.1".to_string(), 8080)
        );
        assert_eq!(
            host_port("https://api.example.com/v1").unwrap(),
            ("api.example.com".to_string(), 443)
        );
        assert_eq!(
            host_port("http://[::1]:9/x").unwrap(),
            ("::1".to_string(), 9)
        );
        assert!(host_port("ftp://x").is_err());
        assert!(host_port("localhost:80").is_err());
    }

    #[test]
    fn a_closed_port_does_not_answer_and_an_open_one_does() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert!(reachable(&format!("http://127.0.0.1:{port}/v1")).is_ok());
        drop(listener);
        assert!(reachable(&format!("http://127.0.0.1:{port}/v1")).is_err());
    }
}

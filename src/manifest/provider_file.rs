//! Provider files (`--provider FILE`): `name = "..."` and a `[provider]`
//! table, checked like a manifest's `[provider]`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::ManifestError;
use super::fields::Fields;
use super::load::{Errors, read_text};
use super::load_shape::{check_shape, not_a_provider_file, prune};
use super::provider_config::build_provider;
use super::raw::RawProviderFile;
use super::shape::PROVIDER_FILE;
use super::source_map::SourceMap;
use crate::protocol::ProviderConfig;
use crate::protocol::validate_id;

/// A named provider configuration, e.g. for a sweep over providers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProviderFile {
    /// Defaults to the file stem; same character rules as a job id.
    pub name: String,
    pub provider: ProviderConfig,
    /// `[price]`, if the file declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<crate::protocol::Price>,
    /// `[agent]`: the agent its jobs run under unless `--agent` names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<crate::protocol::AgentChoice>,
}

/// Reads and validates the provider file at `path`.
pub(crate) fn load_provider_file(path: &Path) -> Result<ProviderFile, ManifestError> {
    let text = read_text(path)?;
    parse_provider_file(path, &text)
}

/// Validates provider-file `text` as if read from `path`; every error of a
/// file that parses as TOML is reported, in file order.
pub(crate) fn parse_provider_file(path: &Path, text: &str) -> Result<ProviderFile, ManifestError> {
    let map = SourceMap::parse(path, text)?;
    let mut root: toml::Table = toml::from_str(text).map_err(|e| map.toml_error(&e))?;
    if let Some(err) = not_a_provider_file(path, &root) {
        return Err(err);
    }
    let shape = check_shape(&map, &root, &PROVIDER_FILE);
    prune(&mut root, &shape.fields);
    let mut errors = Errors::new(shape);
    let raw: RawProviderFile = match toml::Value::Table(root).try_into() {
        Ok(raw) => raw,
        Err(e) => {
            errors.push(map.toml_error(&e));
            return errors.finish(None);
        }
    };
    let fields = Fields::new(&map, path)?;
    let name = match raw.name {
        Some(name) => name,
        None => path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let name = errors.keep(
        validate_id(&name)
            .map(|()| name)
            .map_err(|e| fields.err("name", e.to_string().replace("job id", "name"))),
    );
    let provider = errors
        .keep(fields.required("provider", raw.provider))
        .and_then(|raw| errors.keep(build_provider(&fields, "provider", raw)));
    let price = match raw.price {
        Some(raw) => errors.keep(super::price::price(&fields, raw)).map(Some),
        None => Some(None),
    };
    let agent = match raw.agent {
        Some(raw) => errors.keep(super::load::agent_choice(&fields, raw)),
        None => Some(None),
    };
    let file = match (name, provider, price, agent) {
        (Some(name), Some(provider), Some(price), Some(agent)) => Some(ProviderFile {
            name,
            provider,
            price,
            agent,
        }),
        _ => None,
    };
    errors.finish(file)
}

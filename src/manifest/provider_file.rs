//! Provider files (`--provider FILE`): `name = "..."` and a `[provider]`
//! table, checked like a manifest's `[provider]`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::ManifestError;
use super::fields::Fields;
use super::load::read_text;
use super::provider_config::build_provider;
use super::raw::RawProviderFile;
use super::source_map::SourceMap;
use crate::protocol::ProviderConfig;
use crate::protocol::validate_id;

/// A named provider configuration, e.g. for a sweep over providers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderFile {
    /// Defaults to the file stem; same character rules as a job id.
    pub name: String,
    pub provider: ProviderConfig,
    /// `[price]`, if the file declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<crate::protocol::Price>,
}

/// Reads and validates the provider file at `path`.
pub fn load_provider_file(path: &Path) -> Result<ProviderFile, ManifestError> {
    let text = read_text(path)?;
    parse_provider_file(path, &text)
}

/// Validates provider-file `text` as if read from `path`.
pub fn parse_provider_file(path: &Path, text: &str) -> Result<ProviderFile, ManifestError> {
    let map = SourceMap::parse(path, text)?;
    let raw: RawProviderFile = toml::from_str(text).map_err(|e| map.toml_error(&e))?;
    let fields = Fields::new(&map, path)?;
    let name = match raw.name {
        Some(name) => name,
        None => path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    validate_id(&name).map_err(|e| fields.err("name", e.to_string().replace("job id", "name")))?;
    let raw_provider = fields.required("provider", raw.provider)?;
    let provider = build_provider(&fields, "provider", raw_provider)?;
    let price = match raw.price {
        Some(raw) => Some(super::price::price(&fields, raw)?),
        None => None,
    };
    Ok(ProviderFile {
        name,
        provider,
        price,
    })
}

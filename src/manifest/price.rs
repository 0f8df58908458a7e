//! Checking a `[price]` table (the type is the protocol's: it rides in the
//! manifest snapshot and the reducer prices every call with it).

use super::error::ManifestError;
use super::fields::Fields;
use super::raw::RawPrice;
use crate::protocol::Price;

/// Checks a `[price]` table: both main prices required, every price a
/// finite number at least 0.
pub(super) fn price(fields: &Fields<'_>, raw: RawPrice) -> Result<Price, ManifestError> {
    let check = |field: &str, value: Option<f64>| -> Result<Option<f64>, ManifestError> {
        match value {
            Some(v) if !v.is_finite() || v < 0.0 => Err(fields.err(
                field,
                format!("must be a number of USD at least 0, got {v}"),
            )),
            other => Ok(other),
        }
    };
    let input = check("price.input_per_mtok", raw.input_per_mtok)?;
    let output = check("price.output_per_mtok", raw.output_per_mtok)?;
    Ok(Price {
        input_per_mtok: fields.required("price.input_per_mtok", input)?,
        output_per_mtok: fields.required("price.output_per_mtok", output)?,
        cached_input_per_mtok: check("price.cached_input_per_mtok", raw.cached_input_per_mtok)?,
    })
}

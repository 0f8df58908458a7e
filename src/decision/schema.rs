//! The JSON Schema (draft 2020-12) of the decision union, generated from
//! [`KINDS`](super::union::KINDS). Published as
//! `docs/decision.schema.json` and sent to providers that constrain output.

use serde_json::{Map, Value, json};

use super::union::{FieldType, KINDS, KindSpec};

/// The decision union: an object that is exactly one of the kinds, each
/// with a `const` tag, its required fields and nothing else.
pub(crate) fn decision_schema() -> Value {
    let variants: Vec<Value> = KINDS
        .iter()
        .map(|spec| {
            let (fields, field_required) = field_schemas(spec);
            let mut properties = Map::new();
            properties.insert("kind".to_string(), json!({ "const": spec.kind }));
            properties.extend(fields);
            let mut required = vec![json!("kind")];
            required.extend(field_required);
            json!({
                "title": spec.kind,
                "description": spec.description,
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            })
        })
        .collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Decision",
        "description": "One step an agent-runtime model asks the runtime to take, tagged by `kind`.",
        "type": "object",
        "oneOf": variants,
    })
}

/// The JSON Schema of each field of a kind (the `kind` tag excluded), and
/// the names of the required ones. Shared by the decision schema and the
/// tool definitions, so they never disagree.
pub(crate) fn field_schemas(spec: &KindSpec) -> (Map<String, Value>, Vec<Value>) {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in spec.fields {
        let schema = match field.ty {
            FieldType::String => json!({
                "type": "string",
                "description": field.description,
            }),
            FieldType::StringList => json!({
                "type": "array",
                "items": { "type": "string" },
                "description": field.description,
            }),
        };
        properties.insert(field.name.to_string(), schema);
        if field.required {
            required.push(json!(field.name));
        }
    }
    (properties, required)
}

/// The schema as published: pretty JSON with a final newline.
pub(crate) fn decision_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&decision_schema()).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_schema_matches_the_generated_one() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/decision.schema.json");
        let committed = std::fs::read_to_string(path).unwrap();
        let committed: Value = serde_json::from_str(&committed).unwrap();
        assert_eq!(
            committed,
            decision_schema(),
            "docs/decision.schema.json is stale; regenerate it with `agent-runtime schema decision > docs/decision.schema.json`"
        );
    }

    #[test]
    fn every_kind_is_a_closed_object_with_a_const_tag() {
        let schema = decision_schema();
        let variants = schema["oneOf"].as_array().unwrap();
        assert_eq!(variants.len(), 7);
        for (variant, spec) in variants.iter().zip(KINDS) {
            assert_eq!(variant["properties"]["kind"]["const"], spec.kind);
            assert_eq!(variant["additionalProperties"], false);
            assert_eq!(variant["required"][0], "kind");
        }
        let write = &variants[2];
        assert_eq!(write["required"], json!(["kind", "path", "content"]));
        let run = &variants[4];
        assert_eq!(run["required"], json!(["kind", "program"]));
        assert_eq!(run["properties"]["args"]["items"]["type"], "string");
        assert_eq!(variants[5]["required"], json!(["kind"]));
    }
}

//! One-pass decoding of a record line: the frame fields are read as they
//! come, and at `"type"` the rest of the same JSON object is handed to the
//! event's own deserializer. Nothing is parsed twice and the frame fields
//! are never buffered. A line whose keys come in another order (the event's
//! fields before `"type"`, or frame fields after it) is left to the slower
//! general path by returning an error.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::protocol::Event;

/// A line's fields.
#[derive(Debug)]
pub(super) struct Decoded {
    pub v: u32,
    pub seq: u64,
    pub ts: u64,
    pub job: Option<String>,
    pub attempt: Option<u32>,
    pub event: Event,
}

/// Decodes one line in one pass, or fails (the caller then falls back).
pub(super) fn decode_line(text: &str) -> Result<Decoded, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let decoded = de.deserialize_map(LineVisitor)?;
    de.end()?;
    Ok(decoded)
}

struct LineVisitor;

impl<'de> Visitor<'de> for LineVisitor {
    type Value = Decoded;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a record object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Decoded, A::Error> {
        let (mut v, mut seq, mut ts, mut job, mut attempt) = (None, None, None, None, None);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "v" => v = Some(map.next_value()?),
                "seq" => seq = Some(map.next_value()?),
                "ts" => ts = Some(map.next_value()?),
                "job" => job = map.next_value::<Option<String>>()?,
                "attempt" => attempt = map.next_value::<Option<u32>>()?,
                "type" => {
                    let tag: Cow<'de, str> = map.next_value()?;
                    let event = Event::deserialize(Rest { tag, map: &mut map })?;
                    return Ok(Decoded {
                        v: v.ok_or_else(|| de::Error::missing_field("v"))?,
                        seq: seq.ok_or_else(|| de::Error::missing_field("seq"))?,
                        ts: ts.ok_or_else(|| de::Error::missing_field("ts"))?,
                        job,
                        attempt,
                        event,
                    });
                }
                "crc" => {
                    map.next_value::<IgnoredAny>()?;
                }
                // An event field before "type": not our writer's order.
                other => return Err(de::Error::unknown_field(other, &[])),
            }
        }
        Err(de::Error::missing_field("type"))
    }
}

/// The remainder of the line's object, presented as an object that starts
/// with `"type"`.
struct Rest<'m, 'de, A> {
    tag: Cow<'de, str>,
    map: &'m mut A,
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for Rest<'_, 'de, A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_map(RestMap {
            tag: Some(self.tag),
            stage: Stage::Key,
            map: self.map,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

enum Stage {
    Key,
    Value,
    Rest,
}

struct RestMap<'a, 'de, A> {
    tag: Option<Cow<'de, str>>,
    stage: Stage,
    map: &'a mut A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for RestMap<'_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.stage {
            Stage::Key => {
                self.stage = Stage::Value;
                seed.deserialize(BorrowedStrDeserializer::<A::Error>::new("type"))
                    .map(Some)
            }
            _ => self.map.next_key_seed(seed),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        match self.stage {
            Stage::Value => {
                self.stage = Stage::Rest;
                match self.tag.take() {
                    Some(Cow::Borrowed(tag)) => {
                        seed.deserialize(BorrowedStrDeserializer::<A::Error>::new(tag))
                    }
                    Some(Cow::Owned(tag)) => {
                        seed.deserialize(StringDeserializer::<A::Error>::new(tag))
                    }
                    None => Err(de::Error::custom("type read twice")),
                }
            }
            _ => self.map.next_value_seed(seed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::AttemptStartedRecord;

    #[test]
    fn frame_then_event_in_one_pass() {
        let line = r#"{"crc":"00000000","v":1,"seq":3,"ts":9,"job":"a","attempt":2,"type":"attempt_started","pid":7}"#;
        let d = decode_line(line).unwrap();
        assert_eq!(
            (d.v, d.seq, d.ts, d.job.as_deref(), d.attempt),
            (1, 3, 9, Some("a"), Some(2))
        );
        assert_eq!(
            d.event,
            Event::AttemptStarted(AttemptStartedRecord {
                pid: 7,
                agent: None
            })
        );
    }

    #[test]
    fn other_orders_are_left_to_the_general_path() {
        assert!(decode_line(r#"{"type":"cancelled","v":1,"seq":1,"ts":1,"job":"a"}"#).is_err());
        assert!(decode_line(r#"{"v":1,"seq":1,"ts":1,"pid":3,"type":"attempt_started"}"#).is_err());
        assert!(decode_line(r#"{"v":1,"seq":1,"ts":1,"job":"a"}"#).is_err());
    }
}

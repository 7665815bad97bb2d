//! Enums discriminated by a tag field (`kind` for events, actions and observations, `type` for
//! message content) with a fallback variant that keeps anything unknown as raw JSON.

/// Declares an enum whose variants wrap structs and which (de)serialises as the struct's fields
/// plus a tag field naming the variant. An unknown tag deserialises to `Unknown(Value)`, which
/// serialises back unchanged.
macro_rules! tagged_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident tag $tag:literal {
            $( $(#[$vmeta:meta])* $variant:ident($ty:ty) = $kind:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $( $(#[$vmeta])* $variant($ty), )*
            /// A kind this version does not know; kept verbatim.
            Unknown(serde_json::Value),
        }

        impl $name {
            /// Parses one JSON object of this type from `bytes`; the same result as
            /// `serde_json::from_slice`, faster. Upstream and Tandem both write the tag as the
            /// object's last field, so the variant is known from the tail of the bytes and
            /// the object parses straight into its struct, skipping the intermediate
            /// `serde_json::Value` the generic path needs. Anything else takes the generic path.
            pub fn from_json_slice(bytes: &[u8]) -> serde_json::Result<Self> {
                if let Some(tag) = $crate::kind::trailing_tag(bytes, $tag) {
                    match tag {
                        $( $kind => {
                            if let Ok(mut inner) = serde_json::from_slice::<$ty>(bytes) {
                                inner.extra.remove($tag);
                                return Ok(Self::$variant(inner));
                            }
                            // Fall through for the generic path's error message.
                        } )*
                        _ => {}
                    }
                }
                serde_json::from_slice(bytes)
            }

            /// The tags (`kind` / `type`) of the known variants, in declaration order.
            pub const KINDS: &'static [&'static str] = &[$($kind),*];

            /// Each known variant's tag and its struct's OpenAPI schema, in declaration order:
            /// what the document's union of this type is built from (see [`crate::schema`]),
            /// so a new variant is documented without further code.
            pub const VARIANTS: &'static [$crate::schema::Variant] = &[$(
                $crate::schema::Variant {
                    tag: $kind,
                    name: <$ty as utoipa::ToSchema>::name,
                    schema: <$ty as utoipa::PartialSchema>::schema,
                    schemas: <$ty as utoipa::ToSchema>::schemas,
                },
            )*];

            /// The tag (`kind` / `type`) this value carries on the wire.
            pub fn kind(&self) -> &str {
                match self {
                    $( Self::$variant(_) => $kind, )*
                    Self::Unknown(v) => v.get($tag).and_then(|k| k.as_str()).unwrap_or(""),
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                #[derive(serde::Serialize)]
                struct Tagged<'a, T> {
                    #[serde(flatten)]
                    inner: &'a T,
                    #[serde(rename = $tag)]
                    tag: &'static str,
                }
                match self {
                    $( Self::$variant(inner) => Tagged { inner, tag: $kind }.serialize(s), )*
                    Self::Unknown(v) => v.serialize(s),
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use serde::de::Error as _;
                let mut value = serde_json::Value::deserialize(d)?;
                let Some(obj) = value.as_object_mut() else {
                    return Err(D::Error::custom(concat!(stringify!($name), ": expected a JSON object")));
                };
                let tag = match obj.get($tag) {
                    Some(serde_json::Value::String(s)) => s.clone(),
                    _ => return Ok(Self::Unknown(value)),
                };
                match tag.as_str() {
                    $( $kind => {
                        obj.remove($tag);
                        serde_json::from_value(value)
                            .map(Self::$variant)
                            .map_err(|e| D::Error::custom(format!("{}: {e}", $kind)))
                    } )*
                    _ => Ok(Self::Unknown(value)),
                }
            }
        }

        $(
            impl From<$ty> for $name {
                fn from(v: $ty) -> Self { Self::$variant(v) }
            }
        )*
    };
}

pub(crate) use tagged_enum;

/// The value of `"<tag>":"<value>"` when it is the last member of the JSON object `bytes`
/// (whitespace allowed), `None` otherwise. Being last before the closing brace, the member can
/// only belong to the top-level object; the value must be a plain identifier (no escapes).
pub(crate) fn trailing_tag<'a>(bytes: &'a [u8], tag: &str) -> Option<&'a str> {
    let mut end = bytes.len();
    let skip_ws = |end: &mut usize| {
        while *end > 0 && bytes[*end - 1].is_ascii_whitespace() {
            *end -= 1;
        }
    };
    let expect = |end: &mut usize, b: u8| {
        if *end > 0 && bytes[*end - 1] == b {
            *end -= 1;
            true
        } else {
            false
        }
    };
    skip_ws(&mut end);
    if !expect(&mut end, b'}') {
        return None;
    }
    skip_ws(&mut end);
    if !expect(&mut end, b'"') {
        return None;
    }
    let value_end = end;
    while end > 0 && (bytes[end - 1].is_ascii_alphanumeric() || bytes[end - 1] == b'_') {
        end -= 1;
    }
    let value_start = end;
    if value_start == value_end || !expect(&mut end, b'"') {
        return None;
    }
    skip_ws(&mut end);
    if !expect(&mut end, b':') {
        return None;
    }
    skip_ws(&mut end);
    if !expect(&mut end, b'"') {
        return None;
    }
    let key = tag.as_bytes();
    if end < key.len() || &bytes[end - key.len()..end] != key {
        return None;
    }
    end -= key.len();
    if !expect(&mut end, b'"') {
        return None;
    }
    skip_ws(&mut end);
    if !(expect(&mut end, b',') || expect(&mut end, b'{')) {
        return None;
    }
    std::str::from_utf8(&bytes[value_start..value_end]).ok()
}

#[cfg(test)]
mod tests {
    use super::trailing_tag;

    #[test]
    fn finds_only_a_top_level_trailing_tag() {
        fn t(s: &str) -> Option<&str> {
            trailing_tag(s.as_bytes(), "kind")
        }
        assert_eq!(t(r#"{"id":"x","kind":"PauseEvent"}"#), Some("PauseEvent"));
        assert_eq!(t("{ \"kind\" : \"A_1\" }\n"), Some("A_1"));
        assert_eq!(t(r#"{"kind":"A"}"#), Some("A"));
        assert_eq!(t(r#"{"a":{"kind":"Inner"}}"#), None);
        assert_eq!(t(r#"{"a":"\"kind\":\"X\"}"#), None);
        assert_eq!(t(r#"{"a":"x","xkind":"A"}"#), None);
        assert_eq!(t(r#"{"a":"x","kind":"A B"}"#), None);
        assert_eq!(t(r#"{"a":"x","kind":""}"#), None);
        assert_eq!(t(r#"["kind","A"]"#), None);
        assert_eq!(t(""), None);
    }
}

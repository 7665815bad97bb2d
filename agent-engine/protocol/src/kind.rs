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


//! Content blocks: what tool results, prompt messages and sampling messages carry.

use serde::{Deserialize, Serialize};

use super::{Annotations, Icon, JsonObject};

/// One block of content.
///
/// A block whose `type` this crate does not know decodes to
/// [`ContentBlock::Unknown`] holding the JSON, instead of failing the message.
///
/// Decoding takes a fast path when `type` is the block's first member (what
/// servers send): the rest of the object is decoded straight into the
/// variant's struct, with no intermediate buffering of the (possibly
/// megabyte-sized) text or data. Otherwise the block is buffered and decoded
/// by tag as usual.
///
/// A block costs 88 bytes (the rare, large variants and every block's
/// annotations are boxed), against 26 bytes for the smallest text block on
/// the wire: a result of many tiny blocks costs a small multiple of its size
/// (296 bytes a block unboxed: a 15 MiB result of 600,000 empty text blocks
/// took 190 MiB).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text.
    Text(TextContent),
    /// A base64 image.
    Image(ImageContent),
    /// Base64 audio (2025-03-26+).
    Audio(AudioContent),
    /// A link to a resource the client may read (2025-06-18+).
    ResourceLink(Box<ResourceLink>),
    /// A resource embedded in the result.
    Resource(Box<EmbeddedResource>),
    /// A tool use request in a sampling message (2025-11-25+).
    ToolUse(Box<ToolUseContent>),
    /// A tool result in a sampling message (2025-11-25+).
    ToolResult(Box<ToolResultContent>),
    /// A block of a kind this crate does not know, kept as JSON text
    /// (`type` included).
    #[serde(untagged)]
    Unknown(crate::RawObject),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// Text content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<Annotations>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::RawObject>,
}

impl TextContent {
    /// Text content with no annotations.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// Image content (base64).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ImageContent {
    /// Base64-encoded image data.
    pub data: String,
    /// MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<Annotations>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::RawObject>,
}

/// Audio content (base64).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AudioContent {
    /// Base64-encoded audio data.
    pub data: String,
    /// MIME type, e.g. `audio/wav`.
    pub mime_type: String,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<Annotations>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::RawObject>,
}

/// A resource the server can read: a `resources/list` entry, or a `resource_link` block.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<Annotations>>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::RawObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: crate::RawObject,
}

decode_keeping_unknown_raw!(Resource "a resource object" {
    required { uri: "uri", name: "name" }
    optional {
        title: "title",
        description: "description",
        mime_type: "mimeType",
        size: "size",
        annotations: "annotations",
        icons: "icons",
        meta: "_meta",
    }
});

/// A `resource_link` block: the same fields as a [`Resource`].
pub type ResourceLink = Resource;

/// A resource embedded in content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// The resource's contents.
    pub resource: ResourceContents,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<Annotations>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::RawObject>,
}

/// The contents of a resource: text or a base64 blob.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents (a `TextResourceContents`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 contents (a `BlobResourceContents`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::RawObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: crate::RawObject,
}

decode_keeping_unknown_raw!(ResourceContents "a resource contents object" {
    required { uri: "uri" }
    optional { mime_type: "mimeType", text: "text", blob: "blob", meta: "_meta" }
});

/// A model's request to use a tool, inside a sampling message (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolUseContent {
    /// Unique id of this tool use.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Arguments.
    pub input: JsonObject,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::RawObject>,
}

/// The result of a tool use, inside a sampling message (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolResultContent {
    /// The id of the tool use this answers.
    pub tool_use_id: String,
    /// The result's content.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// Structured result, kept as its JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<crate::RawJson>,
    /// Whether the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::RawObject>,
}

/// A string that borrows from the input when it can.
pub(crate) enum MaybeBorrowed<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl MaybeBorrowed<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            MaybeBorrowed::Borrowed(s) => s,
            MaybeBorrowed::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for MaybeBorrowed<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = MaybeBorrowed<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                v: &'de str,
            ) -> Result<Self::Value, E> {
                Ok(MaybeBorrowed::Borrowed(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(MaybeBorrowed::Owned(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(MaybeBorrowed::Owned(v))
            }
        }
        d.deserialize_str(V)
    }
}

/// The members of a text block after its `type`: what the derived
/// `TextContent` decoder accepts (unknown members ignored, a repeated one an
/// error), read straight from the block's map.
fn text_rest<'de, A: serde::de::MapAccess<'de>>(mut map: A) -> Result<TextContent, A::Error> {
    use serde::de::Error;
    let mut text: Option<String> = None;
    let mut annotations: Option<Option<Box<Annotations>>> = None;
    let mut meta: Option<Option<crate::RawObject>> = None;
    while let Some(key) = map.next_key::<MaybeBorrowed<'de>>()? {
        match key.as_str() {
            "text" if text.is_some() => return Err(A::Error::duplicate_field("text")),
            "text" => text = Some(map.next_value()?),
            "annotations" if annotations.is_some() => {
                return Err(A::Error::duplicate_field("annotations"));
            }
            "annotations" => annotations = Some(map.next_value()?),
            "_meta" if meta.is_some() => return Err(A::Error::duplicate_field("_meta")),
            "_meta" => meta = Some(map.next_value()?),
            _ => {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
    }
    Ok(TextContent {
        text: text.ok_or_else(|| A::Error::missing_field("text"))?,
        annotations: annotations.flatten(),
        meta: meta.flatten(),
    })
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct BlockVisitor;
        impl<'de> serde::de::Visitor<'de> for BlockVisitor {
            type Value = ContentBlock;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a content block object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<ContentBlock, A::Error> {
                use serde::de::value::MapAccessDeserializer;
                let Some(first) = map.next_key::<MaybeBorrowed<'de>>()? else {
                    return Err(serde::de::Error::missing_field("type"));
                };
                if first.as_str() != "type" {
                    // Slow path: keep the members raw (about their size on
                    // the wire, never a `Value` tree), then decode the
                    // block they make by its tag.
                    let mut rest = crate::RawObject::new();
                    let mut tag: Option<String> = None;
                    let mut key = Some(first);
                    while let Some(k) = key {
                        if k.as_str() == "type" && tag.is_none() {
                            tag = Some(map.next_value()?);
                        } else {
                            rest.push_next(k.as_str(), &mut map)?;
                        }
                        key = map.next_key::<MaybeBorrowed<'de>>()?;
                    }
                    rest.shrink();
                    let Some(tag) = tag else {
                        // No type at all: a block of a kind unknown.
                        return Ok(ContentBlock::Unknown(rest));
                    };
                    let json = rest.as_str();
                    let block =
                        match tag.as_str() {
                            "text" => serde_json::from_str(json).map(ContentBlock::Text),
                            "image" => serde_json::from_str(json).map(ContentBlock::Image),
                            "audio" => serde_json::from_str(json).map(ContentBlock::Audio),
                            "resource_link" => serde_json::from_str(json)
                                .map(|b| ContentBlock::ResourceLink(Box::new(b))),
                            "resource" => serde_json::from_str(json)
                                .map(|b| ContentBlock::Resource(Box::new(b))),
                            "tool_use" => serde_json::from_str(json)
                                .map(|b| ContentBlock::ToolUse(Box::new(b))),
                            "tool_result" => serde_json::from_str(json)
                                .map(|b| ContentBlock::ToolResult(Box::new(b))),
                            _ => {
                                let mut unknown = crate::RawObject::new();
                                unknown.push("type", &String::from_utf8_lossy(&quoted(&tag)));
                                for (k, v) in rest.members() {
                                    unknown.push(&k, v);
                                }
                                return Ok(ContentBlock::Unknown(unknown));
                            }
                        };
                    return block.map_err(serde::de::Error::custom);
                }
                let tag = map.next_value::<MaybeBorrowed<'de>>()?;
                if tag.as_str() == "text" {
                    // The hot path of every text result: its members read
                    // here, without the derive's extra map adapter.
                    return text_rest(map).map(ContentBlock::Text);
                }
                const KNOWN: [&str; 6] = [
                    "image",
                    "audio",
                    "resource_link",
                    "resource",
                    "tool_use",
                    "tool_result",
                ];
                if !KNOWN.contains(&tag.as_str()) {
                    let mut unknown = crate::RawObject::new();
                    unknown.push("type", &String::from_utf8_lossy(&quoted(tag.as_str())));
                    while let Some(k) = map.next_key::<MaybeBorrowed<'de>>()? {
                        unknown.push_next(k.as_str(), &mut map)?;
                    }
                    unknown.shrink();
                    return Ok(ContentBlock::Unknown(unknown));
                }
                let rest = MapAccessDeserializer::new(map);
                Ok(match tag.as_str() {
                    "image" => ContentBlock::Image(ImageContent::deserialize(rest)?),
                    "audio" => ContentBlock::Audio(AudioContent::deserialize(rest)?),
                    "resource_link" => {
                        ContentBlock::ResourceLink(Box::new(Resource::deserialize(rest)?))
                    }
                    "resource" => {
                        ContentBlock::Resource(Box::new(EmbeddedResource::deserialize(rest)?))
                    }
                    "tool_use" => {
                        ContentBlock::ToolUse(Box::new(ToolUseContent::deserialize(rest)?))
                    }
                    _ => ContentBlock::ToolResult(Box::new(ToolResultContent::deserialize(rest)?)),
                })
            }
        }
        d.deserialize_map(BlockVisitor)
    }
}

/// `s` as a JSON string.
fn quoted(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 2);
    crate::raw::compact::write_str(&mut out, s);
    out
}

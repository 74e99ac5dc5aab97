//! Protocol revisions, their era, and what each one has.
//!
//! Code asks "does this version have X" ([`ProtocolVersion::has`]) rather
//! than comparing dates, so a feature that a later revision removes (such as
//! `ping` or `logging/setLevel` in 2026-07-28) is answered correctly.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A protocol revision this crate speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05: the first revision; HTTP+SSE transport.
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, audio, tool annotations, completions capability.
    V2025_03_26,
    /// 2025-06-18: structured content, output schemas, elicitation, resource links, titles.
    V2025_06_18,
    /// 2025-11-25: icons, URL elicitation, sampling with tools, tasks (experimental).
    V2025_11_25,
    /// 2026-07-28: stateless; `server/discover`, per-request `_meta`, MRTR, `subscriptions/listen`.
    V2026_07_28,
}

/// How a revision establishes what it speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// `initialize` handshake, then a session (2024-11-05 … 2025-11-25).
    Legacy,
    /// Stateless: every request carries version, capabilities and client info
    /// in `_meta` (2026-07-28 and later).
    Modern,
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        })
    }
}

/// A protocol feature whose presence depends on the revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Feature {
    /// The `initialize` / `notifications/initialized` handshake.
    InitializeHandshake,
    /// `server/discover`.
    ServerDiscover,
    /// Per-request `_meta` protocol fields (`io.modelcontextprotocol/*`).
    RequestMeta,
    /// `resultType` on every result.
    ResultType,
    /// Multi round-trip requests (`InputRequiredResult`) instead of server-to-client requests.
    InputRequired,
    /// Server-to-client JSON-RPC requests (sampling, elicitation, roots, ping).
    ServerRequests,
    /// `ping` requests.
    Ping,
    /// `logging/setLevel` (2026-07-28 uses the `io.modelcontextprotocol/logLevel` `_meta` key).
    SetLogLevel,
    /// `resources/subscribe` and `resources/unsubscribe`.
    ResourceSubscribe,
    /// `subscriptions/listen`.
    SubscriptionsListen,
    /// `notifications/roots/list_changed`.
    RootsListChanged,
    /// The Streamable HTTP transport (otherwise HTTP+SSE).
    StreamableHttp,
    /// The `Mcp-Session-Id` header and protocol-level sessions.
    HttpSession,
    /// The `MCP-Protocol-Version` HTTP header.
    ProtocolVersionHeader,
    /// `Mcp-Method` / `Mcp-Name` / `Mcp-Param-*` HTTP headers.
    RequestHeaders,
    /// SSE resumption with `Last-Event-ID`.
    SseResumption,
    /// Audio content blocks.
    AudioContent,
    /// Tool annotations (`readOnlyHint`, …).
    ToolAnnotations,
    /// The `completions` server capability.
    CompletionsCapability,
    /// `structuredContent` and `outputSchema` on tools.
    StructuredContent,
    /// `resource_link` content blocks.
    ResourceLinks,
    /// `elicitation/create` (form mode).
    Elicitation,
    /// URL-mode elicitation.
    UrlElicitation,
    /// `title` on tools, prompts, resources and implementations.
    Titles,
    /// `icons`.
    Icons,
    /// Tools in `sampling/createMessage`.
    SamplingTools,
    /// JSON-RPC batching (2025-03-26 only).
    Batching,
    /// `ttlMs` / `cacheScope` caching hints.
    CachingHints,
    /// `notifications/elicitation/complete` (2025-11-25 only).
    ElicitationComplete,
}

impl ProtocolVersion {
    /// Every revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The newest revision.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The newest legacy (`initialize`) revision.
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The revision's date string, as on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a wire version string; `None` for a revision this crate does not know.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The era of this revision.
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2026_07_28 => Era::Modern,
            _ => Era::Legacy,
        }
    }

    /// Whether this revision has `feature`.
    pub const fn has(self, feature: Feature) -> bool {
        use Feature as F;
        use ProtocolVersion as V;
        let modern = matches!(self.era(), Era::Modern);
        match feature {
            F::InitializeHandshake
            | F::ServerRequests
            | F::Ping
            | F::SetLogLevel
            | F::ResourceSubscribe
            | F::RootsListChanged
            | F::HttpSession => !modern,
            F::ServerDiscover
            | F::RequestMeta
            | F::ResultType
            | F::InputRequired
            | F::SubscriptionsListen
            | F::RequestHeaders
            | F::CachingHints => modern,
            F::StreamableHttp | F::AudioContent | F::ToolAnnotations | F::CompletionsCapability => {
                !matches!(self, V::V2024_11_05)
            }
            F::Batching => matches!(self, V::V2025_03_26),
            F::ProtocolVersionHeader
            | F::StructuredContent
            | F::ResourceLinks
            | F::Elicitation
            | F::Titles => matches!(self, V::V2025_06_18 | V::V2025_11_25 | V::V2026_07_28),
            F::SseResumption => matches!(self, V::V2025_03_26 | V::V2025_06_18 | V::V2025_11_25),
            F::UrlElicitation | F::Icons | F::SamplingTools => {
                matches!(self, V::V2025_11_25 | V::V2026_07_28)
            }
            F::ElicitationComplete => matches!(self, V::V2025_11_25),
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A version string that is not one of the five known revisions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown MCP protocol version {0:?} (known: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)"
)]
pub struct UnknownVersion(pub String);

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_round_trips_every_revision() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
            assert_eq!(v.to_string().parse::<ProtocolVersion>(), Ok(v));
        }
        assert_eq!(ProtocolVersion::parse("1900-01-01"), None);
        assert!("2025-13-01".parse::<ProtocolVersion>().is_err());
    }

    #[test]
    fn eras_and_features() {
        assert_eq!(ProtocolVersion::V2025_11_25.era(), Era::Legacy);
        assert_eq!(ProtocolVersion::V2026_07_28.era(), Era::Modern);
        assert!(ProtocolVersion::V2025_11_25.has(Feature::Ping));
        assert!(!ProtocolVersion::V2026_07_28.has(Feature::Ping));
        assert!(!ProtocolVersion::V2024_11_05.has(Feature::StreamableHttp));
        assert!(ProtocolVersion::V2025_06_18.has(Feature::StructuredContent));
        assert!(!ProtocolVersion::V2025_03_26.has(Feature::StructuredContent));
        assert!(ProtocolVersion::V2025_03_26.has(Feature::Batching));
        assert!(!ProtocolVersion::V2025_06_18.has(Feature::Batching));
        assert!(ProtocolVersion::V2026_07_28.has(Feature::InputRequired));
        assert!(!ProtocolVersion::V2026_07_28.has(Feature::SseResumption));
    }
}

//! Era negotiation: the phase the session is in (one enum that carries what
//! each phase knows), the `server/discover` probe, the `initialize`
//! fallback, and what the server turned out to be.
//!
//! The decisions are functions of the configuration, the phase's data and
//! the server's answer, returning a [`Step`] that the session takes (sends
//! a probe or `initialize`, becomes ready, fails): no state here changes
//! behind the session's back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_proto::error::ErrorCode;
use mcp_proto::jsonrpc::RequestId;
use mcp_proto::schema::{DiscoverResult, Implementation, InitializeResult, ServerCapabilities};
use mcp_proto::{Era, ErrorObject, ProtocolVersion, RawJson};

use super::{SessionConfig, VersionChoice};
use crate::error::{CloseReason, HandshakeError};

/// What the server is, once negotiated.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerInfo {
    /// The negotiated revision.
    pub protocol_version: ProtocolVersion,
    /// The server's identity (2026-07-28: from `_meta` of `server/discover`; may be a placeholder
    /// if the server sent none).
    pub implementation: Implementation,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    pub instructions: Option<String>,
    /// Versions the server said it supports (2026-07-28 `supportedVersions`).
    pub supported_versions: Vec<String>,
    /// The handshake result exactly as the server sent it (the `initialize`
    /// result, or the `server/discover` result).
    pub raw: RawJson,
}

impl ServerInfo {
    /// The era of the negotiated revision.
    pub fn era(&self) -> Era {
        self.protocol_version.era()
    }
}

/// Where the session is, with what that phase knows.
#[derive(Debug)]
pub(super) enum Phase {
    /// Not started (before the first `start`).
    Idle,
    /// `server/discover` is out.
    Probing(Retries),
    /// `initialize` is out.
    Initializing {
        offered: ProtocolVersion,
        /// The legacy era was found by detection (a failed probe or a
        /// remembered legacy era), not only chosen by the caller: only then
        /// is it worth remembering.
        detected: bool,
        /// The `server/discover` probe that timed out and fell back to this
        /// `initialize`: its late answer still counts (see
        /// [`Session::handle_message`](super::Session::handle_message)).
        late_probe: Option<RequestId>,
        retries: Retries,
    },
    /// Negotiated: requests go out.
    Ready(Readiness),
    Closed(CloseReason),
}

/// What one handshake already did again, each at most once, so that a
/// server that rejects what it lists cannot make the client loop.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Retries {
    /// The probe went out again after an `UnsupportedProtocolVersion`
    /// rejection listing a revision we speak.
    probe: bool,
    /// The fallback `initialize` was refused as "serving 2026-07-28" and the
    /// probe went out again.
    reprobe: bool,
}

/// Whether the owner was told the session is ready ([`Event::Ready`](super::Event::Ready)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Readiness {
    /// Not yet: [`Event::Ready`](super::Event::Ready) waits until the
    /// transport has flushed what the handshake queued (the legacy
    /// `notifications/initialized`; see
    /// [`Session::handle_flushed`](super::Session::handle_flushed)).
    Flushing,
    /// [`Event::Ready`](super::Event::Ready) was emitted.
    Announced,
}

/// What the session does next in the handshake.
#[derive(Debug)]
pub(super) enum Step {
    /// Send `server/discover` with this revision.
    Probe(ProtocolVersion, Retries),
    /// Send `initialize` offering this revision.
    Initialize {
        offered: ProtocolVersion,
        detected: bool,
        late_probe: Option<RequestId>,
        retries: Retries,
    },
    /// Ready in the modern era, with what `server/discover` said and until
    /// when that answer is fresh (its `ttlMs`).
    Modern {
        server: ServerInfo,
        fresh_until: Option<Instant>,
    },
    /// Ready in a legacy era (`notifications/initialized` goes out first).
    Legacy { server: ServerInfo, detected: bool },
    /// The handshake failed: a remembered legacy era is detected again,
    /// otherwise the connection closes.
    Failed(HandshakeError),
    /// The connection closes.
    Close(CloseReason),
}

/// Detects the era from scratch, as [`VersionChoice`] says.
pub(super) fn detect(config: &SessionConfig) -> Step {
    let retries = Retries::default();
    match config.version {
        VersionChoice::Auto | VersionChoice::Era(Era::Modern) => {
            Step::Probe(ProtocolVersion::LATEST, retries)
        }
        VersionChoice::Pinned(v) if v.era() == Era::Modern => Step::Probe(v, retries),
        VersionChoice::Pinned(v) => initialize(v, false, retries),
        VersionChoice::Era(_) => initialize(ProtocolVersion::LATEST_LEGACY, false, retries),
    }
}

fn initialize(offered: ProtocolVersion, detected: bool, retries: Retries) -> Step {
    Step::Initialize {
        offered,
        detected,
        late_probe: None,
        retries,
    }
}

/// How long the probe waits: with [`VersionChoice::Auto`] there is a
/// fallback, so it waits the probe timeout; otherwise the probe is the
/// handshake.
pub(super) fn probe_timeout(config: &SessionConfig) -> Duration {
    match config.version {
        VersionChoice::Auto => config.probe_timeout,
        _ => config.handshake_timeout,
    }
}

/// [`InitializeParams`](mcp_proto::schema::InitializeParams) by reference: encodes to the same JSON (no `_meta`).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParamsRef<'a> {
    protocol_version: &'a str,
    capabilities: &'a mcp_proto::schema::ClientCapabilities,
    client_info: &'a Implementation,
}

/// The params of `initialize` offering `v`, encoded from the configuration
/// in place (`InitializeParams` owns its members: building one would copy
/// the capabilities and identity only to drop them once encoded).
pub(super) fn initialize_params(
    config: &SessionConfig,
    v: ProtocolVersion,
) -> Result<RawJson, HandshakeError> {
    let params = InitializeParamsRef {
        protocol_version: v.as_str(),
        capabilities: &config.capabilities,
        client_info: &config.client_info,
    };
    RawJson::from_value(&params).map_err(|e| HandshakeError::Encode {
        method: "initialize",
        source: Arc::new(e),
    })
}

/// `server/discover` failed as `cause` says, in a way a legacy server's
/// would (and, when it timed out, `late_probe` may still answer).
pub(super) fn probe_failed(
    config: &SessionConfig,
    retries: Retries,
    cause: HandshakeError,
    late_probe: Option<RequestId>,
) -> Step {
    match config.version {
        VersionChoice::Auto => Step::Initialize {
            offered: ProtocolVersion::LATEST_LEGACY,
            detected: true,
            late_probe,
            retries,
        },
        _ => Step::Close(CloseReason::Handshake(HandshakeError::NotModern {
            cause: Arc::new(cause),
        })),
    }
}

/// The probe was answered.
pub(super) fn probe_answered(
    config: &SessionConfig,
    retries: Retries,
    result: Result<RawJson, ErrorObject>,
    now: Instant,
) -> Step {
    let preferred = match config.version {
        VersionChoice::Pinned(v) => v,
        _ => ProtocolVersion::LATEST,
    };
    match result {
        Ok(raw) => match serde_json::from_str::<DiscoverResult>(raw.get()) {
            Ok(d) => {
                let ours: Vec<ProtocolVersion> = d
                    .supported_versions
                    .iter()
                    .filter_map(|s| ProtocolVersion::parse(s))
                    .collect();
                let modern = ours
                    .iter()
                    .copied()
                    .filter(|v| v.era() == Era::Modern)
                    .max();
                let choice = match config.version {
                    VersionChoice::Pinned(v) => ours.contains(&v).then_some(v),
                    _ => modern,
                };
                let Some(v) = choice else {
                    return no_common_modern_version(
                        config,
                        retries,
                        preferred,
                        d.supported_versions,
                    );
                };
                let implementation = d
                    .server_info()
                    .unwrap_or_else(|| Implementation::new("unknown", "unknown"));
                let fresh_until = d
                    .ttl_ms
                    .filter(|&ms| ms > 0)
                    .and_then(|ms| now.checked_add(Duration::from_millis(ms)));
                let server = ServerInfo {
                    protocol_version: v,
                    implementation,
                    capabilities: d.capabilities,
                    instructions: d.instructions,
                    supported_versions: d.supported_versions,
                    // Decoded in place, then kept whole: moved.
                    raw,
                };
                Step::Modern {
                    server,
                    fresh_until,
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "server/discover answered with something that is not a DiscoverResult; treating the server as legacy");
                let cause = HandshakeError::InvalidResult {
                    method: "server/discover",
                    source: Arc::new(e),
                };
                probe_failed(config, retries, cause, None)
            }
        },
        Err(e) if e.code.is_modern_only() => {
            let supported = e
                .unsupported_protocol_version()
                .map(|d| d.supported)
                .unwrap_or_default();
            if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
                no_common_modern_version(config, retries, preferred, supported)
            } else {
                // A modern server that rejected the probe for another modern reason.
                Step::Close(CloseReason::Handshake(HandshakeError::Rejected {
                    method: "server/discover",
                    error: e,
                }))
            }
        }
        Err(e) => {
            tracing::debug!(error = %e, "server/discover failed; treating the server as legacy");
            let cause = HandshakeError::Rejected {
                method: "server/discover",
                error: e,
            };
            probe_failed(config, retries, cause, None)
        }
    }
}

/// A modern server that does not support our modern version(s).
fn no_common_modern_version(
    config: &SessionConfig,
    retries: Retries,
    offered: ProtocolVersion,
    supported: Vec<String>,
) -> Step {
    let ours: Vec<ProtocolVersion> = supported
        .iter()
        .filter_map(|s| ProtocolVersion::parse(s))
        .collect();
    let newest_modern = ours
        .iter()
        .copied()
        .filter(|v| v.era() == Era::Modern)
        .max();
    // SEP-2575: retry once with a supported version that satisfies the
    // choice (the same one too: the rejection may have been transient).
    let retry = match config.version {
        VersionChoice::Auto | VersionChoice::Era(Era::Modern) => newest_modern,
        VersionChoice::Pinned(v) => ours.contains(&v).then_some(v),
        VersionChoice::Era(_) => None,
    };
    if let Some(v) = retry
        && v.era() == Era::Modern
        && !retries.probe
    {
        return Step::Probe(
            v,
            Retries {
                probe: true,
                ..retries
            },
        );
    }
    if config.version == VersionChoice::Auto {
        if let Some(v) = ours
            .iter()
            .copied()
            .filter(|v| v.era() == Era::Legacy)
            .max()
        {
            // A dual-era server whose only common revision is a legacy one.
            return initialize(v, false, retries);
        }
    }
    Step::Close(CloseReason::Handshake(HandshakeError::UnsupportedVersion {
        requested: offered.to_string(),
        supported,
    }))
}

/// `initialize`, offering `offered`, was answered.
pub(super) fn initialize_answered(
    config: &SessionConfig,
    offered: ProtocolVersion,
    detected: bool,
    retries: Retries,
    result: Result<RawJson, ErrorObject>,
) -> Step {
    // The answer is decoded in place and then kept whole (as
    // `ServerInfo::raw`): moved, not copied.
    let (r, raw) = match result {
        Ok(raw) => match serde_json::from_str::<InitializeResult>(raw.get()) {
            Ok(r) => (r, raw),
            Err(e) => {
                return Step::Failed(HandshakeError::InvalidResult {
                    method: "initialize",
                    source: Arc::new(e),
                });
            }
        },
        Err(e) => {
            if let Some(v) = modern_refusal(config, retries, &e) {
                tracing::info!(version = %v, "the server refused the fallback initialize as serving the 2026-07-28 protocol; probing again");
                return Step::Probe(
                    v,
                    Retries {
                        reprobe: true,
                        ..retries
                    },
                );
            }
            return Step::Failed(HandshakeError::Rejected {
                method: "initialize",
                error: e,
            });
        }
    };
    let got = ProtocolVersion::parse(&r.protocol_version).filter(|v| v.era() == Era::Legacy);
    let acceptable = match (config.version, got) {
        (_, None) => None,
        (VersionChoice::Pinned(p), Some(g)) => (p == g).then_some(g),
        (_, Some(g)) => Some(g),
    };
    let Some(v) = acceptable else {
        return Step::Failed(HandshakeError::UnsupportedVersion {
            requested: offered.to_string(),
            supported: vec![r.protocol_version],
        });
    };
    let server = ServerInfo {
        protocol_version: v,
        implementation: r.server_info,
        capabilities: r.capabilities,
        instructions: r.instructions,
        supported_versions: vec![v.to_string()],
        raw,
    };
    Step::Legacy { server, detected }
}

/// A `server/discover` answer that arrived after the probe timed out and
/// `initialize` went out instead. A slow server (a Python SDK server
/// starting on a loaded machine takes 4–6 s) has then already locked the
/// connection to the 2026-07-28 protocol and will refuse `initialize` with
/// -32022, so a valid `DiscoverResult` wins while `initialize` is still
/// unanswered: the session becomes ready in the modern era and the
/// `initialize` answer, when it comes, is dropped. An error answer is
/// ignored (the fallback goes on), as is any answer once `initialize` was
/// answered: the legacy session is already in use. The common legacy case
/// waits no longer than before.
pub(super) fn late_probe_wins(result: &Result<RawJson, ErrorObject>) -> bool {
    let Ok(raw) = result else {
        return false;
    };
    if serde_json::from_str::<DiscoverResult>(raw.get()).is_err() {
        tracing::debug!("a late server/discover answer that is not a DiscoverResult; ignored");
        return false;
    }
    tracing::info!(
        "server/discover was answered after the probe timeout; using the 2026-07-28 protocol"
    );
    true
}

/// The modern revision to probe again with when the fallback `initialize`
/// was refused with -32022 by a server naming a modern revision we speak:
/// it is serving 2026-07-28 (it answered a probe we had given up on). The
/// Python SDK's own client does the same ("one corrective re-probe"). Only
/// with [`VersionChoice::Auto`], only once per handshake.
fn modern_refusal(
    config: &SessionConfig,
    retries: Retries,
    e: &ErrorObject,
) -> Option<ProtocolVersion> {
    if config.version != VersionChoice::Auto
        || retries.reprobe
        || e.code != ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
    {
        return None;
    }
    // Only `supported` matters (`requested` may be absent).
    #[derive(serde::Deserialize)]
    struct Supported {
        supported: Vec<serde_json::Value>,
    }
    e.data_as::<Supported>()?
        .ok()?
        .supported
        .iter()
        .filter_map(|s| ProtocolVersion::parse(s.as_str()?))
        .filter(|v| v.era() == Era::Modern)
        .max()
}

//! Era negotiation: the `server/discover` probe, the `initialize`
//! fallback, and what the server turned out to be.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_proto::error::ErrorCode;
use mcp_proto::jsonrpc::{Notification, Request};
use mcp_proto::schema::{DiscoverResult, Implementation, InitializeResult, ServerCapabilities};
use mcp_proto::{Era, ErrorObject, ProtocolVersion, RawJson};

use super::calls::{Pending, Purpose};
use super::core::{Phase, Readiness};
use super::era::HintState;
use super::wire::{MetaParts, compose_params, empty_object};
use super::{CallOptions, EraHint, Event, Session, Transmit, VersionChoice};
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

/// [`InitializeParams`](mcp_proto::schema::InitializeParams) by reference: encodes to the same JSON (no `_meta`).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParamsRef<'a> {
    protocol_version: &'a str,
    capabilities: &'a mcp_proto::schema::ClientCapabilities,
    client_info: &'a Implementation,
}

impl Session {
    /// Detects the era from scratch, as [`VersionChoice`] says.
    pub(super) fn detect(&mut self, now: Instant) {
        match self.config.version {
            VersionChoice::Auto | VersionChoice::Era(Era::Modern) => {
                self.send_probe(ProtocolVersion::LATEST, now);
            }
            VersionChoice::Pinned(v) if v.era() == Era::Modern => self.send_probe(v, now),
            VersionChoice::Pinned(v) => self.send_initialize(v, now),
            VersionChoice::Era(_) => self.send_initialize(ProtocolVersion::LATEST_LEGACY, now),
        }
    }

    pub(super) fn send_probe(&mut self, v: ProtocolVersion, now: Instant) {
        self.phase = Phase::Probing;
        self.modern_meta = self.build_modern_meta(v);
        self.transmit.push_back(Transmit::ProtocolVersion(v));
        let id = self.alloc_id();
        let deadline = now
            + match self.config.version {
                VersionChoice::Auto => self.config.probe_timeout,
                _ => self.config.handshake_timeout,
            };
        self.note_deadline(Some(deadline));
        let mut trace = self.telemetry.start_handshake("server/discover");
        if let Some(t) = &mut trace {
            t.sent(&id, Some(v));
        }
        let params = compose_params(
            None,
            &MetaParts {
                protocol: self.modern_meta.as_ref(),
                progress_token: None,
                caller: None,
                trace: trace.as_ref().and_then(|t| t.trace_meta()),
            },
        )
        .unwrap_or_else(empty_object);
        self.transmit.push_back(Transmit::Message(
            Request::new(id.clone(), "server/discover", Some(params)).into(),
        ));
        self.pending.insert(
            id,
            Pending {
                purpose: Purpose::Probe,
                method: Cow::Borrowed("server/discover"),
                params: None,
                retained: false,
                options: CallOptions::default(),
                started: now,
                deadline: Some(deadline),
                hard_deadline: None,
                rounds: 0,
                resent: false,
                progress_token: None,
                meta: None,
                hinted: false,
                trace,
            },
        );
    }

    pub(super) fn send_initialize(&mut self, v: ProtocolVersion, now: Instant) {
        self.phase = Phase::Initializing { offered: v };
        // Encoded from the configuration in place: `InitializeParams` owns
        // its members, and building one would copy the capabilities and
        // identity only to drop them once encoded.
        let params = InitializeParamsRef {
            protocol_version: v.as_str(),
            capabilities: &self.config.capabilities,
            client_info: &self.config.client_info,
        };
        let raw = match RawJson::from_value(&params) {
            Ok(r) => r,
            Err(e) => {
                self.handle_closed(CloseReason::Handshake(HandshakeError::Encode {
                    method: "initialize",
                    source: Arc::new(e),
                }));
                return;
            }
        };
        let id = self.alloc_id();
        let mut trace = self.telemetry.start_handshake("initialize");
        if let Some(t) = &mut trace {
            t.sent(&id, Some(v));
        }
        let trace_meta = trace.as_ref().and_then(|t| t.trace_meta());
        let raw = match trace_meta {
            Some(_) => compose_params(
                Some(&raw),
                &MetaParts {
                    protocol: None,
                    progress_token: None,
                    caller: None,
                    trace: trace_meta,
                },
            )
            .unwrap_or(raw),
            None => raw,
        };
        self.transmit.push_back(Transmit::Message(
            Request::new(id.clone(), "initialize", Some(raw)).into(),
        ));
        let deadline = now + self.config.handshake_timeout;
        self.note_deadline(Some(deadline));
        self.pending.insert(
            id,
            Pending {
                purpose: Purpose::Initialize,
                method: Cow::Borrowed("initialize"),
                params: None,
                retained: false,
                options: CallOptions::default(),
                started: now,
                deadline: Some(deadline),
                hard_deadline: None,
                rounds: 0,
                resent: false,
                progress_token: None,
                meta: None,
                hinted: false,
                trace,
            },
        );
    }

    /// `server/discover` failed as `cause` says, in a way a legacy server's would.
    pub(super) fn probe_failed(&mut self, cause: HandshakeError, now: Instant) {
        match self.config.version {
            VersionChoice::Auto => {
                self.legacy_detected = true;
                self.send_initialize(ProtocolVersion::LATEST_LEGACY, now);
            }
            _ => self.handle_closed(CloseReason::Handshake(HandshakeError::NotModern {
                cause: Arc::new(cause),
            })),
        }
    }

    pub(super) fn become_ready(&mut self, info: Arc<ServerInfo>, now: Instant) {
        let v = info.protocol_version;
        self.modern_meta = if v.era() == Era::Modern {
            self.build_modern_meta(v)
        } else {
            // Built for the `server/discover` probe; a legacy session never
            // sends it again (a probe sent later builds it anew).
            None
        };
        self.transmit.push_back(Transmit::ProtocolVersion(v));
        self.telemetry.ready(v);
        self.server = Some(info);
        if self.hint != HintState::Unconfirmed {
            self.hint = HintState::None;
        }
        // What the handshake queued (the legacy `notifications/initialized`)
        // must reach the server before the session counts as ready.
        let handshake_sent = self
            .transmit
            .iter()
            .all(|t| matches!(t, Transmit::ProtocolVersion(_)));
        let readiness = if handshake_sent {
            self.events.push_back(Event::Ready);
            Readiness::Announced
        } else {
            Readiness::Flushing
        };
        self.phase = Phase::Ready(readiness);
        while let Some(d) = self.queued.pop_front() {
            self.send_user(d, None, None, now);
        }
    }

    pub(super) fn on_probe_response(&mut self, result: Result<RawJson, ErrorObject>, now: Instant) {
        let preferred = match self.config.version {
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
                    let choice = match self.config.version {
                        VersionChoice::Pinned(v) => ours.contains(&v).then_some(v),
                        _ => modern,
                    };
                    match choice {
                        Some(v) => {
                            let implementation = d
                                .server_info()
                                .unwrap_or_else(|| Implementation::new("unknown", "unknown"));
                            let info = ServerInfo {
                                protocol_version: v,
                                implementation,
                                capabilities: d.capabilities,
                                instructions: d.instructions,
                                supported_versions: d.supported_versions,
                                // Decoded in place, then kept whole: moved.
                                raw,
                            };
                            let fresh_until = d
                                .ttl_ms
                                .filter(|&ms| ms > 0)
                                .and_then(|ms| now.checked_add(Duration::from_millis(ms)));
                            let info = Arc::new(info);
                            self.learned = Some(EraHint::Modern {
                                server: info.clone(),
                                fresh_until,
                            });
                            self.become_ready(info, now);
                        }
                        None => self.no_common_modern_version(preferred, d.supported_versions, now),
                    }
                }
                Err(e) => {
                    tracing::debug!(error = %e, "server/discover answered with something that is not a DiscoverResult; treating the server as legacy");
                    self.probe_failed(
                        HandshakeError::InvalidResult {
                            method: "server/discover",
                            source: Arc::new(e),
                        },
                        now,
                    );
                }
            },
            Err(e) if e.code.is_modern_only() => {
                let supported = e
                    .unsupported_protocol_version()
                    .map(|d| d.supported)
                    .unwrap_or_default();
                if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
                    self.no_common_modern_version(preferred, supported, now);
                } else {
                    // A modern server that rejected the probe for another modern reason.
                    self.handle_closed(CloseReason::Handshake(HandshakeError::Rejected {
                        method: "server/discover",
                        error: e,
                    }));
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "server/discover failed; treating the server as legacy");
                self.probe_failed(
                    HandshakeError::Rejected {
                        method: "server/discover",
                        error: e,
                    },
                    now,
                );
            }
        }
    }

    /// A modern server that does not support our modern version(s).
    fn no_common_modern_version(
        &mut self,
        offered: ProtocolVersion,
        supported: Vec<String>,
        now: Instant,
    ) {
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
        let retry = match self.config.version {
            VersionChoice::Auto | VersionChoice::Era(Era::Modern) => newest_modern,
            VersionChoice::Pinned(v) => ours.contains(&v).then_some(v),
            VersionChoice::Era(_) => None,
        };
        if let Some(v) = retry
            && v.era() == Era::Modern
            && !std::mem::replace(&mut self.probe_retried, true)
        {
            self.send_probe(v, now);
            return;
        }
        match self.config.version {
            VersionChoice::Auto => {
                if let Some(v) = ours
                    .iter()
                    .copied()
                    .filter(|v| v.era() == Era::Legacy)
                    .max()
                {
                    // A dual-era server whose only common revision is a legacy one.
                    self.send_initialize(v, now);
                    return;
                }
            }
            VersionChoice::Pinned(_) | VersionChoice::Era(_) => {}
        }
        self.handle_closed(CloseReason::Handshake(HandshakeError::UnsupportedVersion {
            requested: offered.to_string(),
            supported,
        }));
    }

    pub(super) fn on_initialize_response(
        &mut self,
        result: Result<RawJson, ErrorObject>,
        now: Instant,
    ) {
        let Phase::Initializing { offered } = self.phase else {
            return;
        };
        // The answer is decoded in place and then kept whole (as
        // `ServerInfo::raw`): moved, not copied.
        let (r, raw) = match result {
            Ok(raw) => match serde_json::from_str::<InitializeResult>(raw.get()) {
                Ok(r) => (r, raw),
                Err(e) => {
                    let err = HandshakeError::InvalidResult {
                        method: "initialize",
                        source: Arc::new(e),
                    };
                    self.handshake_failed(err, now);
                    return;
                }
            },
            Err(e) => {
                if let Some(v) = self.modern_refusal(&e) {
                    tracing::info!(version = %v, "the server refused the fallback initialize as serving the 2026-07-28 protocol; probing again");
                    self.reprobed = true;
                    self.legacy_detected = false;
                    self.send_probe(v, now);
                    return;
                }
                let err = HandshakeError::Rejected {
                    method: "initialize",
                    error: e,
                };
                self.handshake_failed(err, now);
                return;
            }
        };
        let got = ProtocolVersion::parse(&r.protocol_version).filter(|v| v.era() == Era::Legacy);
        let acceptable = match (self.config.version, got) {
            (_, None) => None,
            (VersionChoice::Pinned(p), Some(g)) => (p == g).then_some(g),
            (_, Some(g)) => Some(g),
        };
        let Some(v) = acceptable else {
            let err = HandshakeError::UnsupportedVersion {
                requested: offered.to_string(),
                supported: vec![r.protocol_version],
            };
            self.handshake_failed(err, now);
            return;
        };
        // The transport must leave the probe's modern mode before it sends
        // `notifications/initialized` (HTTP: session id, version header,
        // standalone GET stream).
        self.transmit.push_back(Transmit::ProtocolVersion(v));
        self.transmit.push_back(Transmit::Message(
            Notification::new("notifications/initialized", None).into(),
        ));
        let info = ServerInfo {
            protocol_version: v,
            implementation: r.server_info,
            capabilities: r.capabilities,
            instructions: r.instructions,
            supported_versions: vec![v.to_string()],
            raw,
        };
        self.learned = self.legacy_detected.then_some(EraHint::Legacy(v));
        self.become_ready(Arc::new(info), now);
    }

    /// A `server/discover` answer that arrived after the probe timed out and
    /// `initialize` went out instead. A slow server (a Python SDK server
    /// starting on a loaded machine takes 4–6 s) has then already locked the
    /// connection to the 2026-07-28 protocol and will refuse `initialize`
    /// with -32022, so a valid `DiscoverResult` wins while `initialize` is
    /// still unanswered: the session becomes ready in the modern era and the
    /// `initialize` answer, when it comes, is dropped. An error answer is
    /// ignored (the fallback goes on), as is any answer once `initialize`
    /// was answered: the legacy session is already in use. The common legacy
    /// case waits no longer than before.
    pub(super) fn on_late_probe(&mut self, result: Result<RawJson, ErrorObject>, now: Instant) {
        self.late_probe = None;
        let fallback_pending = matches!(self.phase, Phase::Initializing { .. })
            && self
                .pending
                .values()
                .any(|p| p.purpose == Purpose::Initialize);
        let Ok(raw) = result else {
            return;
        };
        if !fallback_pending || serde_json::from_str::<DiscoverResult>(raw.get()).is_err() {
            tracing::debug!("a late server/discover answer arrived after initialize; ignored");
            return;
        }
        tracing::info!(
            "server/discover was answered after the probe timeout; using the 2026-07-28 protocol"
        );
        self.pending.retain(|_, p| p.purpose != Purpose::Initialize);
        self.legacy_detected = false;
        self.on_probe_response(Ok(raw), now);
    }

    /// The modern revision to probe again with when the fallback
    /// `initialize` was refused with -32022 by a server naming a modern
    /// revision we speak: it is serving 2026-07-28 (it answered a probe we
    /// had given up on). The Python SDK's own client does the same ("one
    /// corrective re-probe"). Only with [`VersionChoice::Auto`], only once.
    fn modern_refusal(&self, e: &ErrorObject) -> Option<ProtocolVersion> {
        if self.config.version != VersionChoice::Auto
            || self.reprobed
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
}

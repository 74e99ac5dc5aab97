//! The requests one side sent the other through the relay: each under an id
//! of the relay's own on the far side, mapped back to the sender's.

use std::collections::HashMap;

use mcp_proto::jsonrpc::{IdHash, RequestId};

/// What the relay remembers of a request in flight.
#[derive(Debug)]
struct Outstanding {
    /// The id its sender gave it (the one its answer must carry).
    theirs: RequestId,
    /// What it is, where that changes how its answer is treated.
    kind: Kind,
}

/// The requests whose answers the relay looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    /// The host's `initialize`, offering this revision.
    Initialize {
        /// `params.protocolVersion` as the host sent it.
        offered: String,
    },
    /// The host's `server/discover` (2026-07-28), at this revision.
    Discover {
        /// The `_meta` revision it was sent at.
        version: String,
    },
    /// The relay's own `initialize`, starting a new session after the
    /// server ended the old one (not the host's: its answer stays here).
    Renewal,
    /// Anything else: forwarded as it comes.
    Other,
}

/// One direction's requests in flight: the relay's id on the receiving
/// side → the sender's id, and back. Both maps always hold the same
/// requests; their size is bounded by the caller (`max_in_flight`).
#[derive(Debug, Default)]
pub(super) struct Requests {
    next: i64,
    /// Keyed by ids the relay allocated: the fast hasher.
    by_ours: HashMap<RequestId, Outstanding, IdHash>,
    /// Keyed by ids a peer chose: the standard (flooding-resistant) hasher.
    by_theirs: HashMap<RequestId, RequestId>,
}

impl Requests {
    /// How many are in flight.
    pub(super) fn len(&self) -> usize {
        self.by_ours.len()
    }

    /// Whether the sender already has a request with id `theirs` in flight.
    pub(super) fn has_theirs(&self, theirs: &RequestId) -> bool {
        self.by_theirs.contains_key(theirs)
    }

    /// Whether `ours` is a request in flight.
    pub(super) fn has_ours(&self, ours: &RequestId) -> bool {
        self.by_ours.contains_key(ours)
    }

    /// Registers a request and returns the id it goes out with. Ids are
    /// never reused within a relay (an `i64` does not run out).
    pub(super) fn insert(&mut self, theirs: Option<RequestId>, kind: Kind) -> RequestId {
        self.next += 1;
        let ours = RequestId::Number(self.next);
        // The relay's own requests (`theirs: None`) are kept under their own
        // id on both sides: nobody else sends with it.
        let theirs = theirs.unwrap_or_else(|| ours.clone());
        self.by_theirs.insert(theirs.clone(), ours.clone());
        self.by_ours
            .insert(ours.clone(), Outstanding { theirs, kind });
        ours
    }

    /// The request answered by `ours`, forgotten: the id its sender gave
    /// it (the one its answer must carry) and what it is.
    pub(super) fn answered(&mut self, ours: &RequestId) -> Option<(RequestId, Kind)> {
        let o = self.by_ours.remove(ours)?;
        self.by_theirs.remove(&o.theirs);
        Some((o.theirs, o.kind))
    }

    /// The sender gave up on `theirs`: its id on the far side, forgotten
    /// (a late answer is then dropped, as the cancelling side expects).
    pub(super) fn cancelled(&mut self, theirs: &RequestId) -> Option<RequestId> {
        let ours = self.by_theirs.remove(theirs)?;
        self.by_ours.remove(&ours);
        Some(ours)
    }

    /// Every request in flight, forgotten: each sender's id and what it is.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = (RequestId, Kind)> + '_ {
        self.by_theirs.clear();
        self.by_ours.drain().map(|(_, o)| (o.theirs, o.kind))
    }
}

//! A Model Context Protocol client for both protocol eras.
//!
//! - [`session`]: the sans-IO core. Ids, pending requests, era negotiation
//!   (`server/discover` probe with `initialize` fallback), timeouts reset by
//!   progress, cancellation, `input_required` rounds: all as data, with time
//!   passed in. Testable without processes, sockets or a runtime.
//! - [`Client`] (feature `tokio`, on by default): a cheap, cloneable handle;
//!   many calls in flight over one transport, no lock held across a call. Its
//!   [`Driver`] is the one task that does the connection's IO: callers hand
//!   their requests to the session and wake it; only it polls the transport.
//!
//! # Example
//!
//! ```no_run
//! # async fn run(transport: impl mcp_proto::transport::Transport) -> Result<(), mcp_client::ClientError> {
//! use mcp_client::Client;
//! use mcp_proto::schema::Tool;
//! use serde_json::json;
//!
//! let client = Client::builder("my-agent", "1.0.0").connect(transport).await?;
//! for tool in client.list_all::<Tool>().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let result = client.call_tool("echo", json!({"message": "hi"})).await?;
//! println!("{:?}", result.content);
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! # Remembering what each server speaks
//!
//! Every connection detects the server's era (a `server/discover` probe,
//! falling back to `initialize`). An [`EraCache`] passed to
//! [`ClientBuilder::era_cache`] with a key for the server (HTTP: endpoint
//! origin and path; stdio: the command line) remembers the outcome, as the
//! spec recommends, so later connections skip the probe: a legacy server is
//! sent `initialize` at once, a modern one reuses its `server/discover`
//! answer while that is fresh. A remembered era that proves wrong is
//! forgotten and detected again within the same connection.
//!
//! # Cancel safety
//!
//! Dropping a request's future cancels the request: the server is sent
//! `notifications/cancelled` (never for `initialize`) and a late response is
//! ignored. Timeouts cancel the same way. A call dropped while it waits for
//! room under [`ClientBuilder::max_in_flight`] was never sent.
//!
//! # Bounds
//!
//! Every queue the client keeps has a limit, named and configurable, and a
//! defined behaviour when full; none grows with what a server sends:
//!
//! | what | limit | when reached |
//! |---|---|---|
//! | calls in flight | [`ClientBuilder::max_in_flight`] ([`DEFAULT_MAX_IN_FLIGHT`]) | a call waits for room, in the order calls started waiting; [`RequestBuilder::try_send`] fails with [`ClientError::Busy`] |
//! | answers to the server's requests waiting to be written | [`SessionConfig::max_outbound_backlog`](session::SessionConfig::max_outbound_backlog) | the client stops reading from the server until they are written |
//! | the server's requests being answered | [`ClientBuilder::max_server_requests`] | answered "client busy" (-32603) at once |
//! | notifications waiting for the handler | [`MAX_QUEUED_NOTIFICATIONS`] | the client stops reading until the handler catches up |
//! | tasks the server asked the client to run (2025-11-25), working or finished | [`ClientBuilder::max_kept_tasks`] ([`DEFAULT_MAX_KEPT_TASKS`]), each for at most [`ClientBuilder::max_task_ttl`] | one more is refused "client busy" (-32603); at its ttl a task is dropped |
//! | progress callbacks ([`RequestBuilder::on_progress`]) waiting to run | the progress notifications of one pass of the driver (it reads at most 256 messages per pass) | they run on the driver task once the pass lets go of the connection's lock, so while one runs its connection is neither read nor written: a slow callback slows its own connection, and should hand its work to a task of its own |
//! | bytes waiting to be written | the transport's (stdio: its write buffer; HTTP: `max_unanswered_posts`) | the client stops writing; the backlog above then fills |
//!
//! A server request's params of [`DECODE_OFF_TASK_BYTES`] or more are
//! decoded on tokio's blocking pool, so that a large request never holds
//! the thread that fires the connection's timers (a current-thread runtime
//! has one); a server request that cannot be read at all is
//! answered with JSON-RPC's error at once
//! ([`ClientHandler::on_refused_request`] hears of it).
//!
//! So a server that stops reading while it keeps sending is, after a
//! bounded amount, no longer read from; the client's calls still time out
//! and it still closes (`tests/flood.rs`: a minute of such a flood moves the
//! client's memory by a few MiB).
//!
//! # The handler's tasks
//!
//! The driver owns every task it starts for the [`ClientHandler`]: a
//! server request the server cancels has its task aborted and gets no
//! answer; closing aborts them all; a handler that panics has its request
//! answered with an internal error and leaves every count right.
//!
//! # Tools that run as tasks (2025-11-25 and the 2026-07-28 extension)
//!
//! [`Client::call_tool_as_task`] calls a tool as a task and returns a
//! [`TaskHandle`] (status, `wait`, `result`, `cancel`, `era`);
//! [`Client::call_tool`] does so by itself when told the tool's listing
//! says `taskSupport: required` ([`RequestBuilder::task_support`]). In
//! 2026-07-28 tasks are the extension
//! `io.modelcontextprotocol/tasks` (SEP-2663): the client declares it in
//! every request's capabilities (on by default, see
//! [`ClientBuilder::tasks_extension`]) and the server decides per call;
//! `call_tool` follows a task the server answers with to its
//! `CallToolResult` (the result inline in `tasks/get`, status messages as
//! progress, the task's input requests answered through the handler and
//! sent with `tasks/update`). The protocol state of both forms (poll pacing
//! at the server's interval with backoff, the deadline and the ttl, which
//! reports to take, which input requests to answer) is the sans-IO
//! [`session::TaskTracker`]; `tasks/get`, `tasks/update` (2026-07-28),
//! `tasks/cancel` and `list_page::<Task>` (2025-11-25) are typed calls, and
//! [`TaskHandle::result`] is the one way to a task's result. See [`TaskHandle`] for the differences
//! between the two forms.
//!
//! A task outlives the program that started it: [`TaskHandle::ticket`]
//! writes it down as a serde [`TaskTicket`] (server identity, task id,
//! [`TaskEra`], deadline and expiry as wall-clock times), and
//! [`Client::resume_task`] (the one way back to a task) follows it again
//! after a restart, bounded by
//! what is left of them; an expired or unknown task is a typed
//! [`TicketError`], never a wait.
//!
//! # The server's requests as tasks (2025-11-25)
//!
//! On a 2025-11-25 connection the client is also a task receiver: it
//! declares `tasks.requests` for `sampling/createMessage` and
//! `elicitation/create` (each only if the handler's capabilities declare
//! sampling / elicitation), plus `tasks.list` and `tasks.cancel`. A request
//! of those carrying `params.task` is answered at once with a
//! `CreateTaskResult` (a fresh random id, `working`, the server's `ttl`
//! capped at [`ClientBuilder::max_task_ttl`], `pollInterval`
//! [`TASK_POLL_INTERVAL_MS`]); the handler's typed method runs as for a
//! plain request, and its outcome is kept for the server's `tasks/get`,
//! `tasks/result` (which waits until the task ends), `tasks/list` and
//! `tasks/cancel` (which aborts the handler). `notifications/tasks/status`
//! goes out when the handler finishes and when the server cancels the task;
//! `tasks/list` answers in pages of [`TASK_LIST_PAGE_SIZE`] with a cursor. At most [`ClientBuilder::max_kept_tasks`]
//! are kept; each is dropped at its ttl; an unknown id is `-32602`.
//! `max_kept_tasks(0)` turns all of it off. The state lives in the driver,
//! beside the handler's tasks, not in the sans-IO session.
//!
//! # Feature flags
//!
//! - `tokio` (default): [`Client`], [`Driver`]. Without it only [`session`] remains.
//! - `skills`: the Skills extension (SEP-2640): `Client::list_skills`,
//!   `Client::load_skill`, `Client::read_skill_file`, each file verified
//!   against the listing (size, SHA-256, frontmatter) before it is used.
//! - `opentelemetry`: each request's W3C trace context in its `_meta`
//!   (SEP-414), through `tracing-opentelemetry`; see [`telemetry`].
//! - `metrics`: the `mcp.client.operation.duration` and
//!   `mcp.client.session.duration` histograms; see [`telemetry`].
//!
//! # Telemetry
//!
//! Every request is a span by the OpenTelemetry MCP conventions, through
//! `tracing`: see [`telemetry`] for how to see a trace.
//!
//! # How this crate is built
//!
//! The invariants a change must keep, and where each idea lives.
//!
//! - **Layers.** [`session`] is the protocol, sans-IO: no IO, no clock (the
//!   time is passed in), no async, and no `tracing` type in its API (an
//!   application's span reaches it as a [`telemetry::AppSpan`]). It is
//!   driven by input calls and polled for output (`poll_transmit`,
//!   `poll_event`, `poll_timeout`), so every rule of the protocol is tested
//!   by scripting messages (`session/tests`, the `session` fuzz target). The
//!   async side (`client`, feature `tokio`) only moves bytes and time in and
//!   out of it; [`relay`] is sans-IO the same way.
//! - **Only the driver does IO.** One [`Driver`] task per connection owns
//!   the transport (a field of the driver, outside the shared lock, so
//!   nothing else can reach it). Callers lock the shared state (the
//!   session and the waiters), hand over their request, wake the driver and
//!   unlock. The lock is never held across an `.await` or while
//!   application code runs.
//! - **Every queue is bounded**, by a named, documented, configurable
//!   limit with a defined behaviour when full: the [table above](#bounds)
//!   is the one list, and a new queue joins it.
//! - **Each part of the session's state is private to the module about
//!   it**, with methods that keep its invariants; `session/core.rs`
//!   composes them and is the only module that sees them all (it routes
//!   each input to the part it is about): `negotiation.rs` (the phase, the
//!   server, a remembered era, renewals; it carries out the handshake),
//!   `handshake.rs` (the phase, one enum carrying what each phase knows, and
//!   the negotiation's decisions as functions), `calls.rs` (the calls sent,
//!   held back and waiting for input, their ids and deadlines),
//!   `output.rs` (what waits for the transport, with the answers owed to
//!   the server counted; the owner's events; the telemetry),
//!   `server_requests.rs` (the server's requests being answered), `era.rs`
//!   (a remembered era and what was learned), `renew.rs` (new sessions
//!   after the server ended one), `meta.rs` (the one composer of `_meta`),
//!   `result_type.rs` (what a result's `resultType` says), `task.rs` (the
//!   sans-IO task tracker).
//! - **The driver owns what runs**: the handler's tasks (aborted with the
//!   request the server cancelled, and all at close; a panic answers an
//!   internal error) and the tasks the server asked the client to run. The
//!   waiters (reply channels by [`CallId`](session::CallId)) live beside
//!   the session, so the session names no async type.
//! - **Telemetry is recorded where a call's life is decided** (in the
//!   session), through [`telemetry`], and costs one relaxed load when no
//!   subscriber listens; the per-call path is measured in instructions
//!   (`cargo xtask bench`), and must not get slower.
//! - **Errors** are typed ([`ClientError`], [`CloseReason`]), say what
//!   happened and what to do, and print each cause once.
//!
//! # Design notes
//!
//! Unlike `STYLE.md`'s sketch, the session is not generic over a waiter type:
//! calls are named by a caller-chosen [`CallId`](session::CallId) that stays
//! the same across `input_required` retries (which need new JSON-RPC ids),
//! and the connection keeps the reply channels beside the session. That
//! keeps the core free of any async type and makes retries invisible to
//! callers.
//!
//! The shape of the async side is quinn's: the session and the callers'
//! waiters live behind one mutex that callers and the driver share, never
//! held across an `.await` or user code; callers change them and wake the
//! driver, which alone does IO. A call therefore costs a task hand-off on
//! its way out (the driver writes it), which a design where callers wrote
//! their own requests avoided; in exchange no transport can be polled from
//! a task it does not know, with a waker nobody will wake, and every queue
//! has one owner that bounds it. Concurrent calls made between two runs of
//! the driver go out in one write.

// docs.rs (`--cfg docsrs`, nightly): each item gated by a feature or a
// platform carries a badge saying which.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod era_cache;
pub mod error;
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod fuzzing;
pub mod handler;
mod pages;
pub mod relay;
pub mod session;
pub mod telemetry;
mod ticket;

#[cfg(feature = "tokio")]
mod client;

pub use era_cache::{DEFAULT_ERA_CACHE_ENTRIES, EraCache};
pub use error::{ClientError, CloseReason, HandshakeError, SerdeError};
pub use handler::{ClientHandler, DECODE_OFF_TASK_BYTES, ListKind, NoHandler};
pub use pages::{MAX_CURSOR_LEN, PageCursors};
pub use session::{EraHint, ServerInfo, VersionChoice};
pub use ticket::{ServerIdentity, TICKET_FORMAT, TaskEra, TaskTicket, TicketError};

#[cfg(feature = "skills")]
#[cfg_attr(docsrs, doc(cfg(feature = "skills")))]
pub use client::skills::LoadedSkill;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub use client::{
    Client, ClientBuilder, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_KEPT_TASKS, DEFAULT_MAX_LIST_PAGES,
    DEFAULT_MAX_TASK_TTL, Driver, MAX_QUEUED_NOTIFICATIONS, MAX_WATCHED_TASKS, ProgressFn,
    RequestBuilder, ResponseFuture, StatusFn, TASK_LIST_PAGE_SIZE, TASK_POLL_INTERVAL_MS, TaskCall,
    TaskHandle, TaskOptions,
};
pub use session::{DEFAULT_MAX_OUTBOUND_BACKLOG, DEFAULT_MAX_SERVER_REQUESTS};

/// The README's example, compiled with the doc-tests so it cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeExample;

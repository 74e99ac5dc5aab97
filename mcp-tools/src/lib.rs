//! MCP server tools as agent tools.
//!
//! An agent registers a server's tools and a model calls them as if they
//! were local. This crate is that bridge:
//!
//! - [`Tool`]: a small, dyn-compatible trait an agent framework can adopt:
//!   name, description, input schema (the server's, verbatim: it is the
//!   model-facing contract), optional output schema and annotations, and an
//!   async call taking the model's raw JSON arguments.
//! - [`McpTool`]: a [`Tool`] that proxies `tools/call` over an
//!   [`mcp_client::Client`].
//! - [`fold_result`]: a result as the one string a model reads; the raw
//!   result stays in [`ToolOutput::result`].
//! - [`ToolError`]: errors with owners. `isError: true`, arguments that do
//!   not fit the input schema, and unknown tool names are
//!   [model-correctable](ToolError::is_model_correctable): give the model
//!   [`message_for_model`](ToolError::message_for_model) and let it retry.
//!   Protocol, transport, timeout and cancellation errors are
//!   [fatal](ToolError::Fatal), with the [`ClientError`](mcp_client::ClientError) kept.
//! - [`Toolbox`]: many servers as one tool set, with per-server prefixes,
//!   include/exclude [`Filter`]s, names [sanitized](sanitize_name) to
//!   `^[a-zA-Z0-9_-]{1,64}$` with a reverse mapping ([`Toolbox::resolve`]),
//!   deterministic [collisions](OnCollision), OpenAI and Anthropic export
//!   ([`ModelTool`]: schemas written verbatim, never decoded),
//!   and re-listing when a server's tools change.
//! - [`ToolPolicy`]: allow, ask or deny each call before anything is sent
//!   (see "Tool policy" below).
//! - [`Toolbox::search`]: the tools that best answer a request in plain
//!   words (`"roll back the deployment"`), ranked over everything a tool
//!   says about itself and its server's instructions, with stemming and
//!   synonym tables; the index ([`search::ToolIndex`], sans-IO, usable
//!   alone) is built once per listing and follows `list_changed`.
//!
//! # What it is not
//!
//! Not an agent loop and not a model client: it produces tool definitions
//! and runs calls; talking to a model is the application's job.
//!
//! # Example
//!
//! ```no_run
//! # async fn run(github: mcp_client::Client, files: mcp_client::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_tools::{Filter, Server, Toolbox};
//! use serde_json::json;
//!
//! let toolbox = Toolbox::builder()
//!     .server(Server::new("github", github).prefix("gh_"))
//!     .server(Server::new("files", files).filter(Filter::include(["read_*", "list_*"])))
//!     .build()
//!     .await?;
//! // Hand these to the model (each schema is written verbatim when serialized):
//! let definitions = toolbox.openai_definitions().await;
//! # let _ = definitions;
//! // The model answers with a tool call:
//! match toolbox.call("gh_search_issues", json!({"query": "is:open"})).await {
//!     Ok(output) => println!("{}", output.text),
//!     Err(e) if e.is_model_correctable() => println!("tell the model: {}", e.message_for_model()),
//!     Err(e) => return Err(e.into()),
//! }
//! # Ok(()) }
//! ```
//!
//! Folding, globs and sanitizing are plain functions:
//!
//! ```
//! use mcp_tools::{Glob, sanitize_name};
//!
//! assert_eq!(sanitize_name("db.query/run"), "db_query_run");
//! assert!(Glob::new("db.**").matches("db.query.run"));
//! ```
//!
//! # Argument checking
//!
//! Before sending, arguments are checked against the tool's input schema
//! (on by default, [`ToolOptions::validate_arguments`]); a mismatch is
//! [`ToolError::InvalidArguments`] and nothing is sent. By default a small
//! built-in validator checks a documented subset of JSON Schema (see
//! [`check_arguments`]): type of the root object, `required`, property
//! `type`s (also arrays of types), `enum`, `const`, nested objects and
//! arrays, `additionalProperties: false`. It never rejects what a full
//! validator would accept. Why not the `jsonschema` crate by default: it
//! brings about 45 crates (regex, fancy-regex, num, parking_lot, a second
//! syn) to every agent that only wants to proxy calls; the server validates
//! anyway, and the common model mistakes (missing field, wrong type, value
//! not in an enum, typo'd property name) are in the subset.
//!
//! # Tool policy
//!
//! [`ToolOptions::policy`] decides, before anything is sent, whether a call
//! runs ([`Decision::Allow`]), waits for a person ([`Decision::Ask`],
//! through the application's [`ToolOptions::on_ask`]) or is refused
//! ([`Decision::Deny`]; the tool is also left out of the model's tools).
//! Rules are [`Glob`]s over the server's own tool names, per server
//! ([`ToolPolicy::server`], [`ToolRules`]) and for every server; where no
//! rule applies the tool's annotations decide (`readOnlyHint` allows,
//! `destructiveHint` asks; the server's own claims, so rules are what
//! holds), then [`ToolPolicy::otherwise`] (allow by default). A refused
//! call is [`ToolError::Refused`] with the [`Refusal`] and the rule
//! ([`Because`]): model-correctable, so the agent tells the model and goes
//! on.
//!
//! Every call path runs the same check, [`McpTool::authorize`]:
//! [`McpTool::call`], [`Toolbox::call`] (a retry after the tool set
//! changed does not ask again), [`Toolbox::start`] (and the host's task
//! starts, which go through it); a caller that sends `tools/call` itself
//! (a command line) calls it first. Without a policy nothing is checked, and a call costs what it
//! did; with one, a tool's verdict is decided once and kept.
//!
//! ```
//! use mcp_tools::{Decision, ToolOptions, ToolPolicy, ToolRules};
//!
//! let options = ToolOptions::new()
//!     .policy(
//!         ToolPolicy::new()
//!             .deny(["**delete**", "**drop**"])
//!             .server("github", ToolRules::new().allow(["get_*", "list_*", "search_*"]).ask(["create_*"]))
//!             .otherwise(Decision::Ask),
//!     )
//!     .on_ask(|request| async move {
//!         eprintln!("allow {} with {}? ({})", request.tool, request.arguments, request.because);
//!         false // a real host waits for the user's answer here
//!     });
//! # let _ = options;
//! ```
//!
//! # Long-running tools (tasks)
//!
//! A tool the server runs as a task (2025-11-25 `execution.taskSupport:
//! "required"`, like server-everything's `simulate-research-query`; in
//! 2026-07-28 any tool the server chooses to, through the tasks extension,
//! like FastMCP's task tools) is an
//! ordinary agent tool: [`Toolbox::call`] waits for its result, and each
//! status change reaches [`ToolOptions::on_progress`] as progress. An agent
//! that polls instead starts it with [`Toolbox::start`], which returns a
//! serializable [`TaskTicket`](mcp_client::TaskTicket) at once, and asks
//! [`Toolbox::poll`] until it is [`TaskPoll::Done`] (or waits with
//! [`Toolbox::task_result`]):
//!
//! ```no_run
//! # async fn run(client: mcp_client::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_client::TaskOptions;
//! use mcp_tools::{Server, TaskPoll, ToolOptions, ToolTask, Toolbox};
//! use serde_json::json;
//!
//! let toolbox = Toolbox::builder()
//!     .server(Server::new("everything", client))
//!     .tool_options(ToolOptions::new().on_progress(|tool, p| {
//!         eprintln!("{tool}: {}", p.message.as_deref().unwrap_or(""));
//!     }))
//!     .build()
//!     .await?;
//! // Waits, with "working: Gathering sources..." and so on on stderr:
//! let out = toolbox.call("simulate-research-query", json!({"topic": "rust"})).await?;
//! println!("{}", out.text);
//! // Or start it and poll (the ticket serializes: keep it across a restart):
//! if let ToolTask::Started(ticket) =
//!     toolbox.start("simulate-research-query", json!({"topic": "tokio"}), TaskOptions::new()).await?
//! {
//!     loop {
//!         match toolbox.poll(&ticket).await? {
//!             TaskPoll::Done(out) => break println!("{}", out.text),
//!             TaskPoll::Running { message, .. } => eprintln!("{}", message.unwrap_or_default()),
//!             _ => {}
//!         }
//!         tokio::time::sleep(std::time::Duration::from_millis(
//!             ticket.poll_interval_ms.unwrap_or(1000),
//!         ))
//!         .await;
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! `cargo run -p examples --bin tool_tasks` runs this against
//! server-everything.
//!
//! # Staying current
//!
//! A [`Toolbox`] watches each client's [`list_changed`](mcp_client::Client::list_changed)
//! counter: legacy `notifications/tools/list_changed` and the same
//! notification on a 2026-07-28 `subscriptions/listen` stream (the toolbox
//! opens one for modern servers that advertise `tools.listChanged`). The
//! next [`Toolbox::tools`] or [`Toolbox::call`] lists the changed server
//! again. A call that fails with "tool set changed; list tools again"
//! (-32602) makes the toolbox list that server again and retry the call
//! once.
//!
//! # Deferred loading
//!
//! A host with twenty servers holds thousands of tools, hundreds of
//! thousands of tokens of definitions; models choose worse past a few
//! dozen. With deferred loading ([`Toolbox::deferred`], one [`Deferred`]
//! per conversation) the model sees a few always-loaded tools and a
//! `search_tools` tool; searching ([`Toolbox::search`]) returns the best
//! matches' definitions and loads them for the following turns, within a
//! bounded loaded set (least recently used out first; see the
//! [`deferred`] module). On the repository's 2,000-tool catalog a turn
//! starts with about 1 % of the definitions' tokens. It is just a tool, so
//! it works with any model API; Anthropic's and OpenAI's Responses API
//! also take the native form ([`Deferred::native_definitions`]:
//! `defer_loading` and their own tool search tool). [`ModelTool::estimated_tokens`]
//! and [`fit_tools`] size definitions ([`estimate_tokens`], within about
//! 10 % of OpenAI's tokenizers on tool definitions).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_tools::{DeferredOptions, ModelApi, Toolbox};
//! use serde_json::json;
//!
//! let toolbox = Toolbox::default(); // its servers added as usual
//! let conversation = toolbox.deferred(DeferredOptions::new().always(["read_file"]));
//! // Each turn: what the model is offered...
//! let offered = conversation.definitions(ModelApi::Anthropic).await;
//! assert_eq!(offered.iter().map(|t| t.name()).collect::<Vec<_>>(), ["search_tools"]);
//! // ...and its calls, `search_tools` included.
//! let out = conversation.call("search_tools", json!({"query": "tail a log file"})).await?;
//! assert!(out.text.starts_with("No tool matches"));
//! # Ok(()) }
//! ```
//!
//! `cargo run -p examples --bin agent_tools` runs a scripted agent loop
//! with deferred loading and result budgets against server-everything.
//!
//! # Result budgets
//!
//! A tool may return megabytes; a model should read a few thousand tokens
//! of it. A budget (per tool, per server, or the toolbox's default, in
//! [estimated](estimate_tokens) tokens) caps what reaches the model:
//! past it, [`ToolOutput::text`] is cut at a line (else word, else
//! character) boundary and ends with a note saying how much was shown and
//! how to read on, with the `read_result` tool the toolbox then offers and
//! answers itself. [`ToolOutput::result`] keeps the whole result;
//! [`ToolOutput::cut`] says what was cut. Cut results are kept in a bounded
//! store (the least recently read go first, [`ToolboxBuilder::kept_results`]);
//! one too large to keep gets a note pointing at the server's resource
//! link, if it gave one. Images, audio and blobs reach the model as one
//! descriptive line each ([`fold_result`]) and count as that line; text
//! and `structuredContent` are not both sent (the structured content is
//! shown only when the result has no text). With no budget set, a call
//! costs what it did.
//!
//! ```no_run
//! # async fn run(files: mcp_client::Client, db: mcp_client::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_tools::{Server, Toolbox};
//! use serde_json::json;
//!
//! let toolbox = Toolbox::builder()
//!     .server(Server::new("files", files).tool_result_budget("read_file", 20_000))
//!     .server(Server::new("db", db).result_budget(4_000))
//!     .result_budget(8_000)
//!     .build()
//!     .await?;
//! let out = toolbox.call("read_file", json!({"path": "server.log"})).await?;
//! if let Some(cut) = &out.cut {
//!     // The model reads ~20,000 tokens and a note; when it calls
//!     // `read_result` with the id and offset, `toolbox.call` answers.
//!     println!("showed {} of {} bytes", cut.shown_bytes, cut.total_bytes);
//! }
//! # Ok(()) }
//! ```
//!
//! # MCP Apps
//!
//! A server using the MCP Apps extension (`io.modelcontextprotocol/ui`)
//! gives some tools an interactive UI (`_meta.ui.resourceUri`, a
//! `ui://` HTML resource the host renders in a sandboxed iframe) and may
//! mark tools as its UI's only (`_meta.ui.visibility: ["app"]`). Those
//! app-only tools never reach a model: not in [`Toolbox::tools`], the
//! exports or anything built on them, and a model that names one gets
//! [`ToolError::NotFound`]. One predicate decides it,
//! [`Tool::is_model_visible`](mcp_proto::schema::Tool::is_model_visible).
//!
//! The host renders the UI and relays its calls; this crate gives it the
//! pieces. A client that renders apps says so
//! ([`ClientBuilder::ui_extension`](mcp_client::ClientBuilder::ui_extension)),
//! reads a tool's UI typed ([`read_ui_resource`]: the HTML and its CSP
//! domains and permissions), and calls tools for the app with
//! [`Toolbox::call_from_app`] (app-only tools included; a model-only tool is
//! refused, [`ToolError::NotForApp`]):
//!
//! ```no_run
//! # async fn run(client: mcp_client::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_tools::{Server, Toolbox, read_ui_resource};
//! use serde_json::json;
//!
//! // `client` was built with `.ui_extension(true)`.
//! let toolbox = Toolbox::builder().server(Server::new("weather", client)).build().await?;
//! // The model calls `get_weather`; its result comes with a UI.
//! let out = toolbox.call("get_weather", json!({"city": "Oslo"})).await?;
//! let tool = toolbox.get("get_weather").expect("listed");
//! if let Some(uri) = tool.definition().ui().and_then(|ui| ui.resource_uri) {
//!     let ui = read_ui_resource(tool.client(), &uri).await?;
//!     // ... render `ui.html` with a CSP built from `ui.meta.csp`, hand it `out.result` ...
//! #   let _ = (ui, &out);
//! }
//! // The dashboard's refresh button calls an app-only tool of its server:
//! let fresh = toolbox
//!     .call_from_app("weather", "refresh_dashboard", json!({"city": "Oslo"}))
//!     .await?;
//! # let _ = fresh;
//! # Ok(()) }
//! ```
//!
//! # Cancel safety
//!
//! Dropping a call's future cancels the request on the server
//! (`notifications/cancelled`). Dropping a re-listing midway leaves the
//! server marked as changed; the next use lists it again.
//!
//! # Feature flags
//!
//! - `semantic` (on): tool search by meaning as well as by words, from word
//!   vectors distilled from all-MiniLM-L6-v2 (Apache-2.0), 2.1 MB inside
//!   the crate, no dependency (the [`search`] module). Off: search matches
//!   words only.
//! - `jsonschema` (off): full JSON Schema validation of arguments, and of
//!   `structuredContent` against the tool's `outputSchema` (a mismatch, or
//!   a missing `structuredContent`, is [`ToolError::InvalidOutput`]).
//!   Adds about 45 crates.
//! - `rig` (off): the `rig` module, MCP tools as rig tools (`rig-core`
//!   0.44, about 120 crates, Rust 1.95).
//!
//! # Stability
//!
//! Pre-1.0. Public enums and wire-facing structs are `#[non_exhaustive]`.

// docs.rs (`--cfg docsrs`, nightly): each item gated by a feature or a
// platform carries a badge saying which.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod apps;
mod budget;
mod catalog;
pub mod deferred;
mod error;
mod export;
mod fold;
mod keeper;
mod meta;
mod names;
mod options;
mod policy;
mod schema;
pub mod search;
mod server;
mod task;
pub mod tokens;
mod tool;
mod toolbox;

#[cfg(feature = "rig")]
#[cfg_attr(docsrs, doc(cfg(feature = "rig")))]
pub mod rig;

#[cfg(test)]
mod tests;

pub use apps::{UiResource, UiResourceError, read_ui_resource};
pub use budget::{Cut, DEFAULT_KEPT_BYTES, DEFAULT_KEPT_RESULTS, MIN_RESULT_BUDGET};
pub use deferred::{Deferred, DeferredOptions};
pub use error::{ToolError, ToolboxError};
pub use export::{ModelApi, ModelTool, NativeSearch, anthropic_tool, fit_tools, openai_function};
pub use fold::{base64_decoded_len, fold_result};
pub use keeper::Keeper;
pub use names::{
    Filter, Glob, MAX_TOOL_NAME_LEN, SEGMENT_SEPARATORS, is_valid_model_name, sanitize_name,
};
pub use options::{ToolOptions, ToolProgressFn};
pub use policy::{
    ApprovalFuture, ApprovalRequest, AskFn, Because, Decision, Refusal, ToolPolicy, ToolRules,
    Verdict,
};
pub use schema::{MAX_REPORTED_PROBLEMS, check_arguments};
pub use search::SearchHit;
pub use server::Server;
pub use task::{TaskPoll, ToolTask};
pub use tokens::estimate_tokens;
pub use tool::{McpTool, Tool, ToolFuture, ToolOutput};
pub use toolbox::{Collision, OnCollision, Route, Toolbox, ToolboxBuilder};

//! [`ToolOptions`]: how an [`McpTool`](crate::McpTool) calls its server, and
//! whether it may ([`ToolPolicy`]).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mcp_proto::schema::ProgressParams;

use crate::policy::{ApprovalRequest, AskFn, ToolPolicy};

/// How an [`McpTool`](crate::McpTool) calls its server.
#[derive(Clone)]
#[non_exhaustive]
pub struct ToolOptions {
    /// Check arguments against the input schema before sending (default on).
    /// A mismatch is [`ToolError::InvalidArguments`](crate::ToolError::InvalidArguments) and nothing is sent.
    pub validate_arguments: bool,
    /// Check `structuredContent` against the output schema (default on;
    /// only with the `jsonschema` feature, a no-op without it).
    pub validate_output: bool,
    /// Per-call timeout, reset by progress (default: the client's).
    pub timeout: Option<Duration>,
    /// Called with each progress notification of a call (the tool's
    /// model-facing name, the progress), see [`on_progress`](Self::on_progress).
    pub(crate) on_progress: Option<ToolProgressFn>,
    /// Allow, ask or deny, see [`policy`](Self::policy).
    pub(crate) policy: Option<Arc<ToolPolicy>>,
    /// Asks a person, see [`on_ask`](Self::on_ask).
    pub(crate) on_ask: Option<AskFn>,
}

/// Called with a tool's name and a progress notification of its call.
pub type ToolProgressFn = Arc<dyn Fn(&str, ProgressParams) + Send + Sync>;

impl std::fmt::Debug for ToolOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolOptions")
            .field("validate_arguments", &self.validate_arguments)
            .field("validate_output", &self.validate_output)
            .field("timeout", &self.timeout)
            .field("on_progress", &self.on_progress.is_some())
            .field("policy", &self.policy)
            .field("on_ask", &self.on_ask.is_some())
            .finish()
    }
}

impl Default for ToolOptions {
    fn default() -> Self {
        ToolOptions {
            validate_arguments: true,
            validate_output: true,
            timeout: None,
            on_progress: None,
            policy: None,
            on_ask: None,
        }
    }
}

impl ToolOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Turns argument checking on or off.
    #[must_use]
    pub fn validate_arguments(mut self, on: bool) -> Self {
        self.validate_arguments = on;
        self
    }

    /// Turns output-schema checking on or off (feature `jsonschema`).
    #[must_use]
    pub fn validate_output(mut self, on: bool) -> Self {
        self.validate_output = on;
        self
    }

    /// Sets the per-call timeout.
    #[must_use]
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }

    /// Calls `f` with each progress notification of a call: the tool's
    /// model-facing name and the progress. A tool the server runs as a
    /// task reports each status change this way (the message is
    /// `"<status>: <status message>"`), so a long-running tool shows what
    /// it is doing. `f` runs on the connection's task: keep it short.
    #[must_use]
    pub fn on_progress(mut self, f: impl Fn(&str, ProgressParams) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }

    /// Decides before each call whether it runs, waits for a person's
    /// approval ([`on_ask`](Self::on_ask)), or is refused
    /// ([`ToolError::Refused`](crate::ToolError::Refused)); a denied tool is also left out of a
    /// toolbox's tools. Without a policy (the default) every call runs.
    #[must_use]
    pub fn policy(mut self, policy: ToolPolicy) -> Self {
        self.policy = Some(Arc::new(policy));
        self
    }

    /// The policy, if one is set.
    pub fn tool_policy(&self) -> Option<&ToolPolicy> {
        self.policy.as_deref()
    }

    /// Asks a person whether a call the [policy](Self::policy) wants
    /// approved may run: `f` gets the tool, its server, its definition, the
    /// arguments and why, and its future says yes (`true`) or no. It may
    /// take as long as the person does: nothing is sent meanwhile, the
    /// call's timeout has not started, and dropping the call drops the
    /// question. Without it, such calls are refused
    /// ([`Refusal::NoOneToAsk`](crate::Refusal::NoOneToAsk)).
    ///
    /// ```
    /// use mcp_tools::{ToolOptions, ToolPolicy};
    ///
    /// let options = ToolOptions::new()
    ///     .policy(ToolPolicy::new().ask(["send_*"]))
    ///     .on_ask(|request| async move {
    ///         // Show `request.tool`, `request.arguments` and `request.because`
    ///         // to the user and wait for the answer.
    ///         request.tool != "send_money"
    ///     });
    /// # let _ = options;
    /// ```
    #[must_use]
    pub fn on_ask<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = bool> + Send + 'static,
    {
        self.on_ask = Some(Arc::new(move |r| Box::pin(f(r))));
        self
    }
}

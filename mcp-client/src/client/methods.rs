//! The typed MCP calls: logging, ping, lists, tools, resources, prompts.
//! Each returns a [`RequestBuilder`] for its options (or, for calls with
//! nothing to configure, is an `async fn`); the raw escape hatch is
//! [`Client::request_raw`].

use std::borrow::Cow;

use mcp_proto::method::{
    CallTool, Complete, Discover, GetPrompt, Listen, Method, Ping, ReadResource, SetLevel,
    Subscribe, Unsubscribe,
};
use mcp_proto::schema::{
    CallToolResult, CompleteParams, CompleteResult, GetPromptParams, GetPromptResult, ListenParams,
    ListenResult, LoggingLevel, Page, PageItem, PaginatedParams, ReadResourceParams,
    ReadResourceResult, SetLevelParams, SubscribeParams, SubscriptionFilter,
};
use mcp_proto::{Era, RawJson};
use serde::Serialize;
use serde::de::DeserializeOwned;

use mcp_proto::schema::TaskSupport;

use super::request::{Params, decode_tool_result, decode_typed};
use super::{Client, RequestBuilder, ResponseFuture};
use crate::error::ClientError;

impl Client {
    /// Sets the server's minimum log level: `logging/setLevel` in the legacy
    /// era; the `_meta` log level of every later request in 2026-07-28.
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        if self.era() == Some(Era::Modern) {
            self.inner().lock().session.set_log_level(Some(level));
            return Ok(());
        }
        self.request_typed::<_, RawJson>(SetLevel::NAME, &SetLevelParams::new(level))
            .await
            .map(drop)
    }

    /// `ping` (legacy era; 2026-07-28 has no ping: this sends `server/discover` instead).
    pub async fn ping(&self) -> Result<(), ClientError> {
        let method = if self.era() == Some(Era::Modern) {
            Discover::NAME
        } else {
            Ping::NAME
        };
        self.request_raw(method, None).await.map(drop)
    }

    /// One page of any paginated list, named by its item type:
    /// `client.list_page::<Tool>(None)` sends `tools/list`. See
    /// [`Page`](mcp_proto::schema::Page) for why every list shares one shape.
    pub fn list_page<T: PageItem + DeserializeOwned>(
        &self,
        cursor: Option<String>,
    ) -> RequestBuilder<'_, Page<T>> {
        self.request_sized(T::METHOD, PaginatedParams::new(cursor))
    }

    /// Every item of a paginated list, following cursors (up to the page cap,
    /// [`ClientBuilder::max_list_pages`](crate::ClientBuilder::max_list_pages)):
    /// `client.list_all::<Tool>()`. More pages than that is
    /// [`ClientError::TooManyPages`], a cursor the server sent before
    /// [`ClientError::RepeatedCursor`], one over
    /// [`MAX_CURSOR_LEN`](crate::MAX_CURSOR_LEN) [`ClientError::CursorTooLong`]
    /// (see [`PageCursors`](crate::PageCursors)); an empty string is a
    /// cursor like any other. Only the items are kept: each page is dropped
    /// as soon as they are taken from it.
    ///
    pub async fn list_all<T: PageItem + DeserializeOwned>(&self) -> Result<Vec<T>, ClientError> {
        self.list_all_pages::<T>().await
    }

    async fn list_all_pages<T: PageItem + DeserializeOwned>(&self) -> Result<Vec<T>, ClientError> {
        let mut all = Vec::new();
        let mut cursors = crate::PageCursors::new(T::METHOD, self.inner().max_list_pages);
        let mut cursor = None;
        loop {
            let page = self.list_page::<T>(cursor.take()).await?;
            all.extend(page.items);
            match cursors.next(page.next_cursor)? {
                Some(c) => cursor = Some(c),
                None => return Ok(all),
            }
        }
    }

    /// The cap on pages [`list_all`](Self::list_all) follows
    /// ([`ClientBuilder::max_list_pages`](crate::ClientBuilder::max_list_pages)),
    /// for callers that walk [`list_page`](Self::list_page) themselves.
    pub fn max_list_pages(&self) -> usize {
        self.inner().max_list_pages
    }

    /// `tools/call` with any serializable arguments (a `serde_json::Value`,
    /// or your own struct, encoded straight into the request: no
    /// intermediate `Value`, no copy of large arguments).
    ///
    /// ```no_run
    /// # async fn f(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
    /// let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
    ///
    /// #[derive(serde::Serialize)]
    /// struct Echo<'a> { text: &'a str }
    /// let result = client.call_tool("echo", Echo { text: "hi" }).progress(true).await?;
    /// # let _ = result; Ok(()) }
    /// ```
    ///
    /// A call the server answers with a task (2026-07-28, the tasks
    /// extension), or one made with
    /// [`task_support`](RequestBuilder::task_support)`(TaskSupport::Required)`
    /// (2025-11-25: the tool's listing says it must run as a task), runs as
    /// a task: the future polls it and resolves to its result; its status
    /// messages reach [`on_progress`](RequestBuilder::on_progress); its
    /// deadline is the call's [`max_time`](RequestBuilder::max_time).
    /// Dropping that future before the task ends sends `tasks/cancel` for
    /// it (from a task of its own, on the current tokio runtime), as
    /// dropping a plain call's future sends `notifications/cancelled`; use
    /// [`call_tool_as_task`](Self::call_tool_as_task) for a handle that
    /// outlives the call.
    pub fn call_tool<'a, A: Serialize + Send + 'a>(
        &'a self,
        name: impl Into<Cow<'a, str>>,
        arguments: A,
    ) -> RequestBuilder<'a, CallToolResult> {
        #[derive(Serialize)]
        struct CallParams<'a, A> {
            name: Cow<'a, str>,
            arguments: A,
        }
        let params = CallParams {
            name: name.into(),
            arguments,
        };
        let mut builder = self.request_sized(CallTool::NAME, params);
        builder.decode = decode_tool_result;
        builder.follow_task = true;
        builder
    }

    /// `resources/read`.
    pub fn read_resource(&self, uri: impl Into<String>) -> RequestBuilder<'_, ReadResourceResult> {
        self.request_sized(ReadResource::NAME, ReadResourceParams::new(uri))
    }

    /// `resources/subscribe` (legacy era; in 2026-07-28 use [`Client::listen`]).
    pub async fn subscribe_resource(&self, uri: impl Into<String>) -> Result<(), ClientError> {
        self.legacy_only(Subscribe::NAME)?;
        self.request_sized::<_, RawJson>(Subscribe::NAME, SubscribeParams::new(uri))
            .await
            .map(drop)
    }

    /// `resources/unsubscribe` (legacy era).
    pub async fn unsubscribe_resource(&self, uri: impl Into<String>) -> Result<(), ClientError> {
        self.legacy_only(Unsubscribe::NAME)?;
        self.request_sized::<_, RawJson>(Unsubscribe::NAME, SubscribeParams::new(uri))
            .await
            .map(drop)
    }

    /// `subscriptions/listen` (2026-07-28): opens a long-lived subscription,
    /// without timeout. The notifications it carries reach the handler and
    /// [`Client::list_changed`]; the returned future completes when the
    /// server ends the subscription. Dropping it cancels the subscription.
    pub fn listen(&self, filter: SubscriptionFilter) -> ResponseFuture<ListenResult> {
        if let Err(e) = self.modern_only(Listen::NAME) {
            return ResponseFuture::failed(self, Listen::NAME, decode_typed, e);
        }
        self.request_sized(Listen::NAME, ListenParams::new(filter))
            .no_timeout()
            .send()
    }

    /// `prompts/get` with string arguments.
    pub fn get_prompt<K: Into<String>, V: Into<String>>(
        &self,
        name: impl Into<String>,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> RequestBuilder<'_, GetPromptResult> {
        let mut params = GetPromptParams::new(name);
        for (k, v) in arguments {
            params = params.with_argument(k, v);
        }
        self.request_sized(GetPrompt::NAME, params)
    }

    /// `completion/complete`.
    pub fn complete(&self, params: &CompleteParams) -> RequestBuilder<'_, CompleteResult> {
        self.request_typed(Complete::NAME, params)
    }

    fn legacy_only(&self, method: &str) -> Result<(), ClientError> {
        match self.protocol_version() {
            Some(v) if v.era() == Era::Modern => Err(ClientError::NotInRevision {
                method: method.into(),
                version: v,
            }),
            _ => Ok(()),
        }
    }

    fn modern_only(&self, method: &str) -> Result<(), ClientError> {
        match self.protocol_version() {
            Some(v) if v.era() == Era::Legacy => Err(ClientError::NotInRevision {
                method: method.into(),
                version: v,
            }),
            _ => Ok(()),
        }
    }
}

impl RequestBuilder<'_, CallToolResult> {
    /// How the tool's definition says it runs as a task
    /// ([`Tool::task_support`](mcp_proto::schema::Tool::task_support), from
    /// its listing). [`TaskSupport::Required`] runs the call as a task (the
    /// request asks for one in 2025-11-25, where a server refuses such a
    /// tool called plainly); anything else is a plain call (the default).
    /// In 2026-07-28 tools say nothing of tasks and the server decides:
    /// the call follows a task it answers with either way.
    ///
    /// ```no_run
    /// # async fn f(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
    /// use mcp_proto::schema::Tool;
    ///
    /// let tools = client.list_all::<Tool>().await?;
    /// let Some(research) = tools.iter().find(|t| t.name == "research") else { return Ok(()) };
    /// let result = client
    ///     .call_tool(&research.name, serde_json::json!({"topic": "rust"}))
    ///     .task_support(research.task_support())
    ///     .await?;
    /// # let _ = result; Ok(()) }
    /// ```
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.params = match (support, self.params) {
            (TaskSupport::Required, Params::Raw(Some(p))) => Params::Task(p),
            (TaskSupport::Required, params) => params,
            (_, Params::Task(p)) => Params::Raw(Some(p)),
            (_, params) => params,
        };
        self
    }
}

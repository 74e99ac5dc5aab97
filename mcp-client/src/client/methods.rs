//! The typed MCP calls: logging, ping, lists, tools, resources, prompts.

use std::borrow::Cow;

use mcp_proto::schema::{
    CallToolParams, CallToolResult, CompleteParams, CompleteResult, GetPromptParams,
    GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, ListenParams, LoggingLevel, Page, PageItem, PaginatedParams, Prompt,
    ReadResourceParams, ReadResourceResult, Resource, ResourceTemplate, SubscribeParams,
    SubscriptionFilter, Tool,
};
use mcp_proto::{Era, RawJson};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::request::MetaSpec;
use super::{Client, Command, RequestBuilder, ResponseFuture, decode};
use crate::error::ClientError;

impl Client {
    /// Sets the server's minimum log level: `logging/setLevel` in the legacy
    /// era; the `_meta` log level of every later request in 2026-07-28.
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        if self.era() == Some(Era::Modern) {
            return self.send(Command::SetLogLevel(Some(level)));
        }
        self.request_with("logging/setLevel", &serde_json::json!({ "level": level }))
            .send()
            .await
            .map(drop)
    }

    /// `ping` (legacy era; 2026-07-28 has no ping: this sends `server/discover` instead).
    pub async fn ping(&self) -> Result<(), ClientError> {
        let method = if self.era() == Some(Era::Modern) {
            "server/discover"
        } else {
            "ping"
        };
        self.request_raw(method, None).send().await.map(drop)
    }

    /// One page of any paginated list, named by its item type:
    /// `client.list_page::<Tool>(None)` sends `tools/list`. See
    /// [`Page`](mcp_proto::schema::Page) for why every list shares one shape.
    pub async fn list_page<T: PageItem + DeserializeOwned>(
        &self,
        cursor: Option<String>,
    ) -> Result<Page<T>, ClientError> {
        self.request_lazy(T::METHOD, PaginatedParams::new(cursor))
            .send_typed()
            .await
    }

    /// Every item of a paginated list, following cursors (up to the page cap,
    /// [`ClientBuilder::max_list_pages`](crate::ClientBuilder::max_list_pages)): `client.list_all::<Prompt>()`.
    pub async fn list_all<T: PageItem + DeserializeOwned>(&self) -> Result<Vec<T>, ClientError> {
        let mut all = Vec::new();
        self.paginate(T::METHOD, |page: Page<T>| {
            all.extend(page.items);
            Ok(page.next_cursor)
        })
        .await?;
        Ok(all)
    }

    /// One page of `tools/list`.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, ClientError> {
        self.list_page(cursor).await
    }

    /// Every tool, following cursors (up to the page cap).
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.list_all().await
    }

    /// Every page of a list method, raw: each page's result object as received.
    pub async fn list_all_raw(&self, method: &str) -> Result<Vec<RawJson>, ClientError> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Cursor {
            next_cursor: Option<String>,
        }
        let mut pages = Vec::new();
        self.paginate(method.to_owned(), |raw: RawJson| {
            let next: Cursor = decode(method, &raw)?;
            pages.push(raw);
            Ok(next.next_cursor)
        })
        .await?;
        Ok(pages)
    }

    /// The one cursor loop behind every `list_all*`: requests `method` page
    /// by page, hands each decoded page to `on_page`, which returns the page's
    /// `nextCursor`, and stops when a page has none (an empty string is a
    /// valid cursor). More than [`ClientBuilder::max_list_pages`](crate::ClientBuilder::max_list_pages) pages is
    /// [`ClientError::TooManyPages`].
    pub async fn paginate<R: DeserializeOwned>(
        &self,
        method: impl Into<Cow<'static, str>>,
        mut on_page: impl FnMut(R) -> Result<Option<String>, ClientError>,
    ) -> Result<(), ClientError> {
        let method = method.into();
        let mut cursor = None;
        for _ in 0..self.shared.max_list_pages {
            let page: R = self
                .request_lazy(method.clone(), PaginatedParams::new(cursor.take()))
                .send_typed()
                .await?;
            match on_page(page)? {
                Some(c) => cursor = Some(c),
                None => return Ok(()),
            }
        }
        Err(ClientError::TooManyPages {
            method: method.into(),
            limit: self.shared.max_list_pages,
        })
    }

    /// Calls a tool with JSON arguments. For progress (which then also
    /// resets the timeout) use [`call_tool_with_args`](Self::call_tool_with_args)
    /// and [`RequestBuilder::progress`] or [`RequestBuilder::on_progress`].
    pub async fn call_tool(
        &self,
        name: impl AsRef<str>,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_with_args(name.as_ref(), &arguments)
            .send_typed()
            .await
    }

    /// A `tools/call` request whose arguments are any serializable value,
    /// encoded straight into the request (no intermediate `serde_json::Value`,
    /// no copy of large arguments).
    ///
    /// ```no_run
    /// # async fn f(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
    /// #[derive(serde::Serialize)]
    /// struct Echo<'a> { text: &'a str }
    /// let result: mcp_proto::schema::CallToolResult =
    ///     client.call_tool_with_args("echo", &Echo { text: "hi" }).send_typed().await?;
    /// # Ok(()) }
    /// ```
    pub fn call_tool_with_args<'a, A: Serialize + Sync + ?Sized>(
        &'a self,
        name: &'a str,
        arguments: &'a A,
    ) -> RequestBuilder<'a> {
        // Written directly (not with `#[serde(flatten)]`): this is the hot path.
        #[derive(Serialize)]
        struct CallParams<'a, A: ?Sized> {
            #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
            meta: Option<&'a MetaSpec<'a>>,
            name: &'a str,
            arguments: &'a A,
        }
        self.request_encoded("tools/call", move |meta: &MetaSpec<'_>, capacity| {
            RawJson::from_value_with_capacity(
                &CallParams {
                    meta: (!meta.is_empty()).then_some(meta),
                    name,
                    arguments,
                },
                capacity,
            )
        })
    }

    /// A `tools/call` request to configure (timeout, progress callback) before sending.
    pub fn call_tool_with(&self, params: &CallToolParams) -> RequestBuilder<'_> {
        self.request_with("tools/call", params)
    }

    /// One page of `resources/list`.
    pub async fn list_resources(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourcesResult, ClientError> {
        self.list_page(cursor).await
    }

    /// Every resource, following cursors.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all().await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.list_page(cursor).await
    }

    /// Every resource template, following cursors.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all().await
    }

    /// `resources/read`.
    pub async fn read_resource(
        &self,
        uri: impl Into<String>,
    ) -> Result<ReadResourceResult, ClientError> {
        self.request_lazy("resources/read", ReadResourceParams::new(uri))
            .send_typed()
            .await
    }

    /// `resources/subscribe` (legacy era; in 2026-07-28 use [`Client::listen`]).
    pub async fn subscribe_resource(&self, uri: impl Into<String>) -> Result<(), ClientError> {
        self.legacy_only("resources/subscribe")?;
        self.request_lazy("resources/subscribe", SubscribeParams::new(uri))
            .send()
            .await
            .map(drop)
    }

    /// `resources/unsubscribe` (legacy era).
    pub async fn unsubscribe_resource(&self, uri: impl Into<String>) -> Result<(), ClientError> {
        self.legacy_only("resources/unsubscribe")?;
        self.request_lazy("resources/unsubscribe", SubscribeParams::new(uri))
            .send()
            .await
            .map(drop)
    }

    /// `subscriptions/listen` (2026-07-28): opens a long-lived subscription.
    /// The notifications it carries reach the handler and [`Client::list_changed`];
    /// the returned future completes when the server ends the subscription.
    /// Dropping it cancels the subscription.
    pub fn listen(&self, filter: SubscriptionFilter) -> ResponseFuture {
        if let Err(e) = self.modern_only("subscriptions/listen") {
            return ResponseFuture::failed(self, e);
        }
        self.request_lazy("subscriptions/listen", ListenParams::new(filter))
            .no_timeout()
            .send()
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(
        &self,
        cursor: Option<String>,
    ) -> Result<ListPromptsResult, ClientError> {
        self.list_page(cursor).await
    }

    /// Every prompt, following cursors.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all().await
    }

    /// `prompts/get` with string arguments.
    pub async fn get_prompt<K: Into<String>, V: Into<String>>(
        &self,
        name: impl Into<String>,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<GetPromptResult, ClientError> {
        let mut params = GetPromptParams::new(name);
        for (k, v) in arguments {
            params = params.with_argument(k, v);
        }
        self.request_lazy("prompts/get", params).send_typed().await
    }

    /// `completion/complete`.
    pub async fn complete(&self, params: &CompleteParams) -> Result<CompleteResult, ClientError> {
        self.request_with("completion/complete", params)
            .send_typed()
            .await
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

//! Ties each method name to its param and result types.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::schema::{
    CallToolParams, CallToolResult, DiscoverParams, DiscoverResult, EmptyResult, InitializeParams,
    InitializeResult, ListToolsResult, PaginatedParams,
};

/// A request method: its wire name, params and result.
pub trait Method {
    /// The wire name, e.g. `"tools/call"`.
    const NAME: &'static str;
    /// The params type.
    type Params: Serialize + Send + 'static;
    /// The result type.
    type Result: DeserializeOwned + Send + 'static;
}

macro_rules! methods {
    ($($(#[$doc:meta])* $ty:ident = $name:literal, $params:ty => $result:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        #[non_exhaustive]
        pub struct $ty;
        impl Method for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
            type Result = $result;
        }
    )*};
}

methods! {
    /// `initialize` (legacy era).
    Initialize = "initialize", InitializeParams => InitializeResult;
    /// `server/discover` (2026-07-28).
    Discover = "server/discover", DiscoverParams => DiscoverResult;
    /// `ping` (legacy era).
    Ping = "ping", EmptyResult => EmptyResult;
    /// `tools/list`.
    ListTools = "tools/list", PaginatedParams => ListToolsResult;
    /// `tools/call`.
    CallTool = "tools/call", CallToolParams => CallToolResult;
}

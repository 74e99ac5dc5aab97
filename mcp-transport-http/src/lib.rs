//! Streamable HTTP transport for MCP, on hyper 1 (work in progress docs).

mod client;
mod error;
mod headers;
pub mod sse;
mod transport;

pub use client::{
    AuthProvider, BearerToken, BoxFuture, CLOSE_TIMEOUT, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_BODY_SIZE, DEFAULT_MAX_RESUME_ATTEMPTS, DEFAULT_REISSUE_METHODS,
    DEFAULT_REQUEST_TIMEOUT, HttpTransportBuilder, INITIAL_BACKOFF, MAX_BACKOFF, MAX_REDIRECTS,
    RequestBody,
};
pub use error::HttpError;
pub use sse::DEFAULT_MAX_EVENT_SIZE as DEFAULT_MAX_SSE_EVENT_SIZE;
pub use transport::HttpTransport;

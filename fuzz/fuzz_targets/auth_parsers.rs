#![no_main]
//! `WWW-Authenticate`, the discovery metadata and the URLs taken from them.
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_auth::fuzzing::auth_parsers(data));

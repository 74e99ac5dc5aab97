#![no_main]
//! The sans-IO session under arbitrary server behaviour and time.
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_client::fuzzing::session(data));

#![no_main]
//! The envelope decoder: the scanner's fast path against serde_json; the compact writer too.
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_proto::jsonrpc::fuzzing::envelope(data));

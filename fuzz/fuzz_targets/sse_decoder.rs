#![no_main]
//! SSE decoder: no panic, same events whatever the chunking, bounded buffer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_transport_http::sse::fuzzing::sse_decoder(data));

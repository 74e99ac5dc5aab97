#![no_main]
//! The stdio line codec: any split gives what each line gives alone.
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_transport_stdio::fuzzing::stdio_codec(data));

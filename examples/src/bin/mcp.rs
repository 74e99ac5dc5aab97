//! The `mcp` command-line client (placeholder until the client lands).
fn main() {
    for v in mcp_proto::ProtocolVersion::ALL {
        println!("{v} ({} era)", v.era());
    }
}

//! What `ServerConfig::transport` puts on the wire for an http entry.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use mcp_config::{ConfigFile, Resolver};

/// A listener that records each request head and answers 404.
fn recording_server() -> (u16, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut head = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
            if tx.send(head).is_err() {
                return;
            }
        }
    });
    (port, rx)
}

#[tokio::test]
async fn http_entry_sends_its_expanded_headers() {
    let (port, heads) = recording_server();
    let text = r#"{"mcpServers": {"api": {
        "type": "http",
        "url": "http://127.0.0.1:${PORT}/mcp",
        "headers": {"Authorization": "Bearer ${TOKEN}", "X-Team": "${TEAM:-platform}"}
    }}}"#;
    let file = ConfigFile::parse(".mcp.json", text, None).unwrap();
    let resolver =
        Resolver::new().env_vars([("PORT", port.to_string()), ("TOKEN", "tok-123".into())]);
    let server = file.resolve(&resolver).unwrap().remove(0);
    let connect = mcp_client::Client::builder("t", "0").connect(server.transport().unwrap());
    // The server refuses everything: the connection fails, bounded.
    let result = tokio::time::timeout(Duration::from_secs(30), connect)
        .await
        .unwrap();
    assert!(result.is_err());
    let head = heads
        .recv_timeout(Duration::from_secs(5))
        .unwrap()
        .to_ascii_lowercase();
    assert!(head.starts_with("post /mcp "), "{head}");
    assert!(head.contains("authorization: bearer tok-123\r\n"), "{head}");
    assert!(head.contains("x-team: platform\r\n"), "{head}");
}

#[tokio::test]
async fn a_missing_program_is_a_clear_error() {
    let text = r#"{"mcpServers": {"gone": {"command": "/nonexistent/mcp-server-xyz"}}}"#;
    let file = ConfigFile::parse(".mcp.json", text, None).unwrap();
    let server = file.resolve(&Resolver::new()).unwrap().remove(0);
    let err = server.transport().err().unwrap();
    test_support::assert_causes_once(&err);
    let text = mcp_proto::error::chain(&err).to_string();
    assert!(text.contains("\"gone\""), "{text}");
    assert!(text.contains("not found"), "{text}");
}

#[tokio::test]
async fn a_program_from_a_variable_is_not_shown() {
    let text = r#"{"mcpServers": {"gone": {"command": "${SERVER_BIN}"}}}"#;
    let file = ConfigFile::parse(".mcp.json", text, None).unwrap();
    let resolver = Resolver::new().env_vars([("SERVER_BIN", "/nonexistent/secret-path-xyz")]);
    let server = file.resolve(&resolver).unwrap().remove(0);
    // Nowhere in the chain a reporter prints.
    let err = server.transport().err().unwrap();
    let text = mcp_proto::error::chain(&err).to_string();
    assert!(!text.contains("secret-path-xyz"), "{text}");
    assert!(text.contains("not found"), "{text}");
}

#[test]
fn a_url_from_a_variable_is_not_shown_in_errors() {
    let text = r#"{"mcpServers": {"api": {"type": "http", "url": "${API_URL}"}}}"#;
    let file = ConfigFile::parse(".mcp.json", text, None).unwrap();
    let resolver = Resolver::new().env_vars([("API_URL", "ftp://token-abc@host/mcp")]);
    let server = file.resolve(&resolver).unwrap().remove(0);
    let err = server.transport().err().unwrap();
    let text = mcp_proto::error::chain(&err).to_string();
    assert!(!text.contains("token-abc"), "{text}");
    assert!(text.contains("invalid URL <redacted>"), "{text}");
}

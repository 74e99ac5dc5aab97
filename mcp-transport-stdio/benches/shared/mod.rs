//! Input shared by the framing benches.

/// About 8 MiB of lines, each one message of `size` bytes with its newline.
pub(crate) fn stream(size: usize) -> Vec<u8> {
    let line = if size <= 64 {
        // {"jsonrpc":"2.0","id":1,"result":{"ok":true,"v":"…"}} padded to 63 + \n
        let head = r#"{"jsonrpc":"2.0","id":1,"result":{"ok":true,"v":""#;
        let tail = r#""}}"#;
        let pad = size - 1 - head.len() - tail.len();
        format!("{head}{}{tail}\n", "x".repeat(pad))
    } else {
        // A tools/call result carrying text with some escapes, as servers send.
        let head = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#;
        let tail = r#""}],"isError":false}}"#;
        let unit = r#"lorem ipsum dolor sit amet, \"quoted\" \u00e9\n"#;
        let mut text = String::with_capacity(size);
        while text.len() + unit.len() < size - 1 - head.len() - tail.len() {
            text.push_str(unit);
        }
        while text.len() < size - 1 - head.len() - tail.len() {
            text.push('x');
        }
        format!("{head}{text}{tail}\n")
    };
    assert_eq!(line.len(), size);
    line.repeat((8 * 1024 * 1024 / size).max(1)).into_bytes()
}

//! How close [`estimate_tokens`] is to a real tokenizer: OpenAI's
//! `o200k_base` (GPT-4o and later) and `cl100k_base` (GPT-4), from the
//! `tiktoken-rs` crate (a dev-dependency: its vocabularies ship inside
//! it), on the repository's own texts:
//!
//! - every tool definition of the catalog (`examples/catalog/shapes.json`,
//!   real servers' tools) in the Anthropic shape, and the tool search
//!   catalog (`tests/search/catalog.json`) when present;
//! - prose and tables (README.md, BENCHMARKS.md), Rust and Python source,
//!   pretty-printed JSON, and a sample of seven languages
//!   (`tests/data/multilingual.txt`).
//!
//! Prints the table (`--nocapture`) and fails when the estimate leaves the
//! bounds the `tokens` module documents.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use mcp_tools::estimate_tokens;
use serde_json::{Value, json};

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap()
}

/// Every tool of a catalog file (`{"servers": [{"tools": [...]}]}`) as
/// the Anthropic definition a model is sent.
fn definitions(path: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(root().join(path)) else {
        return Vec::new();
    };
    let all: Value = serde_json::from_str(&text).unwrap();
    all["servers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["tools"].as_array().cloned().unwrap_or_default())
        .map(|t| {
            serde_json::to_string(&json!({
                "name": t["name"],
                "description": t["description"],
                "input_schema": t["inputSchema"],
            }))
            .unwrap()
        })
        .collect()
}

#[test]
fn the_estimate_is_close_to_o200k_and_cl100k() {
    let o200k = tiktoken_rs::o200k_base().unwrap();
    let cl100k = tiktoken_rs::cl100k_base().unwrap();
    let count = |t: &str| o200k.encode_ordinary(t).len();

    // Tool definitions, one by one and together.
    let mut defs = definitions("examples/catalog/shapes.json");
    let catalog_defs = defs.len();
    defs.extend(definitions("mcp-tools/tests/search/catalog.json"));
    let (mut est, mut real) = (0, 0);
    let (mut low, mut high) = (f64::MAX, 0f64);
    for d in &defs {
        let (e, r) = (estimate_tokens(d), count(d));
        est += e;
        real += r;
        let ratio = e as f64 / r as f64;
        low = low.min(ratio);
        high = high.max(ratio);
    }
    let defs_ratio = est as f64 / real as f64;
    println!(
        "{} definitions ({catalog_defs} from shapes.json): estimate {est}, o200k {real}: {defs_ratio:.3} (each {low:.3}..{high:.3})",
        defs.len()
    );
    assert!((1.0..=1.15).contains(&defs_ratio), "{defs_ratio}");
    assert!(low >= 0.85 && high <= 1.3, "{low}..{high}");

    // Texts of every kind.
    let (mut est, mut real, mut real_cl) = (0, 0, 0);
    for path in [
        "README.md",
        "BENCHMARKS.md",
        "mcp-tools/src/toolbox.rs",
        "mcp-proto/src/schema/tools.rs",
        "peers/python_server.py",
        "examples/catalog/shapes.json",
        "mcp-tools/tests/data/multilingual.txt",
    ] {
        let text = read(path);
        let (e, r, c) = (
            estimate_tokens(&text),
            count(&text),
            cl100k.encode_ordinary(&text).len(),
        );
        let ratio = e as f64 / r as f64;
        println!(
            "{path:40} {:7} bytes  o200k {r:6}  cl100k {c:6}  estimate {e:6}  {ratio:.3}",
            text.len()
        );
        assert!((0.85..=1.25).contains(&ratio), "{path}: {ratio}");
        est += e;
        real += r;
        real_cl += c;
    }
    let ratio = est as f64 / real as f64;
    println!("all texts: estimate {est}, o200k {real} ({ratio:.3}), cl100k {real_cl}");
    assert!((0.95..=1.1).contains(&ratio), "{ratio}");
}

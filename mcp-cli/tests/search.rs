//! `mcp tools --search QUERY [--limit K]` (issue 41, item 5): ranked, best
//! first, over one server or every configured server, in the shapes `mcp
//! tools` prints. Real peers: server-everything and the Python SDK over
//! stdio.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use common::*;
use serde_json::{Value, json};

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[test]
fn one_server_ranked_best_first_in_the_tools_shape() {
    let Some(server) = everything_stdio() else {
        return;
    };
    let all = mcp(&["--stdio", &server, "--json", "tools"]);
    assert_code(&all, 0);
    let all = all.json();

    let r = mcp(&[
        "--stdio",
        &server,
        "--json",
        "tools",
        "--search",
        "add up two numbers",
        "--limit",
        "3",
    ]);
    assert_code(&r, 0);
    let found = r.json();
    let found_names = names(&found);
    assert_eq!(found_names[0], "get-sum", "{found_names:?}");
    assert!(found_names.len() <= 3, "{found_names:?}");
    // Each hit is the tool object `mcp tools --json` prints, as sent.
    for hit in found.as_array().unwrap() {
        assert!(all.as_array().unwrap().contains(hit), "{hit}");
    }

    // Human output: the `tools` lines, best first; default limit 10.
    let r = mcp(&[
        "--stdio",
        &server,
        "tools",
        "--search",
        "echo a message back",
    ]);
    assert_code(&r, 0);
    assert!(
        r.stdout.starts_with("echo(message: string)"),
        "{}",
        r.stdout
    );
    let listed = r
        .stdout
        .lines()
        .filter(|l| !l.starts_with([' ', '(']))
        .count();
    assert!((1..=10).contains(&listed), "{}", r.stdout);

    // Nothing matches: an empty list.
    let r = mcp(&["--stdio", &server, "--json", "tools", "--search", "zzzqqq"]);
    assert_code(&r, 0);
    assert_eq!(r.json(), json!([]));
}

#[test]
fn every_configured_server_as_server_slash_tool() {
    let Some((node, node_args)) = test_support::everything().map(|p| p.arg("stdio").to_strings())
    else {
        return;
    };
    let Some((py, py_args)) = python_peer("py_lowlevel.py").map(|p| p.to_strings()) else {
        return;
    };
    let dir = temp_path("search-config");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mcp.json");
    std::fs::write(
        &file,
        json!({"mcpServers": {
            "everything": {"type": "stdio", "command": node, "args": node_args},
            "python": {"type": "stdio", "command": py, "args": py_args},
        }})
        .to_string(),
    )
    .unwrap();
    let config = file.to_str().unwrap();
    let all = mcp(&["--config", config, "--json", "tools"]);
    assert_code(&all, 0);
    let all = all.json();

    let r = mcp(&[
        "--config",
        config,
        "--json",
        "tools",
        "--search",
        "what time is it",
        "--limit",
        "2",
    ]);
    assert_code(&r, 0);
    let found = r.json();
    assert_eq!(names(&found)[0], "python/now", "{found}");
    assert!(names(&found).len() <= 2);
    for hit in found.as_array().unwrap() {
        assert!(all.as_array().unwrap().contains(hit), "{hit}");
    }

    let r = mcp(&[
        "--config",
        config,
        "tools",
        "--search",
        "sum of two numbers",
    ]);
    assert_code(&r, 0);
    assert!(r.stdout.starts_with("everything/get-sum("), "{}", r.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn limit_needs_search() {
    let r = mcp(&["tools", "--limit", "3"]);
    assert_code(&r, 2);
    assert!(r.stderr.contains("--search"), "{}", r.stderr);
}

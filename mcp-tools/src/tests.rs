//! Unit tests: folding, globs, sanitizing, naming and collisions, argument checking.

use std::collections::HashSet;

use mcp_proto::schema::CallToolResult;
use serde_json::{Value, json};

use crate::fold::base64_decoded_len;
use crate::names::with_suffix;
use crate::names::{NamingInput, assign_names};
use crate::*;

fn result(v: Value) -> CallToolResult {
    serde_json::from_value(v).unwrap()
}

// ---- folding ---------------------------------------------------------------

#[test]
fn fold_joins_text_blocks_with_newlines() {
    let r = result(json!({"content": [
        {"type": "text", "text": "line one"},
        {"type": "text", "text": "line two\nand three"},
    ]}));
    assert_eq!(fold_result(&r), "line one\nline two\nand three");
}

#[test]
fn fold_describes_every_other_block_in_order() {
    let r = result(json!({"content": [
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "text", "text": "between"},
        {"type": "audio", "data": "AAAAAA==", "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "file:///r.txt", "name": "r.txt", "mimeType": "text/plain"},
        {"type": "resource", "resource": {"uri": "file:///t.md", "mimeType": "text/markdown", "text": "# Title\nbody"}},
        {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/octet-stream", "blob": "AAECAw=="}},
        {"type": "resource", "resource": {"uri": "file:///empty"}},
        {"type": "hologram", "frames": 3},
    ]}));
    assert_eq!(
        fold_result(&r),
        "[image: image/png, 3 bytes]\n\
         between\n\
         [audio: audio/wav, 4 bytes]\n\
         [resource link: file:///r.txt (r.txt)]\n\
         [resource: file:///t.md]\n# Title\nbody\n\
         [resource: file:///b.bin, application/octet-stream, 4 bytes]\n\
         [resource: file:///empty]\n\
         [hologram content]"
    );
}

#[test]
fn fold_appends_structured_content_only_without_text() {
    let only = result(json!({"content": [], "structuredContent": {"a": [1, 2]}}));
    assert_eq!(fold_result(&only), r#"{"a":[1,2]}"#);

    let with_image = result(json!({
        "content": [{"type": "image", "data": "", "mimeType": "image/gif"}],
        "structuredContent": 7,
    }));
    assert_eq!(fold_result(&with_image), "[image: image/gif, 0 bytes]\n7");

    let with_text = result(json!({
        "content": [{"type": "text", "text": "{\"a\":1}"}],
        "structuredContent": {"a": 1},
    }));
    assert_eq!(fold_result(&with_text), "{\"a\":1}", "not appended twice");

    // Textual embedded resources count as text.
    let with_resource_text = result(json!({
        "content": [{"type": "resource", "resource": {"uri": "u:", "text": "t"}}],
        "structuredContent": {"a": 1},
    }));
    assert_eq!(fold_result(&with_resource_text), "[resource: u:]\nt");
}

#[test]
fn fold_of_an_empty_result_is_empty() {
    assert_eq!(fold_result(&result(json!({}))), "");
}

#[test]
fn base64_sizes() {
    for (data, n) in [
        ("", 0),
        ("QQ==", 1),
        ("QUI=", 2),
        ("QUJD", 3),
        ("QUJDRA==", 4),
        ("QUJD\nRA==", 4),
        ("QQ", 1),
    ] {
        assert_eq!(base64_decoded_len(data), n, "{data:?}");
    }
}

// ---- globs and filters -----------------------------------------------------

#[test]
fn glob_table() {
    let cases: &[(&str, &str, bool)] = &[
        ("echo", "echo", true),
        ("echo", "echo2", false),
        ("echo", "ech", false),
        ("*", "anything_at-all", true),
        ("*", "a.b", false),
        ("*", "", true),
        ("**", "a.b/c.d", true),
        ("read_*", "read_file", true),
        ("read_*", "read_", true),
        ("read_*", "write_file", false),
        ("admin.*", "admin.users", true),
        ("admin.*", "admin.users.delete", false),
        ("admin.**", "admin.users.delete", true),
        ("admin.**", "admin", false),
        ("*.delete", "users.delete", true),
        ("*.delete", "admin.users.delete", false),
        ("**.delete", "admin.users.delete", true),
        ("**delete", "delete", true),
        ("a/*/c", "a/b/c", true),
        ("a/*/c", "a/b/x/c", false),
        ("a/**/c", "a/b/x/c", true),
        ("*_*_*", "a_b_c", true),
        ("*x*", "abc", false),
        ("***", "a.b", true),
        ("é*", "été", true),
    ];
    for (pattern, name, want) in cases {
        assert_eq!(
            Glob::new(*pattern).matches(name),
            *want,
            "{pattern:?} vs {name:?}"
        );
    }
}

#[test]
fn glob_matching_is_not_exponential() {
    let g = Glob::new("*a*a*a*a*a*a*a*a*a*a*a*a*b");
    assert!(!g.matches(&"a".repeat(200)));
}

#[test]
fn filters_include_or_exclude() {
    assert!(Filter::All.allows("x"));
    let inc = Filter::include(["a*", "b"]);
    assert!(inc.allows("abc") && inc.allows("b") && !inc.allows("bc"));
    let exc = Filter::exclude(vec![String::from("a*")]);
    assert!(!exc.allows("abc") && exc.allows("b"));
    assert!(!Filter::include(Vec::<&str>::new()).allows("x"));
    assert!(Filter::exclude(Vec::<&str>::new()).allows("x"));
}

/// The events logged while `f` runs, one line each (`LEVEL field=value ...`).
fn logged(f: impl FnOnce()) -> Vec<String> {
    use std::fmt::Write as _;
    use std::sync::{Arc, Mutex};
    use tracing::field::{Field, Visit};
    use tracing::{Event, Metadata, span};

    struct Capture(Arc<Mutex<Vec<String>>>);
    struct Line(String);
    impl Visit for Line {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
    impl tracing::Subscriber for Capture {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
            span::Id::from_u64(1)
        }
        fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
        fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
        fn event(&self, e: &Event<'_>) {
            let mut line = Line(e.metadata().level().to_string());
            e.record(&mut line);
            self.0.lock().unwrap().push(line.0);
        }
        fn enter(&self, _: &span::Id) {}
        fn exit(&self, _: &span::Id) {}
    }
    let events = Arc::new(Mutex::new(Vec::new()));
    tracing::subscriber::with_default(Capture(events.clone()), f);
    events.lock().unwrap().clone()
}

/// Issue 36: a pattern that matches no tool is reported, with what is
/// literal when it looks like another glob dialect's syntax.
#[test]
fn a_pattern_matching_no_tool_is_warned_about() {
    let names = ["t1", "t2", "read_file"];
    let f = Filter::include(["t[0-9]*", "read_*", "wirte_*"]);
    let unmatched: Vec<&str> = f.unmatched(names).iter().map(|g| g.as_str()).collect();
    assert_eq!(unmatched, ["t[0-9]*", "wirte_*"]);
    let lines = logged(|| f.warn_unmatched("files", names));
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("WARN"), "{lines:?}");
    assert!(
        lines[0].contains("pattern=\"t[0-9]*\"")
            && lines[0].contains("server=\"files\"")
            && lines[0].contains("kind=\"include\"")
            && lines[0].contains("only `*` and `**` are special")
            && lines[0].contains("`[`, `]` are matched literally"),
        "{lines:?}"
    );
    assert!(lines[1].contains("pattern=\"wirte_*\"") && lines[1].contains("hint=\"\""));
    // Exclusions too: an exclude that matches nothing protects nothing.
    let lines = logged(|| Filter::exclude(["admin.?"]).warn_unmatched("s", names));
    assert!(
        lines.len() == 1 && lines[0].contains("kind=\"exclude\""),
        "{lines:?}"
    );
    // Every pattern matching: nothing said.
    assert!(logged(|| Filter::include(["t*"]).warn_unmatched("s", names)).is_empty());
    assert!(logged(|| Filter::All.warn_unmatched("s", names)).is_empty());
}

// ---- sanitizing ------------------------------------------------------------

#[test]
fn sanitize_makes_every_name_valid() {
    for name in [
        "",
        "ok",
        "with space",
        "dots.and/slashes",
        "日本語",
        "emoji🙂tool",
        &"x".repeat(64),
        &"y".repeat(65),
        &"é".repeat(40),
        "tab\there",
    ] {
        let s = sanitize_name(name);
        assert!(is_valid_model_name(&s), "{name:?} -> {s:?}");
    }
}

#[test]
fn sanitize_keeps_valid_names_and_long_names_distinct() {
    assert_eq!(sanitize_name("get-weather_v2"), "get-weather_v2");
    let a = format!("{}a", "p".repeat(70));
    let b = format!("{}b", "p".repeat(70));
    let (sa, sb) = (sanitize_name(&a), sanitize_name(&b));
    assert_eq!(sa.len(), MAX_TOOL_NAME_LEN);
    assert_ne!(sa, sb);
    assert!(sa.starts_with(&"p".repeat(55)));
    // Stable across runs (the hash is FNV-1a, not a random hasher).
    assert_eq!(sanitize_name(&a), sa);
    assert_eq!(sanitize_name(""), "_");
}

#[test]
fn suffixes_fit_the_length_limit() {
    let long = "z".repeat(64);
    let s = with_suffix(&long, 12);
    assert_eq!(s.len(), 64);
    assert!(s.ends_with("_12"));
    assert_eq!(with_suffix("a", 2), "a_2");
}

// ---- naming, reverse mapping, collisions -----------------------------------

fn input<'a>(
    server: &'a str,
    prefix: &'a str,
    filter: &'a Filter,
    tools: &[&'a str],
) -> NamingInput<'a> {
    NamingInput {
        server,
        prefix,
        filter,
        tools: tools.to_vec(),
        app_only: Vec::new(),
    }
}

#[test]
fn naming_round_trips_through_the_mapping() {
    let all = Filter::All;
    let servers = [
        input("gh", "gh.", &all, &["issues/list", "pr.create", "search"]),
        input("fs", "", &all, &["read file", "search", "read_file"]),
    ];
    let (assigned, collisions) = assign_names(&servers, OnCollision::Rename);
    let names: Vec<&str> = assigned.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "gh_issues_list",
            "gh_pr_create",
            "gh_search",
            "read_file",
            "search",
            "read_file_2"
        ]
    );
    // Every name is valid and unique, and maps back to exactly one tool.
    let unique: HashSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len());
    for a in &assigned {
        assert!(is_valid_model_name(&a.name));
        let s = &servers[a.server];
        let original = s.tools[a.tool];
        // The reverse mapping leads to the tool whose sanitized name the
        // model-facing name is (or extends, when renamed).
        let base = sanitize_name(&format!("{}{}", s.prefix, original));
        assert!(
            a.name == base || a.name.starts_with(&format!("{base}_")),
            "{a:?}"
        );
    }
    // `read file` sanitizes to `read_file` and comes first, so it keeps the
    // name; the real `read_file` after it is renamed.
    assert_eq!(collisions.len(), 1);
    assert_eq!(collisions[0].tool, "read_file");
    assert_eq!(collisions[0].winner_tool, "read file");
    assert_eq!(collisions[0].renamed_to.as_deref(), Some("read_file_2"));
}

#[test]
fn an_app_only_tool_takes_no_name() {
    let all = Filter::All;
    let mut ui = input("ui", "", &all, &["refresh", "show"]);
    ui.app_only = vec![0];
    let servers = [ui, input("other", "", &all, &["refresh"])];
    let (assigned, collisions) = assign_names(&servers, OnCollision::Rename);
    let names: Vec<(usize, &str)> = assigned
        .iter()
        .map(|a| (a.server, a.name.as_str()))
        .collect();
    // The model's `refresh` is the other server's, under its own name.
    assert_eq!(names, [(0, "show"), (1, "refresh")]);
    assert!(collisions.is_empty());
}

#[test]
fn earlier_server_wins_and_renames_are_deterministic() {
    let all = Filter::All;
    let servers = [
        input("a", "", &all, &["x", "y"]),
        input("b", "", &all, &["x", "x_2"]),
        input("c", "", &all, &["x"]),
    ];
    let run = || assign_names(&servers, OnCollision::Rename);
    let (assigned, collisions) = run();
    let pairs: Vec<(usize, &str)> = assigned
        .iter()
        .map(|a| (a.server, a.name.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [(0, "x"), (0, "y"), (1, "x_3"), (1, "x_2"), (2, "x_4")]
    );
    assert_eq!(collisions.len(), 2);
    assert!(collisions.iter().all(|c| c.winner_server == "a"));
    assert_eq!(run(), (assigned, collisions), "same input, same names");
}

#[test]
fn drop_policy_reports_and_omits() {
    let all = Filter::All;
    let servers = [
        input("a", "", &all, &["x"]),
        input("b", "", &all, &["x", "z"]),
    ];
    let (assigned, collisions) = assign_names(&servers, OnCollision::Drop);
    let names: Vec<&str> = assigned.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["x", "z"]);
    assert_eq!(collisions[0].server, "b");
    assert_eq!(collisions[0].renamed_to, None);
}

#[test]
fn filters_apply_to_the_servers_own_names_before_the_prefix() {
    let only = Filter::include(["read_*"]);
    let servers = [input(
        "fs",
        "fs_",
        &only,
        &["read_a", "write_a", "fs_read_b"],
    )];
    let (assigned, _) = assign_names(&servers, OnCollision::Rename);
    let names: Vec<&str> = assigned.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["fs_read_a"]);
}

#[test]
fn duplicate_names_within_one_server_are_collisions_too() {
    let all = Filter::All;
    let servers = [input("a", "", &all, &["x", "x"])];
    let (assigned, collisions) = assign_names(&servers, OnCollision::Rename);
    assert_eq!(assigned[1].name, "x_2");
    assert_eq!(assigned[1].tool, 1);
    assert_eq!(collisions.len(), 1);
}

// ---- argument checking -----------------------------------------------------

#[test]
fn subset_validator_table() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": ["number", "null"]},
            "mode": {"enum": ["fast", "slow"]},
            "version": {"const": 2},
            "tags": {"type": "array", "items": {"type": "string"}},
            "nested": {
                "type": "object",
                "properties": {"deep": {"type": "boolean"}},
                "required": ["deep"],
                "additionalProperties": false,
            },
            "a/b~c": {"type": "string"},
            "anything": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": ["name"],
    });
    let ok = [
        json!({"name": "x"}),
        json!({"name": "x", "count": 3, "ratio": null, "mode": "fast", "version": 2.0}),
        json!({"name": "x", "count": 3.0, "ratio": 0.5, "tags": ["a", "b"]}),
        json!({"name": "x", "nested": {"deep": true}, "unknown": [1]}),
        json!({"name": "x", "anything": [1, 2]}), // anyOf is not checked
    ];
    for v in ok {
        assert_eq!(check_arguments(&schema, &v), Ok(()), "{v}");
    }
    let bad = [
        (json!({}), "/: missing required property `name`"),
        (json!({"name": 1}), "/name: expected string, got integer"),
        (
            json!({"name": "x", "count": 1.5}),
            "/count: expected integer, got number",
        ),
        (
            json!({"name": "x", "ratio": "high"}),
            "/ratio: expected one of number, null, got string",
        ),
        (
            json!({"name": "x", "mode": "medium"}),
            "/mode: \"medium\" is not one of \"fast\", \"slow\"",
        ),
        (
            json!({"name": "x", "version": 3}),
            "/version: must be 2, got 3",
        ),
        (
            json!({"name": "x", "tags": ["a", 2]}),
            "/tags/1: expected string, got integer",
        ),
        (
            json!({"name": "x", "nested": {}}),
            "/nested: missing required property `deep`",
        ),
        (
            json!({"name": "x", "nested": {"deep": true, "deeper": 1}}),
            "/nested/deeper: unknown property (allowed: deep)",
        ),
        (
            json!({"name": "x", "a/b~c": 1}),
            "/a~1b~0c: expected string, got integer",
        ),
        (json!([1]), "/: expected object, got array"),
    ];
    for (v, want) in bad {
        assert_eq!(check_arguments(&schema, &v), Err(want.to_owned()), "{v}");
    }
}

#[test]
fn subset_validator_caps_the_report() {
    let schema =
        json!({"type": "object", "required": (0..50).map(|i| format!("p{i}")).collect::<Vec<_>>()});
    let err = check_arguments(&schema, &json!({})).unwrap_err();
    assert_eq!(
        err.matches("missing required").count(),
        MAX_REPORTED_PROBLEMS
    );
}

#[test]
fn subset_validator_survives_hostile_schemas() {
    // Deep nesting stops at the depth limit instead of overflowing the stack.
    let mut schema = json!({"type": "string"});
    let mut value = json!(1);
    for _ in 0..120 {
        schema = json!({"type": "object", "properties": {"a": schema}});
        value = json!({"a": value});
    }
    let _ = check_arguments(&schema, &value);
    // Junk keywords are ignored.
    let junk = json!({"type": 7, "required": "name", "properties": [1], "items": true, "enum": {}});
    assert_eq!(check_arguments(&junk, &json!({"x": 1})), Ok(()));
    assert!(check_arguments(&json!(false), &json!(1)).is_err());
    assert_eq!(check_arguments(&json!(true), &json!(1)), Ok(()));
}

// ---- auto traits -------------------------------------------------------------

#[test]
fn handles_and_errors_are_send_and_sync() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<Toolbox>();
    send_sync::<McpTool>();
    send_sync::<ToolError>();
    send_sync::<ToolboxError>();
    send_sync::<ToolOutput>();
}

/// Compiles only if the futures agents spawn are `Send` (never run).
#[allow(dead_code)]
fn futures_are_send(toolbox: &Toolbox, tool: &McpTool) {
    fn send<T: Send>(_: T) {}
    send(toolbox.call("x", Value::Null));
    send(toolbox.tools());
    send(toolbox.refresh());
    send(tool.call(Value::Null));
    send(Tool::call(tool, Value::Null));
}

/// ToolError -> ClientError -> TransportError -> io::Error.
fn three_levels_deep() -> ToolError {
    let io = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the server hung up");
    ToolError::Fatal {
        tool: "echo".into(),
        source: mcp_client::ClientError::Transport(mcp_proto::transport::TransportError::from(io)),
    }
}

/// What anyhow's `{:#}`, eyre and tracing's error fields do: every level's
/// `Display`, joined, nothing skipped.
fn walk(err: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut levels = vec![err.to_string()];
    let mut next = err.source();
    while let Some(e) = next {
        levels.push(e.to_string());
        next = e.source();
    }
    levels
}

#[test]
fn a_chain_three_levels_deep_prints_each_cause_once_when_walked() {
    let err = three_levels_deep();
    let walked = walk(&err).join(": ");
    for cause in [
        "calling tool `echo` failed",
        "connection closed",
        "the server hung up",
    ] {
        assert_eq!(walked.matches(cause).count(), 1, "{cause:?} in {walked:?}");
    }
    let expected = "calling tool `echo` failed (the model cannot fix this): \
                    connection closed: the server hung up";
    assert_eq!(walked, expected);
    // The one helper and the text for the model say the same.
    assert_eq!(mcp_proto::error::chain(&err).to_string(), expected);
    assert_eq!(err.message_for_model(), expected);
}

/// Each level's Display is its own part (mcp_proto::error).
#[test]
fn errors_print_each_cause_once() {
    test_support::assert_causes_once(&three_levels_deep());
    let closed = mcp_client::ClientError::Closed(mcp_client::CloseReason::Transport(
        mcp_proto::transport::TransportError::new(
            mcp_proto::transport::TransportErrorKind::Closed,
            "server exited with status 1",
        ),
    ));
    let list = crate::ToolboxError::List {
        server: "files".into(),
        source: closed,
    };
    test_support::assert_causes_once(&list);
    assert_eq!(
        mcp_proto::error::chain(&list).to_string(),
        "listing the tools of server `files` failed: connection closed: server exited with status 1"
    );
}

/// Naming a server's tools is linear in how many it lists, however many
/// share a name (as every decode: `mcp-cli/tests/scaling.rs`); `cargo
/// xtask scaling` runs this.
#[test]
#[ignore = "timing: run by `cargo xtask scaling`"]
fn scaling_of_tool_names() {
    use test_support::scaling::{Shape, check, repeated};
    fn names(b: &[u8]) {
        let text = std::str::from_utf8(b).unwrap_or_default();
        let filter = Filter::All;
        let servers = [NamingInput {
            server: "s",
            prefix: "",
            filter: &filter,
            tools: text.lines().collect(),
            app_only: Vec::new(),
        }];
        let (assigned, _) = assign_names(&servers, OnCollision::Rename);
        assert_eq!(assigned.len(), text.lines().count());
    }
    check(&[
        Shape {
            name: "tool names: one name listed n times",
            build: |n| repeated("", n, "\n", |_| "x".to_owned(), ""),
            run: names,
        },
        Shape {
            name: "tool names: names that sanitize alike",
            build: |n| {
                repeated(
                    "",
                    n,
                    "\n",
                    |i| ["a.b", "a/b", "a b", "a_b"][i % 4].to_owned(),
                    "",
                )
            },
            run: names,
        },
    ]);
}

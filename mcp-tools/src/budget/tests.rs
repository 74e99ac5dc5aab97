use super::*;
use serde_json::json;

fn store() -> ResultStore {
    ResultStore::new(DEFAULT_KEPT_RESULTS, DEFAULT_KEPT_BYTES)
}

/// The text of a page without its note.
fn body(page: &str) -> &str {
    page.split("\n\n[Result cut to fit:").next().unwrap_or(page)
}

/// Reads a kept result page by page to its end, checking each page's
/// budget; returns the pages' bodies joined.
fn read_all(store: &ResultStore, first: &ToolOutput, budget: usize) -> String {
    let cut = first.cut.clone().unwrap_or_else(|| panic!("not cut"));
    let id = cut.id.clone().unwrap_or_else(|| panic!("not kept"));
    let mut whole = body(&first.text).to_owned();
    let mut offset = cut.shown_bytes;
    let mut pages = 0;
    while offset < cut.total_bytes {
        pages += 1;
        assert!(pages < 10_000, "no progress");
        let page = read_result(store, "read_result", &json!({"id": id, "offset": offset}))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(estimate_tokens(&page.text) <= budget, "page over budget");
        let b = body(&page.text);
        whole.push_str(b);
        offset += b.len();
    }
    whole
}

#[test]
fn a_long_text_is_cut_at_a_line_with_a_note_and_reads_back_whole() {
    let text: String = (0..20_000)
        .map(|i| format!("line {i}: the quick brown fox jumps over the lazy dog\n"))
        .collect();
    let out = ToolOutput::text(text.clone());
    let store = store();
    let budget = 1_000;
    let cut = apply(out, budget, &store, "read_result");
    assert!(
        estimate_tokens(&cut.text) <= budget,
        "{}",
        estimate_tokens(&cut.text)
    );
    let shown = body(&cut.text);
    assert!(
        text.starts_with(shown) && shown.ends_with('\n'),
        "not at a line"
    );
    assert!(
        shown.len() > 2_000,
        "the budget is mostly used: {}",
        shown.len()
    );
    let info = cut.cut.clone().unwrap_or_else(|| panic!("not cut"));
    assert_eq!(info.shown_bytes, shown.len());
    assert_eq!(info.total_bytes, text.len());
    let id = info.id.clone().unwrap_or_default();
    assert!(
        cut.text.ends_with(&format!(
            "this is the first {} of its {} bytes. To read on, call read_result with {{\"id\": \"{id}\", \"offset\": {}}}.]",
            shown.len(),
            text.len(),
            shown.len()
        )),
        "{}",
        &cut.text[cut.text.len() - 200..]
    );
    // The raw result is whole.
    assert_eq!(fold(&cut.result), text);
    assert_eq!(read_all(&store, &cut, budget), text);
}

fn fold(r: &CallToolResult) -> String {
    crate::fold_result(r)
}

#[test]
fn text_that_fits_is_left_alone() {
    let store = store();
    let out = ToolOutput::text("short");
    assert_eq!(apply(out.clone(), 100, &store, "read_result"), out);
    // Longer in bytes than the budget, within it in tokens.
    let words = "word ".repeat(150);
    let out = ToolOutput::text(words);
    assert_eq!(apply(out.clone(), 200, &store, "read_result"), out);
    assert_eq!(store.len_and_bytes(), (0, 0));
}

#[test]
fn cuts_never_split_a_character_or_a_cluster() {
    let store = store();
    for text in [
        "x".repeat(100_000),
        "日本語のテキスト".repeat(5_000),
        "e\u{301}".repeat(30_000),
        "👍🏽".repeat(20_000),
        "ab\u{200d}".repeat(30_000),
    ] {
        let cut = apply(ToolOutput::text(text.clone()), 300, &store, "read_result");
        let shown = body(&cut.text);
        assert!(text.starts_with(shown) && !shown.is_empty());
        let next = text[shown.len()..].chars().next();
        assert!(!next.is_some_and(extends_cluster), "split before {next:?}");
        assert!(!shown.ends_with('\u{200d}'));
        assert_eq!(read_all(&store, &cut, 300), text);
    }
}

#[test]
fn the_store_is_bounded_and_forgets_the_least_recently_read() {
    let store = ResultStore::new(2, 1_000);
    let a = store
        .put(Arc::from("a".repeat(400)), 100)
        .unwrap_or_default();
    let b = store
        .put(Arc::from("b".repeat(400)), 100)
        .unwrap_or_default();
    assert!(store.get(&a).is_some(), "a read: b is now the oldest");
    let c = store
        .put(Arc::from("c".repeat(400)), 100)
        .unwrap_or_default();
    assert!(store.get(&b).is_none() && store.get(&a).is_some() && store.get(&c).is_some());
    assert_eq!(store.len_and_bytes(), (2, 800));
    // Bytes bound: 700 more pushes out both.
    let d = store
        .put(Arc::from("d".repeat(700)), 100)
        .unwrap_or_default();
    assert_eq!(store.len_and_bytes(), (1, 700));
    assert!(store.get(&d).is_some());
    assert!(
        store.put(Arc::from("e".repeat(1_001)), 100).is_none(),
        "too large"
    );
    assert_ne!(a, b);
    assert!(a.len() == 17 && a.starts_with('r'));
}

#[test]
fn read_result_says_what_is_wrong() {
    let store = store();
    let err = |args: Value| {
        read_result(&store, "read_result", &args)
            .err()
            .map(|e| (e.is_model_correctable(), e.to_string()))
            .unwrap_or_default()
    };
    assert!(err(json!({})).1.contains("`id`"));
    assert!(
        err(json!({"id": "r0", "offset": 0}))
            .1
            .contains("no kept result")
    );
    let id = store
        .put(Arc::from("é".repeat(1000)), 100)
        .unwrap_or_default();
    let (correctable, msg) = err(json!({"id": id, "offset": 5000}));
    assert!(correctable && msg.contains("past the end"), "{msg}");
    assert!(
        err(json!({"id": id, "offset": -1}))
            .1
            .contains("whole number")
    );
    // An offset inside a character starts at the character.
    let page = read_result(&store, "read_result", &json!({"id": id, "offset": 1999}))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page.text, "é");
}

#[test]
fn without_the_store_the_note_points_at_the_servers_link() {
    let store = ResultStore::new(0, 0);
    let mut result = CallToolResult::text("z ".repeat(10_000));
    result.content.push(
        serde_json::from_value(
            json!({"type": "resource_link", "uri": "file:///big.log", "name": "big.log"}),
        )
        .unwrap_or_else(|e| panic!("{e}")),
    );
    let out = apply(ToolOutput::from_result(result), 100, &store, "read_result");
    assert!(
        out.text
            .ends_with("The server gives the whole content as the resource file:///big.log.]"),
        "{}",
        out.text
    );
    assert_eq!(out.cut.and_then(|c| c.id), None);
    let plain = apply(
        ToolOutput::text("z ".repeat(10_000)),
        100,
        &store,
        "read_result",
    );
    assert!(plain.text.ends_with("The rest is not available.]"));
}

#[test]
fn a_failed_calls_explanation_is_cut_too() {
    let store = store();
    let e = ToolError::ToolFailed {
        tool: "t".into(),
        message: "trace line\n".repeat(10_000),
        result: Box::new(CallToolResult::text("x").with_error()),
    };
    let cut = apply_to_error(e, 200, &store, "read_result");
    assert!(estimate_tokens(&cut.message_for_model()) <= 200);
    assert!(
        cut.message_for_model()
            .contains("To read on, call read_result")
    );
}

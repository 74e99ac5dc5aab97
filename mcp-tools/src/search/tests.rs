use super::*;
use serde_json::json;

fn tool(v: serde_json::Value) -> Tool {
    serde_json::from_value(v).expect("a tool")
}

/// An index ranking by words alone: the lexical part of the ranking, which
/// the tests below pin down (meaning is tested on its own, and measured on
/// real catalogs by `tests/search_eval.rs`).
fn index(servers: &[(&str, Option<&str>, Vec<Tool>)]) -> ToolIndex {
    index_with(
        Ranking {
            meaning: 0.0,
            ..Ranking::default()
        },
        servers,
    )
}

fn index_with(ranking: Ranking, servers: &[(&str, Option<&str>, Vec<Tool>)]) -> ToolIndex {
    let mut b = ToolIndex::builder();
    b.ranking(ranking);
    let mut id = 0;
    for (name, instructions, tools) in servers {
        b.server(name, *instructions);
        for t in tools {
            b.tool(id, t);
            id += 1;
        }
    }
    b.build()
}

fn ids(index: &ToolIndex, q: &str) -> Vec<usize> {
    index.search(q, 10).into_iter().map(|h| h.id).collect()
}

#[test]
fn each_field_is_matched() {
    let i = index(&[(
        "alpha",
        None,
        vec![
            tool(json!({"name": "list_widgets", "inputSchema": {"type": "object"}})),
            tool(
                json!({"name": "t2", "title": "Frobnicate gadgets", "inputSchema": {"type": "object"}}),
            ),
            tool(
                json!({"name": "t3", "description": "Polishes the sprockets", "inputSchema": {"type": "object"}}),
            ),
            tool(
                json!({"name": "t4", "inputSchema": {"type": "object", "properties": {"zeppelin": {"description": "which airship"}}}}),
            ),
            tool(
                json!({"name": "t5", "annotations": {"title": "Quux the flux"}, "inputSchema": {"type": "object"}}),
            ),
        ],
    )]);
    assert_eq!(ids(&i, "widget"), [0]);
    assert_eq!(ids(&i, "gadgets"), [1]);
    assert_eq!(ids(&i, "sprocket polishing"), [2]);
    assert_eq!(ids(&i, "airships"), [3]);
    assert_eq!(ids(&i, "flux"), [4]);
    assert!(ids(&i, "nothing matches this").is_empty());
}

#[test]
fn name_outweighs_description_and_server_breaks_ties() {
    let i = index(&[
        (
            "github",
            Some("GitHub issues and pull requests"),
            vec![tool(
                json!({"name": "list_issues", "description": "Lists them", "inputSchema": {"type": "object"}}),
            )],
        ),
        (
            "jira",
            Some("Atlassian Jira"),
            vec![
                tool(
                    json!({"name": "list_issues", "description": "Lists them", "inputSchema": {"type": "object"}}),
                ),
                tool(
                    json!({"name": "search", "description": "Search issues, projects and more issues", "inputSchema": {"type": "object"}}),
                ),
            ],
        ),
    ]);
    let issues = ids(&i, "issues");
    assert_eq!(issues.len(), 3);
    assert!(
        issues[..2].contains(&0) && issues[..2].contains(&1),
        "{issues:?}"
    );
    assert_eq!(ids(&i, "jira issues")[0], 1);
    assert_eq!(ids(&i, "github issues")[0], 0);
}

#[test]
fn synonyms_and_phrases_reach_the_tool() {
    let i = index(&[(
        "ops",
        None,
        vec![
            tool(
                json!({"name": "rollback_release", "description": "Reverts a deployment", "inputSchema": {"type": "object"}}),
            ),
            tool(json!({"name": "remove_file", "inputSchema": {"type": "object"}})),
            tool(json!({"name": "roll_dice", "inputSchema": {"type": "object"}})),
        ],
    )]);
    assert_eq!(ids(&i, "delete a file")[0], 1);
    assert_eq!(ids(&i, "undo the deploy")[0], 0);
    assert_eq!(ids(&i, "roll back")[0], 0);
}

#[test]
fn limit_and_empty() {
    let i = index(&[(
        "s",
        None,
        (0..20)
            .map(|n| {
                tool(json!({"name": format!("file_op_{n}"), "inputSchema": {"type": "object"}}))
            })
            .collect(),
    )]);
    assert_eq!(i.search("file", 5).len(), 5);
    assert!(i.search("file", 0).is_empty());
    assert!(i.search("", 5).is_empty());
    assert!(ToolIndex::default().search("file", 5).is_empty());
    // Ties keep the order the tools were added in.
    assert_eq!(ids(&i, "file"), (0..10).collect::<Vec<_>>());
    // A huge query is cut, not refused.
    assert_eq!(i.search(&"file ".repeat(100_000), 3).len(), 3);
}

#[cfg(feature = "semantic")]
#[test]
fn meaning_finds_a_tool_that_shares_no_word_with_the_request() {
    let servers = [(
        "meteo",
        None,
        vec![
            tool(
                json!({"name": "get_forecast", "description": "Weather forecast for a city", "inputSchema": {"type": "object"}}),
            ),
            tool(
                json!({"name": "convert_currency", "description": "Converts an amount of money", "inputSchema": {"type": "object"}}),
            ),
        ],
    )];
    let q = "will it rain tomorrow in Paris";
    assert!(ids(&index(&servers), q).is_empty(), "no word in common");
    assert_eq!(ids(&index_with(Ranking::default(), &servers), q), [0]);
}

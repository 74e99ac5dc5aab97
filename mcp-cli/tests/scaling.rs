//! Every decode and check over a collection a server controls is linear:
//! each shape below decodes (or checks) 1,000 and 100,000 elements and
//! fails when the cost per element grows more than a small factor
//! (`test_support::scaling`). Run by `cargo xtask scaling`; a new type a
//! server sends adds a line to [`SHAPES`].
//!
//! The CLI's own form and listing code has its table in the binary's tests
//! (`src/scaling.rs`), mcp-tools' naming and mcp-transport-http's header
//! annotations theirs in their crates: all run by the same command.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use bytes::BytesMut;
use mcp_proto::RawJson;
use mcp_proto::jsonrpc::Message;
use mcp_proto::schema::{
    CallToolResult, CreateMessageParams, ElicitParams, InputRequiredResult, Page, PrimitiveSchema,
    Prompt, Resource, ServerRequest, Task, Tool,
};
use serde_json::json;
use test_support::scaling::{Shape, check, repeated};

/// Every collection a server controls, as the client decodes or checks it.
const SHAPES: &[Shape] = &[
    // elicitation/create (the issue's case: 100,000 properties)
    Shape {
        name: "elicitation: form properties",
        build: |n| {
            form(&repeated(
                "{",
                n,
                ",",
                |i| format!(r#""f{i}":{{"type":"string"}}"#),
                "}",
            ))
        },
        run: |b| assert!(!elicit_form(b).properties.is_empty()),
    },
    Shape {
        name: "elicitation: required names",
        build: |n| {
            let props = repeated(
                "{",
                n,
                ",",
                |i| format!(r#""f{i}":{{"type":"boolean"}}"#),
                "}",
            );
            let req = repeated("[", n, ",", |i| format!(r#""f{i}""#), "]");
            params(&format!(
                r#"{{"message":"m","requestedSchema":{{"type":"object","properties":{},"required":{}}}}}"#,
                text(&props),
                text(&req)
            ))
        },
        run: |b| assert!(elicit_form(b).required.is_some()),
    },
    Shape {
        name: "elicitation: enum values",
        build: |n| {
            let values = repeated("[", n, ",", |i| format!(r#""v{i}""#), "]");
            form(format!(r#"{{"c":{{"type":"string","enum":{}}}}}"#, text(&values)).as_bytes())
        },
        run: |b| {
            let f = elicit_form(b);
            assert!(matches!(
                f.properties.get("c"),
                Some(PrimitiveSchema::UntitledSingleSelect(_))
            ));
        },
    },
    Shape {
        name: "elicitation: titled oneOf options",
        build: |n| {
            let opts = repeated(
                "[",
                n,
                ",",
                |i| format!(r#"{{"const":"v{i}","title":"T{i}"}}"#),
                "]",
            );
            form(format!(r#"{{"c":{{"type":"string","oneOf":{}}}}}"#, text(&opts)).as_bytes())
        },
        run: |b| {
            let f = elicit_form(b);
            assert!(matches!(
                f.properties.get("c"),
                Some(PrimitiveSchema::TitledSingleSelect(_))
            ));
        },
    },
    Shape {
        name: "elicitation: multi-select anyOf",
        build: |n| {
            let opts = repeated(
                "[",
                n,
                ",",
                |i| format!(r#"{{"const":"v{i}","title":"T{i}"}}"#),
                "]",
            );
            form(
                format!(
                    r#"{{"c":{{"type":"array","items":{{"anyOf":{}}}}}}}"#,
                    text(&opts)
                )
                .as_bytes(),
            )
        },
        run: |b| {
            let f = elicit_form(b);
            assert!(matches!(
                f.properties.get("c"),
                Some(PrimitiveSchema::TitledMultiSelect(_))
            ));
        },
    },
    Shape {
        name: "elicitation: legacy enumNames",
        build: |n| {
            let values = repeated("[", n, ",", |i| format!(r#""v{i}""#), "]");
            let names = repeated("[", n, ",", |i| format!(r#""N{i}""#), "]");
            form(
                format!(
                    r#"{{"c":{{"type":"string","enum":{},"enumNames":{}}}}}"#,
                    text(&values),
                    text(&names)
                )
                .as_bytes(),
            )
        },
        run: |b| {
            let f = elicit_form(b);
            assert!(matches!(
                f.properties.get("c"),
                Some(PrimitiveSchema::LegacyTitled(_))
            ));
        },
    },
    // sampling/createMessage
    Shape {
        name: "sampling: messages",
        build: |n| {
            params(&format!(
                r#"{{"maxTokens":5,"messages":{}}}"#,
                text(&repeated(
                    "[",
                    n,
                    ",",
                    |i| format!(r#"{{"role":"user","content":{{"type":"text","text":"t{i}"}}}}"#),
                    "]"
                ))
            ))
        },
        run: |b| {
            let p: CreateMessageParams = serde_json::from_slice(b).unwrap();
            assert!(!p.messages.is_empty());
        },
    },
    // results of the client's own calls
    Shape {
        name: "tools/list: tools",
        build: |n| {
            repeated(
                r#"{"tools":["#,
                n,
                ",",
                |i| format!(r#"{{"name":"t{i}","inputSchema":{{"type":"object"}}}}"#),
                "]}",
            )
        },
        run: |b| assert!(!page::<Tool>(b).items.is_empty()),
    },
    Shape {
        name: "resources/list: resources",
        build: |n| {
            repeated(
                r#"{"resources":["#,
                n,
                ",",
                |i| format!(r#"{{"uri":"file:///{i}","name":"r{i}"}}"#),
                "]}",
            )
        },
        run: |b| assert!(!page::<Resource>(b).items.is_empty()),
    },
    Shape {
        name: "prompts/list: prompt arguments",
        build: |n| {
            let args = repeated("[", n, ",", |i| format!(r#"{{"name":"a{i}"}}"#), "]");
            format!(
                r#"{{"prompts":[{{"name":"p","arguments":{}}}]}}"#,
                text(&args)
            )
            .into_bytes()
        },
        run: |b| assert_eq!(page::<Prompt>(b).items.len(), 1),
    },
    Shape {
        name: "tasks/list: tasks",
        build: |n| {
            repeated(
                r#"{"tasks":["#,
                n,
                ",",
                |i| {
                    format!(
                        r#"{{"taskId":"t{i}","status":"working","createdAt":"2025-11-25T00:00:00Z","lastUpdatedAt":"2025-11-25T00:00:00Z","ttl":1000}}"#
                    )
                },
                "]}",
            )
        },
        run: |b| assert!(!page::<Task>(b).items.is_empty()),
    },
    Shape {
        name: "tools/call: content blocks",
        build: |n| {
            repeated(
                r#"{"content":["#,
                n,
                ",",
                |i| format!(r#"{{"type":"text","text":"b{i}"}}"#),
                "]}",
            )
        },
        run: |b| {
            let r = CallToolResult::from_raw(raw(b)).unwrap();
            assert!(!r.content.is_empty());
        },
    },
    Shape {
        name: "input_required: input requests",
        build: |n| {
            repeated(
                r#"{"resultType":"input_required","inputRequests":{"#,
                n,
                ",",
                |i| format!(r#""k{i}":{{"method":"roots/list","params":{{}}}}"#),
                "}}",
            )
        },
        run: |b| {
            let r: InputRequiredResult = serde_json::from_slice(b).unwrap();
            assert!(r.input_requests.is_some_and(|m| !m.is_empty()));
        },
    },
    // the envelope and the transports
    Shape {
        name: "JSON-RPC: params members",
        build: |n| {
            repeated(
                r#"{"jsonrpc":"2.0","id":1,"method":"x/y","params":{"#,
                n,
                ",",
                |i| format!(r#""m{i}":[{i},"{i}",{{}}]"#),
                "}}",
            )
        },
        run: |b| assert!(Message::from_slice(b).is_ok()),
    },
    Shape {
        name: "stdio: messages in one read",
        build: |n| {
            repeated(
                "",
                n,
                "",
                |i| {
                    format!(
                        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":{i},\"progress\":1}}}}\n"
                    )
                },
                "",
            )
        },
        run: |b| {
            let mut codec = mcp_transport_stdio::JsonLineCodec::new();
            let mut buf = BytesMut::from(b);
            let mut count = 0;
            while let Some(_m) = codec.decode(&mut buf).unwrap() {
                count += 1;
            }
            assert!(count > 0);
        },
    },
    Shape {
        name: "SSE: data lines of one event",
        build: |n| {
            let mut s = repeated("", n, "", |i| format!("data: {i}\n"), "");
            s.extend_from_slice(b"\n");
            s
        },
        run: |b| assert_eq!(sse_events(b), 1),
    },
    Shape {
        name: "SSE: events in one read",
        build: |n| {
            repeated(
                "",
                n,
                "",
                |i| format!("id: {i}\nevent: message\ndata: {{}}\n\n"),
                "",
            )
        },
        run: |b| assert!(sse_events(b) > 0),
    },
    Shape {
        name: "SSE: comments and unknown fields",
        build: |n| {
            let mut s = repeated(
                "",
                n,
                "",
                |i| format!(": keep-alive {i}\nx-field: {i}\n"),
                "",
            );
            s.extend_from_slice(b"data: 1\n\n");
            s
        },
        run: |b| assert_eq!(sse_events(b), 1),
    },
    Shape {
        name: "WWW-Authenticate: scopes",
        build: |n| {
            repeated(
                r#"Bearer realm="r", scope=""#,
                n,
                " ",
                |i| format!("s{i}"),
                "\"",
            )
        },
        run: |b| {
            let c = mcp_auth::BearerChallenge::parse(std::str::from_utf8(b).unwrap()).unwrap();
            assert!(!c.scopes().is_empty());
        },
    },
    Shape {
        name: "WWW-Authenticate: auth-params",
        build: |n| repeated("Bearer ", n, ", ", |i| format!(r#"p{i}="v{i}""#), ""),
        run: |b| {
            assert!(mcp_auth::BearerChallenge::parse(std::str::from_utf8(b).unwrap()).is_some());
        },
    },
    Shape {
        name: "pagination: cursors",
        build: |n| repeated("", n, "\n", |i| format!("cursor-{i}"), ""),
        run: |b| {
            let text = std::str::from_utf8(b).unwrap();
            let mut c = mcp_client::PageCursors::new("tools/list", usize::MAX);
            for cursor in text.lines() {
                c.next(Some(cursor.to_owned())).unwrap();
            }
        },
    },
    // mcp-tools' argument checker over a server's schema
    Shape {
        name: "argument check: enum × array items",
        build: |n| {
            let values: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
            serde_json::to_vec(&json!({
                "schema": {"type": "array", "items": {"type": "string", "enum": values}},
                "value": values,
            }))
            .unwrap()
        },
        run: check_args,
    },
    Shape {
        name: "argument check: properties and required",
        build: |n| {
            let mut props = serde_json::Map::new();
            let mut value = serde_json::Map::new();
            for i in 0..n {
                props.insert(format!("p{i}"), json!({"type": ["string", "null"]}));
                value.insert(format!("p{i}"), json!("x"));
            }
            let required: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
            serde_json::to_vec(&json!({
                "schema": {"type": "object", "properties": props, "required": required,
                           "additionalProperties": false},
                "value": value,
            }))
            .unwrap()
        },
        run: check_args,
    },
    Shape {
        name: "argument check: type names × array items",
        build: |n| {
            let mut types: Vec<String> = vec!["string".into()];
            types.extend((0..n).map(|_| "null".to_owned()));
            let values: Vec<u32> = (0..n as u32).collect();
            serde_json::to_vec(&json!({
                "schema": {"type": "array", "items": {"type": types.clone()}},
                "value": values.iter().map(|i| i.to_string()).collect::<Vec<_>>(),
            }))
            .unwrap()
        },
        run: check_args,
    },
];

#[test]
#[ignore = "timing: run by `cargo xtask scaling`"]
fn every_collection_a_server_controls_decodes_in_linear_time() {
    check(SHAPES);
}

/// Building each shape is cheap; only checks that every builder makes
/// what its run accepts (so a broken shape shows in the normal tests).
#[test]
fn every_shape_runs_on_a_small_input() {
    for s in SHAPES {
        (s.run)(&(s.build)(3));
    }
}

fn text(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap()
}

fn params(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

/// `elicitation/create` params asking for a form with these `properties`.
fn form(properties: &[u8]) -> Vec<u8> {
    params(&format!(
        r#"{{"message":"m","requestedSchema":{{"type":"object","properties":{}}}}}"#,
        text(properties)
    ))
}

fn raw(b: &[u8]) -> RawJson {
    RawJson::from_string(text(b).to_owned()).unwrap()
}

fn elicit_form(b: &[u8]) -> mcp_proto::schema::ElicitSchema {
    match ServerRequest::from_parts("elicitation/create", Some(&raw(b))).unwrap() {
        ServerRequest::Elicit(ElicitParams::Form(f)) => f.requested_schema,
        other => panic!("not a form: {other:?}"),
    }
}

fn page<T: mcp_proto::schema::PageItem + serde::de::DeserializeOwned>(b: &[u8]) -> Page<T> {
    serde_json::from_slice(b).unwrap()
}

fn sse_events(b: &[u8]) -> usize {
    let mut d = mcp_transport_http::sse::SseDecoder::new().with_max_event_size(usize::MAX);
    let mut buf = BytesMut::from(b);
    let mut n = 0;
    while let Some(_e) = d.decode(&mut buf).unwrap() {
        n += 1;
    }
    n
}

fn check_args(b: &[u8]) {
    let v: serde_json::Value = serde_json::from_slice(b).unwrap();
    assert_eq!(
        mcp_tools::check_arguments(&v["schema"], &v["value"]),
        Ok(())
    );
}

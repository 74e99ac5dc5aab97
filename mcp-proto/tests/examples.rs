//! Every example of the 2026-07-28 schema (`tests/fixtures/2026-07-28/<Type>/*.json`)
//! decodes into its Rust type and re-encodes to an equal JSON value, and is
//! valid against its own schema definition.

#![allow(clippy::unwrap_used)] // test code: a panic is a test failure

mod common;

use std::collections::BTreeMap;

use common::{DefValidator, fixtures, normalize, read_json, schema};
use mcp_proto::schema::*;
use mcp_proto::{ErrorObject, Message};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

type Check = fn(&Value) -> Value;

/// Decode as `T`, re-encode.
fn rt<T: DeserializeOwned + Serialize>(v: &Value) -> Value {
    let t: T = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("decode: {e}"));
    serde_json::to_value(&t).unwrap()
}

/// Decode a whole JSON-RPC message through the envelope and re-encode it.
fn envelope(v: &Value) -> Message {
    Message::from_slice(&serde_json::to_vec(v).unwrap()).unwrap_or_else(|e| panic!("envelope: {e}"))
}

fn reencode(m: &Message) -> Value {
    serde_json::from_slice(&m.to_vec()).unwrap()
}

/// A request message whose params decode as `P`.
fn request<P: DeserializeOwned + Serialize>(v: &Value) -> Value {
    let Message::Request(mut r) = envelope(v) else {
        panic!("not a request")
    };
    let p: P = r.params.as_ref().expect("params").decode().unwrap();
    r.params = Some(mcp_proto::RawJson::from_value(&p).unwrap());
    reencode(&Message::Request(r))
}

/// A notification message whose params decode as `P`.
fn notification<P: DeserializeOwned + Serialize>(v: &Value) -> Value {
    let Message::Notification(mut n) = envelope(v) else {
        panic!("not a notification")
    };
    let p: P = n.params.as_ref().expect("params").decode().unwrap();
    n.params = Some(mcp_proto::RawJson::from_value(&p).unwrap());
    reencode(&Message::Notification(n))
}

/// A response message whose result decodes as `R`.
fn response<R: DeserializeOwned + Serialize>(v: &Value) -> Value {
    let Message::Response(mut r) = envelope(v) else {
        panic!("not a response")
    };
    let res: R = r.result.decode().unwrap();
    r.result = mcp_proto::RawJson::from_value(&res).unwrap();
    reencode(&Message::Response(r))
}

/// A response that is either an `InputRequiredResult` or an `R`.
fn mrtr_response<R: DeserializeOwned + Serialize>(v: &Value) -> Value {
    match v["result"]["resultType"].as_str() {
        Some("input_required") => response::<InputRequiredResult>(v),
        _ => response::<R>(v),
    }
}

/// An error response.
fn error_response(v: &Value) -> Value {
    let m = envelope(v);
    assert!(matches!(m, Message::Error(_)), "not an error response");
    reencode(&m)
}

/// A content block of the given kind.
fn block(v: &Value, kind: fn(&ContentBlock) -> bool) -> Value {
    let b: ContentBlock = serde_json::from_value(v.clone()).unwrap();
    assert!(kind(&b), "wrong content kind: {b:?}");
    serde_json::to_value(&b).unwrap()
}

/// A form-field schema of the given kind, also decoded as its own struct `T`.
fn primitive<T: DeserializeOwned + Serialize>(
    v: &Value,
    kind: fn(&PrimitiveSchema) -> bool,
) -> Value {
    let p: PrimitiveSchema = serde_json::from_value(v.clone()).unwrap();
    assert!(kind(&p), "wrong schema kind: {p:?}");
    assert_eq!(normalize(rt::<T>(v)), normalize(v.clone()));
    serde_json::to_value(&p).unwrap()
}

/// An input request (`{method, params}`), decoded through its typed params.
fn input_request(v: &Value) -> Value {
    let r: InputRequest = serde_json::from_value(v.clone()).unwrap();
    let params = match r.typed().unwrap() {
        ServerRequest::CreateMessage(p) => serde_json::to_value(p).unwrap(),
        ServerRequest::Elicit(p) => {
            assert!(!matches!(p, ElicitParams::Unknown(_)));
            serde_json::to_value(p).unwrap()
        }
        ServerRequest::ListRoots(p) => serde_json::to_value(p).unwrap(),
        other => panic!("unexpected input request {other:?}"),
    };
    let mut out = serde_json::to_value(&r).unwrap();
    if r.params.is_some() {
        out["params"] = params;
    }
    out
}

fn input_requests(v: &Value) -> Value {
    let map = v.as_object().unwrap();
    Value::Object(
        map.iter()
            .map(|(k, r)| (k.clone(), input_request(r)))
            .collect(),
    )
}

fn input_required(v: &Value) -> Value {
    let r: InputRequiredResult = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(r.result_type, ResultType::InputRequired);
    let mut out = serde_json::to_value(&r).unwrap();
    if let Some(reqs) = v.get("inputRequests") {
        out["inputRequests"] = input_requests(reqs);
    }
    out
}

fn input_responses(v: &Value) -> Value {
    let m: BTreeMap<String, InputResponse> = serde_json::from_value(v.clone()).unwrap();
    for (k, r) in &m {
        assert!(!matches!(r, InputResponse::Unknown(_)), "{k} untyped");
    }
    serde_json::to_value(&m).unwrap()
}

fn checks() -> BTreeMap<&'static str, Check> {
    let mut m: BTreeMap<&'static str, Check> = BTreeMap::new();
    m.insert("AudioContent", |v| {
        block(v, |b| matches!(b, ContentBlock::Audio(_)))
    });
    m.insert("ImageContent", |v| {
        block(v, |b| matches!(b, ContentBlock::Image(_)))
    });
    m.insert("TextContent", |v| {
        block(v, |b| matches!(b, ContentBlock::Text(_)))
    });
    m.insert("ResourceLink", |v| {
        block(v, |b| matches!(b, ContentBlock::ResourceLink(_)))
    });
    m.insert("EmbeddedResource", |v| {
        block(v, |b| matches!(b, ContentBlock::Resource(_)))
    });
    m.insert("ToolUseContent", |v| {
        block(v, |b| matches!(b, ContentBlock::ToolUse(_)))
    });
    m.insert("ToolResultContent", |v| {
        block(v, |b| matches!(b, ContentBlock::ToolResult(_)))
    });
    m.insert("TextResourceContents", |v| {
        let t: TextResourceContents = serde_json::from_value(v.clone()).unwrap();
        let c = ResourceContents::from(t.clone());
        assert_eq!(c.as_text(), Some(t.text.as_str()));
        assert_eq!(serde_json::to_value(&c).unwrap(), *v);
        serde_json::to_value(&t).unwrap()
    });
    m.insert("BlobResourceContents", |v| {
        let b: BlobResourceContents = serde_json::from_value(v.clone()).unwrap();
        let c = ResourceContents::from(b.clone());
        assert_eq!(c.as_blob(), Some(b.blob.as_str()));
        assert_eq!(serde_json::to_value(&c).unwrap(), *v);
        serde_json::to_value(&b).unwrap()
    });
    m.insert("Resource", rt::<Resource>);
    m.insert("Root", rt::<Root>);
    m.insert("Tool", rt::<Tool>);
    m.insert("ModelPreferences", rt::<ModelPreferences>);
    m.insert("SamplingMessage", rt::<SamplingMessage>);
    m.insert("ClientCapabilities", rt::<ClientCapabilities>);
    m.insert("ServerCapabilities", rt::<ServerCapabilities>);
    m.insert("BooleanSchema", |v| {
        primitive::<BooleanSchema>(v, |p| matches!(p, PrimitiveSchema::Boolean(_)))
    });
    m.insert("NumberSchema", |v| {
        primitive::<NumberSchema>(v, |p| matches!(p, PrimitiveSchema::Number(_)))
    });
    m.insert("StringSchema", |v| {
        primitive::<StringSchema>(v, |p| matches!(p, PrimitiveSchema::String(_)))
    });
    m.insert("TitledMultiSelectEnumSchema", |v| {
        primitive::<TitledMultiSelectEnumSchema>(v, |p| {
            matches!(p, PrimitiveSchema::TitledMultiSelect(_))
        })
    });
    m.insert("TitledSingleSelectEnumSchema", |v| {
        primitive::<TitledSingleSelectEnumSchema>(v, |p| {
            matches!(p, PrimitiveSchema::TitledSingleSelect(_))
        })
    });
    m.insert("UntitledMultiSelectEnumSchema", |v| {
        primitive::<UntitledMultiSelectEnumSchema>(v, |p| {
            matches!(p, PrimitiveSchema::UntitledMultiSelect(_))
        })
    });
    m.insert("UntitledSingleSelectEnumSchema", |v| {
        primitive::<UntitledSingleSelectEnumSchema>(v, |p| {
            matches!(p, PrimitiveSchema::UntitledSingleSelect(_))
        })
    });

    // Params.
    m.insert("CallToolRequestParams", rt::<CallToolParams>);
    m.insert("CancelledNotificationParams", rt::<CancelledParams>);
    m.insert("CompleteRequestParams", rt::<CompleteParams>);
    m.insert("CreateMessageRequestParams", rt::<CreateMessageParams>);
    m.insert("ElicitRequestFormParams", |v| {
        let p: ElicitParams = serde_json::from_value(v.clone()).unwrap();
        assert!(matches!(p, ElicitParams::Form(_)));
        serde_json::to_value(&p).unwrap()
    });
    m.insert("ElicitRequestURLParams", |v| {
        let p: ElicitParams = serde_json::from_value(v.clone()).unwrap();
        assert!(matches!(p, ElicitParams::Url(_)));
        serde_json::to_value(&p).unwrap()
    });
    m.insert("GetPromptRequestParams", rt::<GetPromptParams>);
    m.insert(
        "LoggingMessageNotificationParams",
        rt::<LoggingMessageParams>,
    );
    m.insert("PaginatedRequestParams", rt::<PaginatedParams>);
    m.insert("ProgressNotificationParams", rt::<ProgressParams>);
    m.insert(
        "ResourceUpdatedNotificationParams",
        rt::<ResourceUpdatedParams>,
    );

    // Results.
    m.insert("CallToolResult", rt::<CallToolResult>);
    m.insert("CompleteResult", rt::<CompleteResult>);
    m.insert("CreateMessageResult", rt::<CreateMessageResult>);
    m.insert("DiscoverResult", rt::<DiscoverResult>);
    m.insert("ElicitResult", rt::<ElicitResult>);
    m.insert("GetPromptResult", rt::<GetPromptResult>);
    m.insert("ListPromptsResult", rt::<ListPromptsResult>);
    m.insert(
        "ListResourceTemplatesResult",
        rt::<ListResourceTemplatesResult>,
    );
    m.insert("ListResourcesResult", rt::<ListResourcesResult>);
    m.insert("ListRootsResult", rt::<ListRootsResult>);
    m.insert("ListToolsResult", rt::<ListToolsResult>);
    m.insert("ReadResourceResult", rt::<ReadResourceResult>);
    m.insert("SubscriptionsListenResult", |v| {
        let r: ListenResult = serde_json::from_value(v.clone()).unwrap();
        assert!(r.subscription_id().is_some());
        serde_json::to_value(&r).unwrap()
    });
    m.insert("InputRequiredResult", input_required);
    m.insert("InputRequests", input_requests);
    m.insert("InputResponses", input_responses);

    // Whole messages.
    m.insert("CallToolRequest", request::<CallToolParams>);
    m.insert("CompleteRequest", request::<CompleteParams>);
    m.insert("DiscoverRequest", request::<DiscoverParams>);
    m.insert("GetPromptRequest", request::<GetPromptParams>);
    m.insert("ListPromptsRequest", request::<PaginatedParams>);
    m.insert("ListResourceTemplatesRequest", request::<PaginatedParams>);
    m.insert("ListResourcesRequest", request::<PaginatedParams>);
    m.insert("ListToolsRequest", request::<PaginatedParams>);
    m.insert("ReadResourceRequest", request::<ReadResourceParams>);
    m.insert("SubscriptionsListenRequest", request::<ListenParams>);
    m.insert("CancelledNotification", notification::<CancelledParams>);
    m.insert(
        "LoggingMessageNotification",
        notification::<LoggingMessageParams>,
    );
    m.insert("ProgressNotification", notification::<ProgressParams>);
    m.insert(
        "PromptListChangedNotification",
        notification::<ListChangedParams>,
    );
    m.insert(
        "ResourceListChangedNotification",
        notification::<ListChangedParams>,
    );
    m.insert(
        "ToolListChangedNotification",
        notification::<ListChangedParams>,
    );
    m.insert(
        "ResourceUpdatedNotification",
        notification::<ResourceUpdatedParams>,
    );
    m.insert(
        "SubscriptionsAcknowledgedNotification",
        notification::<SubscriptionsAcknowledgedParams>,
    );
    m.insert("CallToolResultResponse", mrtr_response::<CallToolResult>);
    m.insert("CompleteResultResponse", response::<CompleteResult>);
    m.insert("DiscoverResultResponse", response::<DiscoverResult>);
    m.insert("GetPromptResultResponse", mrtr_response::<GetPromptResult>);
    m.insert("ListPromptsResultResponse", response::<ListPromptsResult>);
    m.insert(
        "ListResourceTemplatesResultResponse",
        response::<ListResourceTemplatesResult>,
    );
    m.insert(
        "ListResourcesResultResponse",
        response::<ListResourcesResult>,
    );
    m.insert("ListToolsResultResponse", response::<ListToolsResult>);
    m.insert(
        "ReadResourceResultResponse",
        mrtr_response::<ReadResourceResult>,
    );
    m.insert(
        "SubscriptionsListenResultResponse",
        response::<ListenResult>,
    );
    // Server-to-client requests travel inside `inputRequests` in 2026-07-28.
    m.insert("CreateMessageRequest", input_request);
    m.insert("ElicitRequest", input_request);
    m.insert("ListRootsRequest", input_request);

    // Errors.
    m.insert("HeaderMismatchError", error_response);
    m.insert("MissingRequiredClientCapabilityError", error_response);
    m.insert("UnsupportedProtocolVersionError", error_response);
    m.insert("InternalError", rt::<ErrorObject>);
    m.insert("InvalidParamsError", rt::<ErrorObject>);
    m.insert("MethodNotFoundError", rt::<ErrorObject>);
    m.insert("ParseError", rt::<ErrorObject>);
    m
}

fn example_files() -> Vec<(String, std::path::PathBuf)> {
    let dir = fixtures().join("2026-07-28");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("fixtures/2026-07-28 exists") {
        let entry = entry.unwrap();
        let ty = entry.file_name().to_string_lossy().into_owned();
        for f in std::fs::read_dir(entry.path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "json") {
                out.push((ty.clone(), p));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_example_round_trips() {
    let checks = checks();
    let files = example_files();
    let types: std::collections::BTreeSet<_> = files.iter().map(|(t, _)| t.clone()).collect();
    let mut failures = Vec::new();
    for ty in &types {
        if !checks.contains_key(ty.as_str()) {
            failures.push(format!("{ty}: no Rust type mapped"));
        }
    }
    for (ty, path) in &files {
        let Some(check) = checks.get(ty.as_str()) else {
            continue;
        };
        let v = read_json(path);
        let name = path.file_name().unwrap().to_string_lossy();
        match std::panic::catch_unwind(|| check(&v)) {
            Ok(out) if normalize(out.clone()) == normalize(v.clone()) => {}
            Ok(out) => failures.push(format!(
                "{ty}/{name}: re-encoded differently\n  in:  {v}\n  out: {out}"
            )),
            Err(e) => failures.push(format!(
                "{ty}/{name}: {}",
                e.downcast_ref::<String>().cloned().unwrap_or_default()
            )),
        }
    }
    println!(
        "{} example files of {} types round-tripped",
        files.len(),
        types.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The fixture set is the 2026-07-28 schema's examples: 88 types, 129 files.
    assert_eq!(types.len(), 88);
    assert_eq!(files.len(), 129);
}

#[test]
fn every_example_is_valid_against_its_definition() {
    let mut v = DefValidator::new(schema("2026-07-28"));
    let mut failures = Vec::new();
    for (ty, path) in example_files() {
        let errs = v.errors(&ty, &read_json(&path));
        if !errs.is_empty() {
            failures.push(format!("{}: {errs:?}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn input_response_decodes_by_shape() {
    let e: InputResponse = serde_json::from_value(json!({"action": "decline"})).unwrap();
    assert_eq!(e, InputResponse::Elicit(ElicitResult::decline()));
    let odd = json!({"something": 1});
    let u: InputResponse = serde_json::from_value(odd.clone()).unwrap();
    assert_eq!(u, InputResponse::Unknown(odd));
}

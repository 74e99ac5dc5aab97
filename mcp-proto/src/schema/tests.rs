use super::*;
use crate::RawJson;

#[test]
fn unknown_content_kind_is_kept() {
    let v = serde_json::json!({"type": "hologram", "frames": 3});
    let b: ContentBlock = serde_json::from_value(v.clone()).unwrap();
    let ContentBlock::Unknown(raw) = &b else {
        panic!("not unknown: {b:?}")
    };
    assert_eq!(raw.to_object().unwrap(), *v.as_object().unwrap());
    assert_eq!(serde_json::to_value(&b).unwrap(), v);
}

#[test]
fn structured_only_call_result_decodes() {
    let r: CallToolResult =
        serde_json::from_str(r#"{"structuredContent": [1, 2], "x-extra": true}"#).unwrap();
    assert!(r.content.is_empty());
    assert_eq!(r.structured_content.as_ref().unwrap().as_str(), "[1, 2]");
    assert_eq!(r.structured::<Vec<u8>>().unwrap().unwrap(), [1, 2]);
    assert_eq!(
        r.structured_value().unwrap().unwrap(),
        serde_json::json!([1, 2])
    );
    assert_eq!(r.extra.get("x-extra"), Some("true"));
}

use serde_json::json;

fn raw(v: serde_json::Value) -> crate::RawJson {
    crate::RawJson::from_value(&v).unwrap()
}

#[test]
fn task_handle_and_polling_2026_extension() {
    let handle: GetTaskResult = serde_json::from_value(json!({
        "resultType": "task", "taskId": "t1", "status": "working",
        "createdAt": "2026-07-28T10:00:00Z", "lastUpdatedAt": "2026-07-28T10:00:00Z",
        "ttlMs": null, "pollIntervalMs": 2000
    }))
    .unwrap();
    assert_eq!(handle.result_type, Some(ResultType::Task));
    assert_eq!(
        handle.task.ttl_ms,
        Some(None),
        "null ttl is kept as unlimited"
    );
    assert_eq!(handle.task.ttl_millis(), None);
    assert_eq!(handle.task.poll_interval_millis(), Some(2000));
    assert!(!handle.task.status.is_terminal());
    assert_eq!(serde_json::to_value(&handle).unwrap()["ttlMs"], json!(null));

    let waiting: GetTaskResult = serde_json::from_value(json!({
        "resultType": "complete", "taskId": "t1", "status": "input_required",
        "createdAt": "a", "lastUpdatedAt": "b", "ttlMs": 60000,
        "inputRequests": {"k": {"method": "elicitation/create",
            "params": {"mode": "url", "url": "https://x", "message": "go"}}}
    }))
    .unwrap();
    let reqs = waiting.task.input_requests.as_ref().unwrap();
    let ServerRequest::Elicit(ElicitParams::Url(u)) = reqs["k"].typed().unwrap() else {
        panic!("not a URL elicitation")
    };
    assert_eq!(u.url, "https://x");

    let failed: TaskStatusParams = serde_json::from_value(json!({
        "taskId": "t1", "status": "failed", "createdAt": "a", "lastUpdatedAt": "b",
        "ttlMs": 1, "error": {"code": -32603, "message": "boom"}
    }))
    .unwrap();
    assert!(failed.task.status.is_terminal());
    assert_eq!(
        failed.task.error.unwrap().code,
        crate::ErrorCode::INTERNAL_ERROR
    );

    let n = ServerNotification::from_parts(
        "notifications/tasks",
        Some(&raw(
            json!({"taskId": "t1", "status": "completed", "createdAt": "a",
            "lastUpdatedAt": "b", "ttlMs": 5, "result": {"content": []}}),
        )),
    )
    .unwrap();
    let ServerNotification::TaskStatus(t) = n else {
        panic!("not a task status")
    };
    assert_eq!(t.task.status, TaskStatus::Completed);
    assert!(t.task.result.is_some());
}

#[test]
fn task_status_unknown_value_is_kept() {
    let s: TaskStatus = serde_json::from_value(json!("paused")).unwrap();
    assert_eq!(s, TaskStatus::Unknown("paused".into()));
    assert_eq!(serde_json::to_value(&s).unwrap(), json!("paused"));
}

#[test]
fn cancel_task_result_reads_the_2025_task() {
    let r: CancelTaskResult = serde_json::from_value(json!({
        "taskId": "t1", "status": "cancelled", "createdAt": "a", "lastUpdatedAt": "b", "ttl": null
    }))
    .unwrap();
    assert_eq!(r.task().unwrap().status, TaskStatus::Cancelled);
    let empty: CancelTaskResult =
        serde_json::from_value(json!({"resultType": "complete"})).unwrap();
    assert!(empty.task().is_none());
}

/// A form's fields keep the server's order, whatever the params' own
/// member order; an unknown mode stays unknown even when it looks like a
/// form, and `mode: "url"` with a stray schema is still URL mode.
#[test]
fn elicit_forms_keep_the_servers_field_order() {
    let text = r#"{"requestedSchema": {"type": "object", "properties": {
        "zeta": {"type": "string"}, "alpha": {"type": "number"}, "mid": {"type": "boolean"}}},
        "message": "m"}"#;
    let ElicitParams::Form(f) = serde_json::from_str::<ElicitParams>(text).unwrap() else {
        panic!("a form")
    };
    let names: Vec<&str> = f
        .requested_schema
        .properties
        .iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["zeta", "alpha", "mid"]);
    let back = serde_json::to_string(&f.requested_schema.properties).unwrap();
    assert!(back.find("zeta") < back.find("alpha") && back.find("alpha") < back.find("mid"));

    let odd = json!({"mode": "telepathy", "message": "m",
        "requestedSchema": {"type": "object", "properties": {}}});
    assert!(matches!(
        serde_json::from_value::<ElicitParams>(odd).unwrap(),
        ElicitParams::Unknown(_)
    ));
    let url = json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e",
        "requestedSchema": {"type": "object", "properties": {}}});
    assert!(matches!(
        serde_json::from_value::<ElicitParams>(url).unwrap(),
        ElicitParams::Url(_)
    ));
}

#[test]
fn elicit_mode_dispatch() {
    let form: ElicitParams = serde_json::from_value(json!({
        "message": "hi", "requestedSchema": {"type": "object", "properties": {
            "n": {"type": "string"}, "x": {"type": "mystery"}}}
    }))
    .unwrap();
    let ElicitParams::Form(f) = &form else {
        panic!("absent mode must be form")
    };
    assert!(matches!(
        f.requested_schema.properties["n"],
        PrimitiveSchema::String(_)
    ));
    assert!(matches!(
        f.requested_schema.properties["x"],
        PrimitiveSchema::Unknown(_)
    ));
    let odd = json!({"mode": "telepathy", "message": "hm"});
    let p: ElicitParams = serde_json::from_value(odd.clone()).unwrap();
    assert_eq!(p, ElicitParams::Unknown(odd.clone()));
    assert_eq!(p.message(), Some("hm"));
    assert_eq!(serde_json::to_value(&p).unwrap(), odd);
    let url = json!({"mode": "url", "message": "m", "url": "https://u", "elicitationId": "e"});
    let p: ElicitParams = serde_json::from_value(url.clone()).unwrap();
    assert!(matches!(&p, ElicitParams::Url(u) if u.elicitation_id.as_deref() == Some("e")));
    assert_eq!(serde_json::to_value(&p).unwrap(), url);
}

#[test]
fn sampling_content_single_or_many() {
    let one: SamplingContent =
        serde_json::from_value(json!({"type": "text", "text": "a"})).unwrap();
    assert!(matches!(one, SamplingContent::Single(_)));
    let many: SamplingContent = serde_json::from_value(json!([
        {"type": "tool_use", "id": "1", "name": "n", "input": {}},
        {"type": "text", "text": "b"}
    ]))
    .unwrap();
    assert_eq!(many.blocks().len(), 2);
    assert!(matches!(many.blocks()[0], ContentBlock::ToolUse(_)));
    let reason: StopReason = serde_json::from_value(json!("contentFilter")).unwrap();
    assert_eq!(reason, StopReason::Unknown("contentFilter".into()));
}

#[test]
fn server_request_dispatch() {
    assert!(matches!(
        ServerRequest::from_parts("ping", None).unwrap(),
        ServerRequest::Ping(_)
    ));
    assert!(matches!(
        ServerRequest::from_parts("roots/list", None).unwrap(),
        ServerRequest::ListRoots(_)
    ));
    // A known method with bad params is an error (answer -32602), not Unknown.
    assert!(ServerRequest::from_parts("sampling/createMessage", Some(&raw(json!({})))).is_err());
    let ServerRequest::Unknown { method, params } =
        ServerRequest::from_parts("x/y", Some(&raw(json!({"a": 1})))).unwrap()
    else {
        panic!("expected Unknown")
    };
    assert_eq!(method, "x/y");
    assert_eq!(params, Some(json!({"a": 1})));
}

#[test]
fn subscription_id_is_read_from_meta() {
    let n: NotificationParams = serde_json::from_value(json!({
        "_meta": {META_SUBSCRIPTION_ID: "listen-1"}
    }))
    .unwrap();
    assert_eq!(
        n.subscription_id(),
        Some(crate::RequestId::from("listen-1"))
    );
    assert_eq!(NotificationParams::new().subscription_id(), None);
}

#[test]
fn input_request_keeps_unknown_members() {
    let v = json!({"method": "roots/list", "id": "legacy-id"});
    let r: InputRequest = serde_json::from_value(v.clone()).unwrap();
    assert!(r.params.is_none());
    assert_eq!(serde_json::to_value(&r).unwrap(), v);
    assert!(serde_json::from_value::<InputRequest>(json!({"params": {}})).is_err());
}

#[test]
fn request_outcome_reads_result_type_first() {
    let c = RequestOutcome::<CallToolResult>::decode(r#"{"content":[]}"#).unwrap();
    assert!(matches!(c, RequestOutcome::Complete(_)));
    let i = RequestOutcome::<CallToolResult>::decode(
        r#"{"resultType":"input_required","requestState":"s"}"#,
    )
    .unwrap();
    assert!(
        matches!(i, RequestOutcome::InputRequired(r) if r.request_state.as_deref() == Some("s"))
    );
    let t = RequestOutcome::<CallToolResult>::decode(
        r#"{"resultType":"task","taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttlMs":null}"#,
    )
    .unwrap();
    assert!(matches!(t, RequestOutcome::Task(h) if h.task.task_id == "t"));
    let u = RequestOutcome::<CallToolResult>::decode(r#"{"resultType":"later"}"#).unwrap();
    assert!(matches!(u, RequestOutcome::Unknown { result_type, .. } if result_type == "later"));
    assert!(
        RequestOutcome::<CallToolResult>::decode(r#"{"resultType":"complete","content":7}"#)
            .is_err()
    );
}

#[test]
fn request_meta_matches_request_meta_fn() {
    let caps = ClientCapabilities::default();
    let info = Implementation::new("a", "1");
    let typed = RequestMeta::new(crate::ProtocolVersion::V2026_07_28, caps.clone())
        .with_client_info(info.clone())
        .into_object();
    assert_eq!(
        typed,
        request_meta(crate::ProtocolVersion::V2026_07_28, &caps, Some(&info))
    );
    let back: RequestMeta = serde_json::from_value(serde_json::Value::Object(typed)).unwrap();
    assert_eq!(back.client_info, Some(info));
}

#[test]
fn error_data_null_survives_a_round_trip() {
    let e: crate::ErrorObject =
        serde_json::from_value(json!({"code": -32603, "message": "x", "data": null})).unwrap();
    assert!(e.data.as_deref().is_some_and(RawJson::is_null));
    let absent: crate::ErrorObject =
        serde_json::from_value(json!({"code": -32603, "message": "x"})).unwrap();
    assert_eq!(absent.data, None);
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"code": -32603, "message": "x", "data": null})
    );
}

#[test]
fn unknown_cache_scope_does_not_fail_the_result() {
    let r: ListToolsResult = serde_json::from_value(json!({
        "resultType": "complete", "tools": [], "ttlMs": 5, "cacheScope": "shared"
    }))
    .unwrap();
    assert_eq!(r.cache_scope, Some(CacheScope::Unknown));
}

#[test]
fn content_blocks_decode_with_type_first_or_last() {
    let first: ContentBlock =
        serde_json::from_str(r#"{"type":"text","text":"hi","_meta":{"k":1}}"#).unwrap();
    let last: ContentBlock =
        serde_json::from_str(r#"{"text":"hi","_meta":{"k":1},"type":"text"}"#).unwrap();
    assert_eq!(first, last);
    assert_eq!(first.as_text(), Some("hi"));
    let img: ContentBlock =
        serde_json::from_str(r#"{"type":"image","data":"AAAA","mimeType":"image/png"}"#).unwrap();
    assert!(matches!(img, ContentBlock::Image(ref i) if i.mime_type == "image/png"));
    // Unknown kinds keep every member, whichever position `type` has.
    for src in [
        r#"{"type":"hologram","frames":3}"#,
        r#"{"frames":3,"type":"hologram"}"#,
    ] {
        let b: ContentBlock = serde_json::from_str(src).unwrap();
        assert_eq!(
            serde_json::to_value(&b).unwrap(),
            serde_json::json!({"type": "hologram", "frames": 3})
        );
        let ContentBlock::Unknown(raw) = b else {
            panic!("unknown")
        };
        assert_eq!(raw.decode::<String>("type").unwrap().unwrap(), "hologram");
    }
    // Escaped strings (not borrowable) work too.
    let esc: ContentBlock = serde_json::from_str(r#"{"typ\u0065":"text","text":"a\nb"}"#).unwrap();
    assert_eq!(esc.as_text(), Some("a\nb"));
    // No `type` at all: kept as an unknown block, as before.
    let untyped: ContentBlock = serde_json::from_str(r#"{"text":"no type"}"#).unwrap();
    assert!(matches!(untyped, ContentBlock::Unknown(_)));
    assert!(
        serde_json::from_str::<ContentBlock>(r#"{"type":"text"}"#).is_err(),
        "text is required"
    );
}

#[test]
fn text_blocks_decode_as_the_derived_decoder_does() {
    // The `type`-first fast path reads a text block's members by hand: it
    // must accept and refuse exactly what `TextContent`'s derive does.
    for rest in [
        r#""text":"hi""#,
        r#""text":"hi","annotations":{"priority":0.5},"_meta":{"k":1}"#,
        r#""annotations":null,"text":"a\u00e9","vendor":[1,{"x":2}]"#,
        r#""_meta":null,"text":"""#,
        r#""text":"a","text":"b""#,
        r#""text":"a","_meta":{},"_meta":{}"#,
        r#""annotations":{},"annotations":{},"text":"a""#,
        r#""vendor":1"#,
        r#""text":5"#,
        r#""text":"a","annotations":7"#,
    ] {
        let fast = serde_json::from_str::<ContentBlock>(&format!(r#"{{"type":"text",{rest}}}"#));
        let derived = serde_json::from_str::<TextContent>(&format!("{{{rest}}}"));
        match (fast, derived) {
            (Ok(ContentBlock::Text(a)), Ok(b)) => assert_eq!(a, b, "{rest}"),
            (Err(_), Err(_)) => {}
            (a, b) => panic!("{rest}: fast path {a:?}, derive {b:?}"),
        }
    }
}

#[test]
fn call_tool_result_keeps_unknown_members_and_round_trips() {
    let src = serde_json::json!({
        "content": [{"type": "text", "text": "x"}],
        "isError": true,
        "structuredContent": {"a": [1, 2]},
        "_meta": {"m": 1},
        "resultType": "complete",
        "vendor": {"nested": true}
    });
    let r: CallToolResult = serde_json::from_value(src.clone()).unwrap();
    assert!(r.is_error());
    assert_eq!(
        r.extra
            .decode::<serde_json::Value>("vendor")
            .unwrap()
            .unwrap(),
        serde_json::json!({"nested": true})
    );
    assert_eq!(serde_json::to_value(&r).unwrap(), src);
    let null_content: CallToolResult = serde_json::from_str(r#"{"content":null}"#).unwrap();
    assert!(null_content.content.is_empty());
}

/// Every member of a list result, in a scrambled order, with unknown ones.
const FULL_TOOLS_PAGE: &str = r#"{"x-b":2,"_meta":{"k":"v"},"cacheScope":"public","ttlMs":60000,"nextCursor":"","tools":[{"name":"echo","inputSchema":{"type":"object"}}],"resultType":"complete","x-a":[1]}"#;

#[test]
fn list_results_encode_members_in_the_old_order() {
    // The order of the derived structs the `Page` type replaced: `resultType`,
    // the items, `nextCursor`, `ttlMs`, `cacheScope`, `_meta`, unknown members
    // (those in the order received: they are kept as text).
    let page: ListToolsResult = serde_json::from_str(FULL_TOOLS_PAGE).unwrap();
    assert_eq!(
        serde_json::to_string(&page).unwrap(),
        r#"{"resultType":"complete","tools":[{"name":"echo","inputSchema":{"type":"object"}}],"nextCursor":"","ttlMs":60000,"cacheScope":"public","_meta":{"k":"v"},"x-b":2,"x-a":[1]}"#
    );
    assert_eq!(page.items.len(), 1);
    assert_eq!(
        page.next_cursor.as_deref(),
        Some(""),
        "an empty cursor is a cursor"
    );
    assert!(!page.is_last());
    assert_eq!(page.ttl_ms, Some(60000));
    assert_eq!(page.cache_scope, Some(CacheScope::Public));
    assert_eq!(page.extra.members().len(), 2);
    assert_eq!(
        serde_json::to_string(&ListToolsResult::default()).unwrap(),
        r#"{"tools":[]}"#
    );
}

#[test]
fn each_list_result_reads_its_own_member() {
    let v = json!({
        "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
        "resources": [{"uri": "file:///a", "name": "a"}],
        "resourceTemplates": [{"uriTemplate": "file:///{p}", "name": "p"}],
        "prompts": [{"name": "p"}],
        "tasks": [],
    });
    fn check<T: PageItem + serde::de::DeserializeOwned + Serialize>(v: &Value) -> Page<T> {
        let page: Page<T> = serde_json::from_value(v.clone()).unwrap();
        // The other lists' members are unknown members of this one, kept.
        assert_eq!(page.extra.members().len(), 4, "{}", T::METHOD);
        assert!(!page.extra.contains_key(T::MEMBER));
        assert_eq!(serde_json::to_value(&page).unwrap(), *v);
        page
    }
    assert_eq!(check::<Tool>(&v).items[0].name, "t");
    assert_eq!(check::<Resource>(&v).items[0].uri, "file:///a");
    assert_eq!(
        check::<ResourceTemplate>(&v).items[0].uri_template,
        "file:///{p}"
    );
    assert_eq!(check::<Prompt>(&v).items[0].name, "p");
    assert!(check::<Task>(&v).items.is_empty());
}

#[test]
fn list_results_tolerate_absent_and_null_members() {
    let page: ListPromptsResult = serde_json::from_str(
        r#"{"nextCursor":null,"ttlMs":null,"_meta":null,"cacheScope":"someday"}"#,
    )
    .unwrap();
    assert!(page.items.is_empty());
    assert!(page.is_last());
    assert_eq!(page.cache_scope, Some(CacheScope::Unknown));
    assert_eq!(page.meta, None);
}

#[test]
fn list_results_reject_duplicate_and_malformed_members() {
    for bad in [
        r#"{"tools":[],"tools":[]}"#,
        r#"{"tools":[],"nextCursor":"a","nextCursor":"b"}"#,
        r#"{"tools":[],"nextCursor":null,"nextCursor":"b"}"#,
        r#"{"tools":null}"#,
        r#"{"tools":{}}"#,
        r#"{"tools":[],"ttlMs":-1}"#,
        r#"[]"#,
    ] {
        let err = serde_json::from_str::<ListToolsResult>(bad).unwrap_err();
        assert!(err.is_data() || err.is_syntax(), "{bad}: {err}");
    }
    let err = serde_json::from_str::<ListToolsResult>(r#"{"tools":[],"tools":[]}"#).unwrap_err();
    assert!(err.to_string().contains("duplicate field `tools`"), "{err}");
}

/// SEP-1613 / SEP-2106 (the suite's `json-schema-2020-12-preservation`):
/// a tool's `inputSchema` survives decoding and encoding with every keyword
/// as the server sent it, however much of JSON Schema 2020-12 it uses.
#[test]
fn tool_input_schema_keeps_every_2020_12_keyword() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:example:tool",
        "type": "object",
        "$defs": {"address": {"$anchor": "addr", "type": "object",
            "properties": {"street": {"type": "string"}}, "required": ["street"]}},
        "properties": {
            "home": {"$ref": "#/$defs/address"},
            "kind": {"enum": ["a", "b"]},
            "n": {"type": ["integer", "null"], "exclusiveMinimum": 0}
        },
        "allOf": [{"required": ["home"]}],
        "anyOf": [{"required": ["kind"]}, {"required": ["n"]}],
        "if": {"properties": {"kind": {"const": "a"}}},
        "then": {"required": ["n"]},
        "else": {"not": {"required": ["n"]}},
        "dependentRequired": {"n": ["kind"]},
        "unevaluatedProperties": false,
        "additionalProperties": false,
        "x-vendor": {"keep": true}
    });
    let wire = json!({"tools": [{"name": "t", "inputSchema": schema}]});
    let page: ListToolsResult = serde_json::from_value(wire).unwrap();
    let tool = &page.items[0];
    assert_eq!(tool.input_schema.decode::<Value>().unwrap(), schema);
    assert_eq!(serde_json::to_value(tool).unwrap()["inputSchema"], schema);
}

/// The handshake's result decodes member by member: unknown members are
/// kept at every level (result, capabilities, server identity), `null`
/// is an absent optional member, and it encodes back to what was sent.
#[test]
fn initialize_result_keeps_unknown_members_at_every_level() {
    let sent = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "tools": {"listChanged": true},
            "prompts": null,
            "x-cap": {"deep": [1, {"a": null}]}
        },
        "serverInfo": {"name": "s", "version": "1", "x-build": 7},
        "instructions": "use it",
        "_meta": {"k": "v"},
        "x-top": "kept"
    });
    let r: InitializeResult = serde_json::from_value(sent.clone()).unwrap();
    assert_eq!(r.protocol_version, "2025-11-25");
    assert_eq!(
        r.capabilities.tools.as_ref().unwrap().list_changed,
        Some(true)
    );
    assert!(r.capabilities.prompts.is_none());
    assert_eq!(
        r.capabilities.extra["x-cap"],
        json!({"deep": [1, {"a": null}]})
    );
    assert_eq!(r.server_info.name, "s");
    assert_eq!(r.server_info.extra["x-build"], json!(7));
    assert_eq!(r.instructions.as_deref(), Some("use it"));
    assert_eq!(r.meta.as_ref().unwrap()["k"], json!("v"));
    assert_eq!(r.extra["x-top"], json!("kept"));
    let mut back = serde_json::to_value(&r).unwrap();
    back["capabilities"]
        .as_object_mut()
        .unwrap()
        .insert("prompts".into(), serde_json::Value::Null);
    assert_eq!(back, sent);

    // No capabilities: the default. No serverInfo, or a repeated member: an error.
    let r: InitializeResult = serde_json::from_value(
        json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "s", "version": "1"}}),
    )
    .unwrap();
    assert_eq!(r.capabilities, ServerCapabilities::default());
    let missing = serde_json::from_value::<InitializeResult>(json!({"protocolVersion": "x"}))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("serverInfo"), "{missing}");
    let repeated = serde_json::from_str::<InitializeResult>(
        r#"{"protocolVersion": "a", "protocolVersion": "b", "serverInfo": {"name": "s", "version": "1"}}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(repeated.contains("duplicate field"), "{repeated}");
}

//! For each of the five revisions, builds realistic instances of every
//! request, notification and result our types encode for that revision and
//! validates each against that revision's schema, against the SPECIFIC
//! definition (`#/definitions/CallToolRequest`, `#/$defs/ListToolsResult`, …),
//! not the loose `ClientRequest`/`ServerResult` unions.
//!
//! On top of schema validation (the schemas allow unknown members), every
//! instance is checked for members the revision does not declare, so a field
//! of a newer revision leaking into an older one fails too.

#![allow(clippy::unwrap_used)] // test code: a panic is a test failure

mod common;

use common::{DefValidator, REVISIONS, schema};
use mcp_proto::schema::*;
use mcp_proto::{Message, ProtocolVersion as V, Request, RequestId, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Encodes `t`; the value a peer would see.
fn enc<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).unwrap()
}

/// What a server would send, decoded by our type and re-encoded.
fn srv<T: DeserializeOwned + Serialize>(v: Value) -> Value {
    let t: T = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"));
    enc(&t)
}

struct Gen {
    v: V,
    next_id: i64,
    out: Vec<(&'static str, Value)>,
}

impl Gen {
    fn modern(&self) -> bool {
        self.v >= V::V2026_07_28
    }

    fn at_least(&self, v: V) -> bool {
        self.v >= v
    }

    fn client_caps(&self) -> ClientCapabilities {
        let caps = match self.v {
            V::V2024_11_05 | V::V2025_03_26 => {
                json!({"roots": {"listChanged": true}, "sampling": {}, "experimental": {"x.example/flag": {}}})
            }
            V::V2025_06_18 => {
                json!({"roots": {"listChanged": true}, "sampling": {}, "elicitation": {}})
            }
            V::V2025_11_25 => json!({
                "roots": {"listChanged": true},
                "sampling": {"tools": {}, "context": {}},
                "elicitation": {"form": {}, "url": {}},
                "tasks": {"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}}
            }),
            _ => json!({
                "roots": {},
                "sampling": {"tools": {}},
                "elicitation": {"form": {}, "url": {}},
                "extensions": {TASKS_EXTENSION: {}}
            }),
        };
        serde_json::from_value(caps).unwrap()
    }

    fn client_info(&self) -> Implementation {
        let mut i = Implementation::new("mcp-rs-client", "0.1.0");
        if self.at_least(V::V2025_06_18) {
            i = i.with_title("MCP RS client");
        }
        i
    }

    fn server_info(&self) -> Value {
        let mut i = json!({"name": "example-server", "version": "2.1.0"});
        if self.at_least(V::V2025_06_18) {
            i["title"] = json!("Example Server");
        }
        if self.at_least(V::V2025_11_25) {
            i["websiteUrl"] = json!("https://example.com");
            i["icons"] = json!([{"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}]);
        }
        i
    }

    /// `_meta` for a request: the protocol fields in 2026-07-28, else a progress token.
    fn meta(&self) -> JsonObject {
        if self.modern() {
            request_meta(self.v, &self.client_caps(), Some(&self.client_info()))
        } else {
            let mut m = JsonObject::new();
            m.insert(META_PROGRESS_TOKEN.into(), json!("tok-1"));
            m
        }
    }

    /// A full JSON-RPC request message, encoded through the envelope.
    fn request<P: Serialize>(&mut self, def: &'static str, method: &'static str, p: &P) {
        self.next_id += 1;
        let raw = mcp_proto::RawJson::from_value(p).unwrap();
        let m = Message::Request(Request::new(
            RequestId::from(self.next_id),
            method,
            Some(raw),
        ));
        self.out
            .push((def, serde_json::from_slice(&m.to_vec()).unwrap()));
    }

    fn notification<P: Serialize>(&mut self, def: &'static str, method: &'static str, p: &P) {
        let raw = mcp_proto::RawJson::from_value(p).unwrap();
        let m = Message::Notification(mcp_proto::Notification::new(method, Some(raw)));
        self.out
            .push((def, serde_json::from_slice(&m.to_vec()).unwrap()));
    }

    /// A bare result object, and in 2026-07-28 also the `…Response` envelope if defined.
    fn result(&mut self, def: &'static str, response_def: Option<&'static str>, v: Value) {
        if let Some(rd) = response_def {
            let raw = mcp_proto::RawJson::from_value(&v).unwrap();
            let m = Message::Response(Response::new(RequestId::from("r-1"), raw));
            self.out
                .push((rd, serde_json::from_slice(&m.to_vec()).unwrap()));
        }
        self.out.push((def, v));
    }

    /// Adds `resultType` (and cache hints) to a server result JSON in 2026-07-28.
    fn res(&self, mut v: Value, cacheable: bool) -> Value {
        if self.modern() {
            v["resultType"] = json!("complete");
            if cacheable {
                v["ttlMs"] = json!(60000);
                v["cacheScope"] = json!("private");
            }
        }
        v
    }

    fn resp_def(&self, d: &'static str) -> Option<&'static str> {
        self.modern().then_some(d)
    }

    fn annotations(&self) -> Value {
        let mut a = json!({"audience": ["user", "assistant"], "priority": 0.5});
        if self.at_least(V::V2025_06_18) {
            a["lastModified"] = json!("2025-01-12T15:00:58Z");
        }
        a
    }

    /// Every content kind this revision has.
    fn content(&self) -> Value {
        let mut c = vec![
            enc(&ContentBlock::text("hello")),
            json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png", "annotations": self.annotations()}),
            json!({"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}}),
            json!({"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAEC"}}),
        ];
        if self.at_least(V::V2025_03_26) {
            c.push(json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}));
        }
        if self.at_least(V::V2025_06_18) {
            c.push(json!({"type": "resource_link", "uri": "file:///c.rs", "name": "c.rs", "mimeType": "text/x-rust"}));
        }
        Value::Array(c)
    }

    fn tool(&self) -> Value {
        let mut t = json!({
            "name": "get_weather",
            "description": "Weather for a city",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        });
        if self.at_least(V::V2025_03_26) {
            t["annotations"] =
                json!({"title": "Weather", "readOnlyHint": true, "openWorldHint": true});
        }
        if self.at_least(V::V2025_06_18) {
            t["title"] = json!("Weather");
            t["outputSchema"] = json!({"type": "object", "properties": {"t": {"type": "number"}}});
        }
        if self.at_least(V::V2025_11_25) {
            t["icons"] = json!([{"src": "https://example.com/w.png"}]);
        }
        if self.v == V::V2025_11_25 {
            t["execution"] = json!({"taskSupport": "optional"});
        }
        t
    }

    fn resource(&self) -> Value {
        let mut r = json!({"uri": "file:///project/README.md", "name": "README.md", "description": "Docs", "mimeType": "text/markdown", "annotations": self.annotations()});
        if self.at_least(V::V2025_03_26) {
            r["size"] = json!(1024);
        }
        if self.at_least(V::V2025_06_18) {
            r["title"] = json!("Read me");
        }
        if self.at_least(V::V2025_11_25) {
            r["icons"] = json!([{"src": "data:image/png;base64,AAAA", "theme": "dark"}]);
        }
        r
    }

    fn sampling_messages(&self) -> Value {
        let mut m =
            vec![json!({"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}})];
        if self.at_least(V::V2025_11_25) {
            m.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}}]}));
            m.push(json!({"role": "user", "content": [{"type": "tool_result", "toolUseId": "c1", "content": [{"type": "text", "text": "18C"}]}]}));
        } else {
            m.push(json!({"role": "assistant", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}}));
        }
        Value::Array(m)
    }

    fn create_message_params(&self) -> Value {
        let mut p = json!({
            "messages": self.sampling_messages(),
            "modelPreferences": {"hints": [{"name": "sonnet"}], "costPriority": 0.2, "speedPriority": 0.5, "intelligencePriority": 0.9},
            "systemPrompt": "Be brief.",
            "includeContext": "none",
            "temperature": 0.7,
            "maxTokens": 200,
            "stopSequences": ["\n\n"],
            "metadata": {"k": "v"}
        });
        if self.at_least(V::V2025_11_25) {
            p["tools"] = json!([self.tool()]);
            p["toolChoice"] = json!({"mode": "auto"});
        }
        p
    }

    fn elicit_form_params(&self) -> Value {
        let mut props = json!({
            "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 50},
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 18, "maximum": 150},
            "ok": {"type": "boolean", "default": false},
            "color": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]}
        });
        if self.at_least(V::V2025_11_25) {
            props["size"] = json!({"type": "string", "enum": ["s", "m", "l"], "default": "m"});
            props["tone"] = json!({"type": "string", "oneOf": [{"const": "f", "title": "Formal"}, {"const": "c", "title": "Casual"}]});
            props["tags"] = json!({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1});
            props["langs"] = json!({"type": "array", "items": {"anyOf": [{"const": "en", "title": "English"}]}, "maxItems": 2});
        }
        let mut p = json!({"message": "Who are you?", "requestedSchema": {"type": "object", "properties": props, "required": ["name"]}});
        if self.at_least(V::V2025_11_25) {
            p["mode"] = json!("form");
        }
        p
    }

    fn elicit_url_params(&self) -> Value {
        let mut p =
            json!({"mode": "url", "url": "https://example.com/connect", "message": "Sign in"});
        if self.v == V::V2025_11_25 {
            p["elicitationId"] = json!("el-1");
        }
        p
    }

    fn task(&self, status: &str) -> Value {
        json!({"taskId": "t-1", "status": status, "statusMessage": "busy", "createdAt": "2025-11-25T10:30:00Z",
               "lastUpdatedAt": "2025-11-25T10:31:00Z", "ttl": 60000, "pollInterval": 5000})
    }
}

fn build(rev: &str) -> Vec<(&'static str, Value)> {
    let v = V::parse(rev).unwrap();
    let mut g = Gen {
        v,
        next_id: 0,
        out: Vec::new(),
    };
    let modern = g.modern();
    let meta = g.meta();

    // ---- lifecycle ----
    if modern {
        g.request(
            "DiscoverRequest",
            "server/discover",
            &RequestParams::new().with_meta(meta.clone()),
        );
        let mut d = json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": true},
                              "prompts": {}, "completions": {}, "logging": {}, "extensions": {TASKS_EXTENSION: {}}},
            "instructions": "Use get_weather.", "ttlMs": 3600000, "cacheScope": "public"});
        d["_meta"] = json!({META_SERVER_INFO: g.server_info()});
        let d = srv::<DiscoverResult>(d);
        g.result("DiscoverResult", Some("DiscoverResultResponse"), d);
    } else {
        let p = InitializeParams::new(rev, g.client_caps(), g.client_info());
        g.request("InitializeRequest", "initialize", &p);
        let mut caps = json!({"tools": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": true},
                              "prompts": {"listChanged": true}, "logging": {}});
        if g.at_least(V::V2025_03_26) {
            caps["completions"] = json!({});
        }
        if v == V::V2025_11_25 {
            caps["tasks"] = json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
        }
        let r = srv::<InitializeResult>(json!({"protocolVersion": rev, "capabilities": caps,
            "serverInfo": g.server_info(), "instructions": "Use get_weather."}));
        g.result("InitializeResult", None, r);
        g.notification(
            "InitializedNotification",
            "notifications/initialized",
            &NotificationParams::new(),
        );
        g.request("PingRequest", "ping", &RequestParams::new());
        g.result("EmptyResult", None, enc(&EmptyResult::default()));
    }

    // ---- tools ----
    g.request(
        "ListToolsRequest",
        "tools/list",
        &PaginatedParams::new(Some("c1".into())).with_meta(meta.clone()),
    );
    let r = srv::<ListToolsResult>(g.res(json!({"tools": [g.tool()], "nextCursor": "c2"}), true));
    let rd = g.resp_def("ListToolsResultResponse");
    g.result("ListToolsResult", rd, r);
    let mut call = CallToolParams::new("get_weather")
        .with_arguments(json!({"city": "Paris"}))
        .with_meta(meta.clone());
    if v == V::V2025_11_25 {
        call = call.with_task(TaskMetadata::new(Some(60000)));
    }
    g.request("CallToolRequest", "tools/call", &call);
    let mut r = json!({"content": g.content(), "isError": false});
    if g.at_least(V::V2025_06_18) {
        r["structuredContent"] = json!({"t": 18});
    }
    let r = srv::<CallToolResult>(g.res(r, false));
    let rd = g.resp_def("CallToolResultResponse");
    g.result("CallToolResult", rd, r);

    // ---- resources ----
    g.request(
        "ListResourcesRequest",
        "resources/list",
        &PaginatedParams::new(None).with_meta(meta.clone()),
    );
    let r = srv::<ListResourcesResult>(
        g.res(json!({"resources": [g.resource()], "nextCursor": ""}), true),
    );
    let rd = g.resp_def("ListResourcesResultResponse");
    g.result("ListResourcesResult", rd, r);
    g.request(
        "ListResourceTemplatesRequest",
        "resources/templates/list",
        &PaginatedParams::new(None).with_meta(meta.clone()),
    );
    let mut t = json!({"uriTemplate": "file:///{path}", "name": "files", "description": "Any file", "mimeType": "text/plain", "annotations": g.annotations()});
    if g.at_least(V::V2025_06_18) {
        t["title"] = json!("Files");
    }
    let r = srv::<ListResourceTemplatesResult>(g.res(json!({"resourceTemplates": [t]}), true));
    let rd = g.resp_def("ListResourceTemplatesResultResponse");
    g.result("ListResourceTemplatesResult", rd, r);
    g.request(
        "ReadResourceRequest",
        "resources/read",
        &ReadResourceParams::new("file:///project/README.md").with_meta(meta.clone()),
    );
    let r = srv::<ReadResourceResult>(g.res(
        json!({"contents": [
            enc(&TextResourceContents::new("file:///project/README.md", "# Hi")),
            enc(&BlobResourceContents::new("file:///logo.png", "iVBORw0KGgo=")),
        ]}),
        true,
    ));
    let rd = g.resp_def("ReadResourceResultResponse");
    g.result("ReadResourceResult", rd, r);
    if modern {
        let filter = SubscriptionFilter::new()
            .with_tools_list_changed()
            .with_prompts_list_changed()
            .with_resources_list_changed()
            .with_resource("file:///project/README.md");
        g.request(
            "SubscriptionsListenRequest",
            "subscriptions/listen",
            &ListenParams::new(filter.clone()).with_meta(meta.clone()),
        );
        let ack = srv::<SubscriptionsAcknowledgedParams>(json!({
            "notifications": enc(&filter), "_meta": {META_SUBSCRIPTION_ID: 3}}));
        g.notification(
            "SubscriptionsAcknowledgedNotification",
            "notifications/subscriptions/acknowledged",
            &ack,
        );
        let r = srv::<ListenResult>(
            json!({"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: 3}}),
        );
        g.result(
            "SubscriptionsListenResult",
            Some("SubscriptionsListenResultResponse"),
            r,
        );
    } else {
        g.request(
            "SubscribeRequest",
            "resources/subscribe",
            &SubscribeParams::new("file:///project/README.md"),
        );
        g.request(
            "UnsubscribeRequest",
            "resources/unsubscribe",
            &UnsubscribeParams::new("file:///project/README.md"),
        );
    }

    // ---- prompts ----
    g.request(
        "ListPromptsRequest",
        "prompts/list",
        &PaginatedParams::new(None).with_meta(meta.clone()),
    );
    let mut p = json!({"name": "code_review", "description": "Review code",
        "arguments": [{"name": "code", "description": "The code", "required": true}]});
    if g.at_least(V::V2025_06_18) {
        p["title"] = json!("Code review");
        p["arguments"][0]["title"] = json!("Code");
    }
    if g.at_least(V::V2025_11_25) {
        p["icons"] = json!([{"src": "https://example.com/p.png"}]);
    }
    let r = srv::<ListPromptsResult>(g.res(json!({"prompts": [p]}), true));
    let rd = g.resp_def("ListPromptsResultResponse");
    g.result("ListPromptsResult", rd, r);
    g.request(
        "GetPromptRequest",
        "prompts/get",
        &GetPromptParams::new("code_review")
            .with_argument("code", "fn main() {}")
            .with_meta(meta.clone()),
    );
    let blocks = g.content();
    let msgs: Vec<Value> = blocks
        .as_array()
        .unwrap()
        .iter()
        .map(|b| json!({"role": "user", "content": b}))
        .collect();
    let r =
        srv::<GetPromptResult>(g.res(json!({"description": "Review", "messages": msgs}), false));
    let rd = g.resp_def("GetPromptResultResponse");
    g.result("GetPromptResult", rd, r);

    // ---- completion ----
    let mut c = CompleteParams::new(CompletionReference::prompt("code_review"), "language", "py")
        .with_meta(meta.clone());
    if g.at_least(V::V2025_06_18) {
        c = c.with_context_argument("framework", "flask");
    }
    g.request("CompleteRequest", "completion/complete", &c);
    g.request(
        "CompleteRequest",
        "completion/complete",
        &CompleteParams::new(
            CompletionReference::resource("file:///{path}"),
            "path",
            "sr",
        )
        .with_meta(meta.clone()),
    );
    let r = srv::<CompleteResult>(g.res(
        json!({"completion": {"values": ["python", "pytorch"], "total": 10, "hasMore": true}}),
        false,
    ));
    let rd = g.resp_def("CompleteResultResponse");
    g.result("CompleteResult", rd, r);

    // ---- logging ----
    if !modern {
        g.request(
            "SetLevelRequest",
            "logging/setLevel",
            &SetLevelParams::new(LoggingLevel::Warning),
        );
    }
    let log = srv::<LoggingMessageParams>(
        json!({"level": "error", "logger": "db", "data": {"error": "down"}}),
    );
    g.notification("LoggingMessageNotification", "notifications/message", &log);

    // ---- notifications ----
    g.notification(
        "CancelledNotification",
        "notifications/cancelled",
        &CancelledParams::new(RequestId::from(7), Some("user cancelled".into())),
    );
    let mut prog = ProgressParams::new(RequestId::from("tok-1"), 50.0, Some(100.0));
    if g.at_least(V::V2025_03_26) {
        prog.message = Some("halfway".into());
    }
    g.notification("ProgressNotification", "notifications/progress", &prog);
    let mut lc = json!({});
    if modern {
        lc["_meta"] = json!({META_SUBSCRIPTION_ID: 3});
    }
    let lc = srv::<ListChangedParams>(lc);
    g.notification(
        "ToolListChangedNotification",
        "notifications/tools/list_changed",
        &lc,
    );
    g.notification(
        "PromptListChangedNotification",
        "notifications/prompts/list_changed",
        &lc,
    );
    g.notification(
        "ResourceListChangedNotification",
        "notifications/resources/list_changed",
        &lc,
    );
    let mut up = json!({"uri": "file:///project/README.md"});
    if modern {
        up["_meta"] = json!({META_SUBSCRIPTION_ID: 3});
    }
    let up = srv::<ResourceUpdatedParams>(up);
    g.notification(
        "ResourceUpdatedNotification",
        "notifications/resources/updated",
        &up,
    );
    if !modern {
        g.notification(
            "RootsListChangedNotification",
            "notifications/roots/list_changed",
            &NotificationParams::new(),
        );
    }

    // ---- server → client: sampling, roots, elicitation ----
    // Legacy: JSON-RPC requests from the server. 2026-07-28: `{method, params}`
    // entries of an InputRequiredResult (no envelope).
    let cm = srv::<CreateMessageParams>(g.create_message_params());
    let roots = srv::<ListRootsParams>(json!({}));
    let form = srv::<ElicitParams>(g.elicit_form_params());
    let url = srv::<ElicitParams>(g.elicit_url_params());
    if modern {
        let ir = json!({
            "resultType": "input_required",
            "inputRequests": {
                "s": {"method": "sampling/createMessage", "params": cm},
                "r": {"method": "roots/list"},
                "f": {"method": "elicitation/create", "params": form},
                "u": {"method": "elicitation/create", "params": url},
            },
            "requestState": "opaque-state"
        });
        let ir: InputRequiredResult = serde_json::from_value(ir).unwrap();
        for (k, req) in ir.input_requests.as_ref().unwrap() {
            assert!(
                !matches!(req.typed().unwrap(), ServerRequest::Unknown { .. }),
                "{k}"
            );
            let def = match req.method.as_str() {
                "sampling/createMessage" => "CreateMessageRequest",
                "roots/list" => "ListRootsRequest",
                _ => "ElicitRequest",
            };
            g.out.push((def, enc(req)));
            g.out.push(("InputRequest", enc(req)));
        }
        g.result(
            "InputRequiredResult",
            Some("CallToolResultResponse"),
            enc(&ir),
        );
        // `tasks/update` and other acknowledgements: an empty complete result.
        let empty = srv::<EmptyResult>(json!({"resultType": "complete"}));
        g.result("EmptyResult", None, empty);
    } else {
        g.request("CreateMessageRequest", "sampling/createMessage", &cm);
        g.request("ListRootsRequest", "roots/list", &roots);
        if g.at_least(V::V2025_06_18) {
            g.request("ElicitRequest", "elicitation/create", &form);
        }
        if v == V::V2025_11_25 {
            g.request("ElicitRequest", "elicitation/create", &url);
            let done = srv::<ElicitationCompleteParams>(json!({"elicitationId": "el-1"}));
            g.notification(
                "ElicitationCompleteNotification",
                "notifications/elicitation/complete",
                &done,
            );
        }
    }
    // Client-built answers.
    let text = CreateMessageResult::new(Role::Assistant, ContentBlock::text("Paris"), "claude-x")
        .with_stop_reason(StopReason::EndTurn);
    g.result("CreateMessageResult", None, enc(&text));
    if g.at_least(V::V2025_11_25) {
        let uses: ContentBlock = serde_json::from_value(
            json!({"type": "tool_use", "id": "c2", "name": "get_weather", "input": {"city": "Rome"}}),
        )
        .unwrap();
        let r = CreateMessageResult::new(Role::Assistant, vec![uses], "claude-x")
            .with_stop_reason(StopReason::ToolUse);
        g.result("CreateMessageResult", None, enc(&r));
    }
    let roots = ListRootsResult::new(vec![
        Root::new("file:///home/u/repo").with_name("repo"),
        Root::new("file:///tmp"),
    ]);
    g.result("ListRootsResult", None, enc(&roots));
    if g.at_least(V::V2025_06_18) {
        let mut content = JsonObject::new();
        content.insert("name".into(), json!("octocat"));
        content.insert("age".into(), json!(30));
        content.insert("ok".into(), json!(true));
        if g.at_least(V::V2025_11_25) {
            content.insert("tags".into(), json!(["a", "b"]));
        }
        g.result("ElicitResult", None, enc(&ElicitResult::accept(content)));
        g.result("ElicitResult", None, enc(&ElicitResult::decline()));
        g.result("ElicitResult", None, enc(&ElicitResult::cancel()));
    }

    // ---- tasks (2025-11-25 core) ----
    if v == V::V2025_11_25 {
        let r = srv::<CreateTaskResult>(json!({"task": g.task("working")}));
        g.result("CreateTaskResult", None, r);
        g.request("GetTaskRequest", "tasks/get", &TaskIdParams::new("t-1"));
        let r = srv::<GetTaskResult>(g.task("input_required"));
        g.result("GetTaskResult", None, r);
        let mut unlimited = g.task("completed");
        unlimited["ttl"] = Value::Null;
        let r = srv::<GetTaskResult>(unlimited);
        g.result("GetTaskResult", None, r);
        g.request(
            "GetTaskPayloadRequest",
            "tasks/result",
            &TaskIdParams::new("t-1"),
        );
        let r = srv::<GetTaskPayloadResult>(json!({"content": [{"type": "text", "text": "done"}],
            "_meta": {META_RELATED_TASK: {"taskId": "t-1"}}}));
        g.result("GetTaskPayloadResult", None, r);
        g.request(
            "CancelTaskRequest",
            "tasks/cancel",
            &TaskIdParams::new("t-1"),
        );
        let r = srv::<CancelTaskResult>(g.task("cancelled"));
        g.result("CancelTaskResult", None, r);
        g.request(
            "ListTasksRequest",
            "tasks/list",
            &PaginatedParams::new(None),
        );
        let r = srv::<ListTasksResult>(
            json!({"tasks": [g.task("working"), g.task("failed")], "nextCursor": "n"}),
        );
        g.result("ListTasksResult", None, r);
        let n = srv::<TaskStatusParams>(g.task("completed"));
        g.notification("TaskStatusNotification", "notifications/tasks/status", &n);
    }
    g.out
}

/// Definitions that exist per revision but that this crate's messages cover.
fn covered(rev: &str) -> (usize, usize, usize, usize) {
    let items = build(rev);
    let mut defs: Vec<&str> = items.iter().map(|(d, _)| *d).collect();
    defs.sort_unstable();
    defs.dedup();
    let count = |suffix: &str| defs.iter().filter(|d| d.ends_with(suffix)).count();
    (
        count("Request"),
        count("Notification"),
        count("Result"),
        count("Response"),
    )
}

#[test]
fn every_message_validates_against_its_revision() {
    let mut failures = Vec::new();
    for rev in REVISIONS {
        let mut val = DefValidator::new(schema(rev));
        let items = build(rev);
        for (def, inst) in &items {
            if !val.has(def) {
                failures.push(format!("{rev}: schema has no {def}"));
                continue;
            }
            for e in val.errors(def, inst) {
                failures.push(format!("{rev} {def}: {e}\n    {inst}"));
            }
            for k in val.undeclared(def, inst) {
                // `tasks/result` returns the original result's members: open by design.
                if *def != "GetTaskPayloadResult" {
                    failures.push(format!(
                        "{rev} {def}: member `{k}` not in this revision\n    {inst}"
                    ));
                }
            }
        }
        let (rq, nt, rs, rp) = covered(rev);
        println!(
            "{rev}: {} instances; {rq} request, {nt} notification, {rs} result, {rp} response types",
            items.len()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every request/notification/result definition a client deals with is covered.
#[test]
fn coverage_of_schema_definitions() {
    // Definitions a client never encodes or decodes as a message of its own.
    const NOT_MESSAGES: &[&str] = &[
        "JSONRPCRequest",
        "JSONRPCNotification",
        "JSONRPCResponse",
        "JSONRPCResultResponse",
        "PaginatedRequest",
        "PaginatedResult",
        "Request",
        "Notification",
        "Result",
        "ClientRequest",
        "ServerRequest",
        "ClientNotification",
        "ServerNotification",
        "ClientResult",
        "ServerResult",
        "CacheableResult",
        "JSONRPCBatchRequest",
        "JSONRPCBatchResponse",
    ];
    let mut missing = Vec::new();
    for rev in REVISIONS {
        let s = schema(rev);
        let defs = s.get("$defs").or_else(|| s.get("definitions")).unwrap();
        let built: std::collections::BTreeSet<&str> = build(rev).iter().map(|(d, _)| *d).collect();
        let mut total = 0;
        for name in defs.as_object().unwrap().keys() {
            let is_msg = ["Request", "Notification", "Result", "ResultResponse"]
                .iter()
                .any(|s| name.ends_with(s));
            if is_msg && !NOT_MESSAGES.contains(&name.as_str()) {
                total += 1;
                if !built.contains(name.as_str()) {
                    missing.push(format!("{rev}: {name}"));
                }
            }
        }
        println!(
            "{rev}: {} of {total} message definitions covered",
            total - missing.iter().filter(|m| m.starts_with(rev)).count()
        );
    }
    assert!(missing.is_empty(), "not covered:\n{}", missing.join("\n"));
}

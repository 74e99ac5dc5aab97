//! The client that `cargo xtask conformance` runs against the official MCP
//! conformance suite (`@modelcontextprotocol/conformance`).
//!
//! Usage (the suite's runner calls it this way): `conformance-client <server-url>`,
//! with `MCP_CONFORMANCE_SCENARIO` naming the scenario. It uses only the
//! public API of the workspace crates and takes one code path for every
//! scenario, as an application would: connect over Streamable HTTP (the
//! client negotiates the protocol revision itself), list the tools, call each
//! one with arguments built from its input schema, answer the server's
//! requests through a [`ClientHandler`], close.
//!
//! - `elicitation/create` (form mode) is accepted with every field the schema
//!   gives a `default` for (SEP-1034); it is declined when a required field has
//!   no default (there is no user to ask) and in URL mode (no browser).
//! - roots are not advertised (`roots/list` is answered "method not found").
//!
//! Exit status: 0 when the session opened and every call succeeded, 1
//! otherwise (the reason is printed on stderr, which the runner keeps in
//! `stderr.txt`), 2 on a usage error.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use mcp_client::{Client, ClientError, ClientHandler, VersionChoice};
use mcp_proto::error::chain;
use mcp_proto::schema::{ClientCapabilities, ElicitParams, ElicitResult, Tool};
use mcp_proto::{ErrorCode, ErrorObject, ProtocolVersion};
use mcp_transport_http::HttpTransport;
use serde_json::{Map, Value, json};

/// Per-request timeout: well under the runner's 30 s, so a hang shows up as
/// our own error message rather than as the runner killing us.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// Deepest nesting of object schemas filled in when building tool arguments.
const MAX_SCHEMA_DEPTH: usize = 8;

fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client <server-url> (the conformance runner appends it)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("conformance-client: cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let started = Instant::now();
    let outcome = runtime.block_on(run(&url));
    let secs = started.elapsed().as_secs_f64();
    match outcome {
        Ok(()) => {
            eprintln!("conformance-client: scenario {scenario:?}: done in {secs:.2}s");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("conformance-client: scenario {scenario:?}: FAILED after {secs:.2}s: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(url: &str) -> Result<(), String> {
    // The standalone GET stream carries server requests that are not tied to
    // one of our requests (the suite's elicitation server sends
    // `elicitation/create` there), so a client that answers server requests
    // opens it.
    let auth = auth_provider(url)?;
    let transport = HttpTransport::builder(url)
        .standalone_stream(true)
        .auth(auth)
        .build()
        .map_err(|e| format!("bad server URL {url:?}: {}", chain(&e)))?;
    let client = Client::builder("mcp-rs-conformance-client", env!("CARGO_PKG_VERSION"))
        .protocol(protocol_choice()?)
        .handler(Handler)
        .request_timeout(REQUEST_TIMEOUT)
        .resend_on_session_expiry(true)
        .connect(transport)
        .await
        // An authorization failure is in the error's chain, and its text.
        .map_err(|e| format!("connect: {}", chain(&e)))?;
    if let Some(server) = client.server() {
        eprintln!(
            "conformance-client: connected to {} {} with protocol {}",
            server.implementation.name, server.implementation.version, server.protocol_version
        );
    }
    let result = exercise(&client).await;
    client.close().await;
    result
}

/// The Client ID Metadata Document URL the auth scenarios expect.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// The redirect URI announced; the suite's authorization server redirects
/// there at once, and `FollowRedirect` reads the code off that redirect.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// OAuth as an unattended application configures it: credentials from
/// `MCP_CONFORMANCE_CONTEXT` when the suite hands some over (a private key:
/// `private_key_jwt` client credentials; an IdP ID token: SEP-990; a
/// workload JWT: the SEP-1933 JWT-bearer grant; a secret in the
/// client-credentials scenarios: `client_credentials`; otherwise
/// pre-registered credentials for the authorization code flow), else
/// authorization code with a Client ID Metadata Document URL and dynamic
/// registration; always with a DPoP key (SEP-1932), used where the
/// authorization server offers DPoP. Servers that never answer 401 never
/// trigger it.
fn auth_provider(url: &str) -> Result<mcp_auth::OAuthProvider, String> {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let ctx: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let field = |k: &str| ctx.get(k).and_then(Value::as_str).map(str::to_owned);
    let mut b = mcp_auth::OAuthProvider::builder(url)
        .client_name("mcp-rs-conformance-client")
        .client_metadata_url(CLIENT_METADATA_URL);
    if let Some(id) = field("client_id") {
        b = b.client(id, field("client_secret"));
    }
    b = if let Some(id_token) = field("idp_id_token") {
        b.identity_assertion(mcp_auth::IdentityAssertion {
            idp_token_endpoint: field("idp_token_endpoint").unwrap_or_default(),
            id_token,
            idp_client_id: field("idp_client_id").unwrap_or_default(),
            idp_client_secret: None,
        })
    } else if let Some(token) = workload_identity(&ctx) {
        b.jwt_bearer(token)
    } else if let Some(pem) = field("private_key_pem") {
        let key = mcp_auth::Es256Key::from_pkcs8_pem(&pem).map_err(|e| chain(&e).to_string())?;
        b.client_credentials().private_key_jwt(key)
    } else if scenario.starts_with("auth/client-credentials") {
        b.client_credentials()
    } else {
        let policy = mcp_auth::SsrfPolicy::new().allow_loopback(true);
        b.interaction(
            mcp_auth::FollowRedirect::new(REDIRECT_URI, policy)
                .map_err(|e| chain(&e).to_string())?,
        )
    };
    b = with_dpop(b)?;
    b.build().map_err(|e| format!("OAuth setup: {}", chain(&e)))
}

/// Workload identity federation (SEP-1933): the suite hands the workload's
/// JWT over as `valid_jwt` (a deployment would read a platform token file,
/// `WorkloadToken::file`).
fn workload_identity(ctx: &Value) -> Option<mcp_auth::WorkloadToken> {
    let jwt = ctx.get("valid_jwt")?.as_str()?;
    Some(mcp_auth::WorkloadToken::fixed(jwt))
}

/// DPoP (SEP-1932) with a key made for this run: used where the
/// authorization server advertises it, bearer tokens elsewhere.
fn with_dpop(b: mcp_auth::OAuthProviderBuilder) -> Result<mcp_auth::OAuthProviderBuilder, String> {
    let key = mcp_auth::Es256Key::generate().map_err(|e| format!("DPoP key: {}", chain(&e)))?;
    Ok(b.dpop(key))
}

/// The revision to speak: `MCP_CONFORMANCE_PROTOCOL_VERSION` when the runner
/// names one (an `initialize` handshake through 2025-11-25, stateless
/// per-request `_meta` for 2026-07-28), else whatever the server supports
/// (the client probes `server/discover` and falls back to `initialize`).
fn protocol_choice() -> Result<VersionChoice, String> {
    match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        Ok(v) if !v.is_empty() => ProtocolVersion::parse(&v)
            .map(VersionChoice::Pinned)
            .ok_or_else(|| {
                format!("MCP_CONFORMANCE_PROTOCOL_VERSION={v:?} is no revision we know")
            }),
        _ => Ok(VersionChoice::Auto),
    }
}

/// The suite's context for this scenario (`MCP_CONFORMANCE_CONTEXT`), or null.
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null)
}

/// What the application does once connected. By default it lists the tools
/// and calls each one; some scenarios describe a task of their own.
async fn exercise(client: &Client) -> Result<(), String> {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match scenario.as_str() {
        // "The client should list tools (and may otherwise process the schema)."
        "json-schema-ref-no-deref" => list_tools(client).await.map(drop),
        "json-schema-2020-12-preservation" => echo_input_schema(client).await,
        "sep-2640-client-no-prefetch" => list_skills(client).await.map(drop),
        s if s.starts_with("sep-2640-client-verify-") => load_skills(client).await,
        _ => match context().get("toolCalls").and_then(Value::as_array) {
            Some(calls) => call_listed_tools(client, calls).await,
            None => call_every_tool(client).await,
        },
    }
}

async fn list_tools(client: &Client) -> Result<Vec<mcp_proto::schema::Tool>, String> {
    let tools = client
        .list_all::<Tool>()
        .await
        .map_err(|e| format!("tools/list: {}", chain(&e)))?;
    eprintln!("conformance-client: {} tool(s)", tools.len());
    Ok(tools)
}

/// The calls the scenario's context names, with its arguments, after
/// `tools/list` (which teaches the transport the tools' `x-mcp-header`s).
async fn call_listed_tools(client: &Client, calls: &[Value]) -> Result<(), String> {
    list_tools(client).await?;
    let mut failures = Vec::new();
    for call in calls {
        let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
        let args = call.get("arguments").cloned().unwrap_or_else(|| json!({}));
        eprintln!("conformance-client: calling {name} with {args}");
        if let Err(e) = call_one(client, name, args).await {
            failures.push(e);
        }
    }
    all_ok(failures)
}

async fn call_one(client: &Client, name: &str, args: Value) -> Result<(), String> {
    match client.call_tool(name, args).await {
        Ok(r) if r.is_error == Some(true) => Err(format!(
            "{name}: the tool reported an error: {:?}",
            r.content
        )),
        Ok(r) => {
            eprintln!("conformance-client: {name} answered {:?}", r.content);
            Ok(())
        }
        Err(e) => Err(format!("{name}: {}", describe(&e))),
    }
}

/// SEP-1613 / SEP-2106: hand the focal tool's `inputSchema`, exactly as the
/// library kept it, to the echo tool.
async fn echo_input_schema(client: &Client) -> Result<(), String> {
    const FOCAL: &str = "json_schema_2020_12_tool";
    const ECHO: &str = "json_schema_echo";
    let tools = list_tools(client).await?;
    let focal = tools
        .iter()
        .find(|t| t.name == FOCAL)
        .ok_or_else(|| format!("the server lists no {FOCAL}"))?;
    let schema: Value = focal
        .input_schema
        .decode()
        .map_err(|e| format!("{FOCAL}'s input schema: {e}"))?;
    call_one(client, ECHO, json!({ "schema": schema })).await
}

/// SEP-2640: what a host does at connection: list the skills, fetch nothing.
async fn list_skills(client: &Client) -> Result<Vec<mcp_proto::schema::SkillEntry>, String> {
    if !client.offers_skills() {
        return Err("the server does not declare the Skills extension".into());
    }
    let skills = client
        .list_skills()
        .await
        .map_err(|e| format!("skills/list: {}", chain(&e)))?;
    eprintln!("conformance-client: {} skill(s)", skills.len());
    Ok(skills)
}

/// SEP-2640: the host needs each skill: load it (its verified `SKILL.md`),
/// then read its other files, each verified; a file that fails verification
/// stops that skill before anything else of it is read.
async fn load_skills(client: &Client) -> Result<(), String> {
    for entry in list_skills(client).await? {
        let skill = client
            .load_skill(&entry)
            .await
            .map_err(|e| chain(&e).to_string())?;
        eprintln!(
            "conformance-client: loaded skill {:?} ({} bytes)",
            entry.name().unwrap_or("?"),
            skill.skill_md.len()
        );
        for file in entry.resources.iter().filter(|f| f.uri != entry.uri) {
            let bytes = client
                .read_skill_file(&entry, &file.uri)
                .await
                .map_err(|e| chain(&e).to_string())?;
            eprintln!(
                "conformance-client: read {} ({} bytes)",
                file.uri,
                bytes.len()
            );
        }
    }
    Ok(())
}

/// Lists the tools and calls each one with arguments built from its schema.
async fn call_every_tool(client: &Client) -> Result<(), String> {
    let mut failures = Vec::new();
    for tool in list_tools(client).await? {
        let schema: Map<String, Value> = tool.input_schema.decode().unwrap_or_default();
        let args = arguments_for(&schema);
        eprintln!("conformance-client: calling {} with {args}", tool.name);
        if let Err(e) = call_one(client, &tool.name, args).await {
            failures.push(e);
        }
    }
    all_ok(failures)
}

/// `Ok` when nothing failed, else every failure in one message.
fn all_ok(failures: Vec<String>) -> Result<(), String> {
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; "))
    }
}

fn describe(e: &ClientError) -> String {
    match e.rpc() {
        Some(rpc) => format!("server error {}: {}", rpc.code, rpc.message),
        None => chain(e).to_string(),
    }
}

/// Arguments for a tool: every required property (and every property with a
/// default) filled from its schema.
fn arguments_for(schema: &Map<String, Value>) -> Value {
    object_from_schema(schema, 0)
}

fn object_from_schema(schema: &Map<String, Value>, depth: usize) -> Value {
    let mut out = Map::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Value::Object(out);
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, prop) in props {
        let Some(prop) = prop.as_object() else {
            continue;
        };
        if let Some(d) = prop.get("default") {
            out.insert(name.clone(), d.clone());
        } else if required.contains(&name.as_str()) {
            out.insert(name.clone(), example_value(prop, depth));
        }
    }
    Value::Object(out)
}

/// A plausible value for a property without a default.
fn example_value(prop: &Map<String, Value>, depth: usize) -> Value {
    if let Some(c) = prop.get("const") {
        return c.clone();
    }
    if let Some(first) = prop
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let ty = match prop.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ => "string",
    };
    match ty {
        "integer" | "number" => {
            let min = prop.get("minimum").and_then(Value::as_i64).unwrap_or(1);
            json!(min.max(1))
        }
        "boolean" => json!(true),
        "array" => json!([]),
        "object" if depth < MAX_SCHEMA_DEPTH => object_from_schema(prop, depth + 1),
        "object" => json!({}),
        "null" => Value::Null,
        _ => json!("conformance"),
    }
}

/// Answers the server's requests as an unattended application would.
struct Handler;

impl ClientHandler for Handler {
    fn capabilities(&self) -> ClientCapabilities {
        // Form mode only: with no browser, URL-mode elicitation is declined.
        let mut caps = ClientCapabilities::default().with_elicitation_form();
        // Skills (SEP-2640): this host loads skills a server lists.
        let mut extensions = Map::new();
        extensions.insert(mcp_proto::schema::SKILLS_EXTENSION.into(), json!({}));
        caps.extensions = Some(extensions);
        caps
    }

    async fn elicit(&self, params: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        let params = serde_json::to_value(&params).unwrap_or_default();
        serde_json::from_value(elicit(&params))
            .map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string()))
    }
}

/// SEP-1034: accept a form with the schema's defaults filled in; decline when
/// a required field has no default, or in URL mode.
fn elicit(params: &Value) -> Value {
    let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
    if mode != "form" {
        eprintln!("conformance-client: declining {mode}-mode elicitation (no browser here)");
        return json!({ "action": "decline" });
    }
    let schema = params.get("requestedSchema").and_then(Value::as_object);
    let props = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    for (name, prop) in props.into_iter().flatten() {
        if let Some(d) = prop.get("default") {
            content.insert(name.clone(), d.clone());
        }
    }
    if let Some(missing) = required.iter().find(|r| !content.contains_key(**r)) {
        eprintln!(
            "conformance-client: declining elicitation: required field {missing:?} has no default"
        );
        return json!({ "action": "decline" });
    }
    eprintln!("conformance-client: accepting elicitation with defaults {content:?}");
    json!({ "action": "accept", "content": content })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elicitation_fills_every_default() {
        let params = json!({
            "message": "m",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "nick": {"type": "string"}
            }, "required": []}
        });
        assert_eq!(
            elicit(&params),
            json!({"action": "accept", "content": {
                "name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true
            }})
        );
    }

    #[test]
    fn elicitation_declines_required_without_default_and_url_mode() {
        let params = json!({"requestedSchema": {"properties": {"x": {"type": "string"}}, "required": ["x"]}});
        assert_eq!(elicit(&params), json!({"action": "decline"}));
        let params = json!({"mode": "url", "url": "https://example.com", "elicitationId": "1"});
        assert_eq!(elicit(&params), json!({"action": "decline"}));
    }

    #[test]
    fn tool_arguments_from_schema() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "number"}, "b": {"type": "integer", "minimum": 3},
            "c": {"type": "string", "default": "d"}, "opt": {"type": "string"},
            "e": {"enum": ["x", "y"]}, "o": {"type": "object", "properties": {"n": {"type": "boolean"}}, "required": ["n"]}
        }, "required": ["a", "b", "e", "o"]});
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        assert_eq!(
            arguments_for(&schema),
            json!({"a": 1, "b": 3, "c": "d", "e": "x", "o": {"n": true}})
        );
    }
}

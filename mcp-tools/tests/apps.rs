//! MCP Apps against a real server using the extension: FastMCP's own apps
//! support (`peers/fastmcp_apps.py`, FastMCP 4.1.4 pinned in
//! `peers/fastmcp-requirements.txt`), over stdio.
//!
//! Its app-only tool (`refresh_dashboard`, `visibility: ["app"]`) is absent
//! from every model-facing surface of a toolbox and callable for the app;
//! its model-only tool is refused to the app; its UI resource reads typed.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use mcp_client::Client;
use mcp_tools::{McpTool, Server, Tool, ToolError, Toolbox, read_ui_resource};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;

const APP_ONLY: &str = "refresh_dashboard";

async fn connect(ui_extension: bool) -> Option<Client> {
    let peer = test_support::fastmcp_apps()?;
    let cmd = ServerCommand::new(peer.program)
        .args(peer.args)
        .arg("stdio")
        .stderr(Stderr::discard());
    let client = tokio::time::timeout(
        Duration::from_secs(60),
        Client::builder("mcp-tools-tests", "0.1.0")
            .ui_extension(ui_extension)
            .connect(StdioTransport::spawn(cmd).unwrap()),
    )
    .await
    .expect("connect timed out")
    .unwrap();
    Some(client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_only_tools_never_reach_the_model_and_stay_callable_for_the_app() {
    let Some(client) = connect(true).await else {
        return;
    };
    // The server lists it: what the toolbox leaves out is its own decision.
    let listed = client.list_all::<mcp_proto::schema::Tool>().await.unwrap();
    let app_only = listed.iter().find(|t| t.name == APP_ONLY).unwrap();
    assert!(!app_only.is_model_visible() && app_only.is_app_visible());

    let toolbox = Toolbox::builder()
        .server(Server::new("weather", client.clone()))
        .build()
        .await
        .unwrap();

    // Every model-facing surface.
    let names: Vec<String> = toolbox
        .tools()
        .await
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "get_weather",
            "weather_summary",
            "legacy_view",
            "client_has_ui"
        ]
    );
    assert!(toolbox.snapshot().iter().all(|t| t.name() != APP_ONLY));
    assert!(toolbox.get(APP_ONLY).is_none());
    assert!(toolbox.resolve(APP_ONLY).is_none());
    let exports = [
        serde_json::to_string(&toolbox.openai_definitions().await).unwrap(),
        serde_json::to_string(&toolbox.anthropic_definitions().await).unwrap(),
        serde_json::to_string(&toolbox.openai_tools().await).unwrap(),
        serde_json::to_string(&toolbox.anthropic_tools().await).unwrap(),
    ];
    for e in &exports {
        assert!(e.contains("get_weather"), "{e}");
        assert!(!e.contains(APP_ONLY), "an app-only tool in an export: {e}");
    }
    // Search: the words of its description find the model's tools only.
    let hits: Vec<String> = toolbox
        .search("refresh the dashboard data", 10)
        .await
        .into_iter()
        .map(|h| h.name)
        .collect();
    assert!(
        !hits.is_empty() && !hits.iter().any(|n| n == APP_ONLY),
        "{hits:?}"
    );
    let bare: Vec<String> = McpTool::list(&client)
        .await
        .unwrap()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert!(
        !bare.iter().any(|n| n == APP_ONLY),
        "McpTool::list: {bare:?}"
    );
    // A model that names it anyway finds nothing, and nothing is sent.
    let err = toolbox
        .call(APP_ONLY, json!({"city": "Oslo"}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ToolError::NotFound { .. }) && err.is_model_correctable(),
        "{err:?}"
    );

    // The app calls its server's tools by their own names.
    let out = toolbox
        .call_from_app("weather", APP_ONLY, json!({"city": "Oslo"}))
        .await
        .unwrap();
    assert_eq!(out.text, "refreshed Oslo");
    let out = toolbox
        .call_from_app("weather", "get_weather", json!({"city": "Oslo"}))
        .await
        .unwrap();
    assert_eq!(out.text, "sunny in Oslo, 21 C");
    let err = toolbox
        .call_from_app("weather", "weather_summary", json!({"city": "Oslo"}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::NotForApp { .. }), "{err:?}");
    let err = toolbox
        .call_from_app("elsewhere", APP_ONLY, json!({"city": "Oslo"}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::NotFound { .. }), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_resource_reads_typed_and_the_extension_is_the_applications_choice() {
    let (Some(with), Some(without)) = (connect(true).await, connect(false).await) else {
        return;
    };
    let toolbox = Toolbox::builder()
        .server(Server::new("weather", with.clone()))
        .build()
        .await
        .unwrap();
    let ask = |t: &Toolbox| {
        let t = t.clone();
        async move { t.call("client_has_ui", json!({})).await.unwrap().text }
    };
    assert_eq!(ask(&toolbox).await, "yes");
    let plain = Toolbox::builder()
        .server(Server::new("weather", without))
        .build()
        .await
        .unwrap();
    assert_eq!(ask(&plain).await, "no");

    // Both spellings of the tool's UI resource.
    let tool = toolbox.get("get_weather").unwrap();
    let uri = tool.definition().ui().unwrap().resource_uri.unwrap();
    assert_eq!(uri, "ui://weather/dashboard.html");
    let legacy = toolbox
        .get("legacy_view")
        .unwrap()
        .definition()
        .ui()
        .unwrap();
    assert_eq!(legacy.resource_uri.as_deref(), Some(uri.as_str()));

    let ui = read_ui_resource(tool.client(), &uri).await.unwrap();
    assert!(ui.html.contains("<h1>Weather</h1>"), "{}", ui.html);
    let csp = ui.meta.csp.clone().unwrap();
    assert_eq!(
        csp.connect_domains.as_deref(),
        Some(&["https://api.weather.example".to_owned()][..])
    );
    assert_eq!(
        csp.resource_domains.as_deref(),
        Some(&["https://cdn.example".to_owned()][..])
    );
    assert!(ui.meta.permissions.clone().unwrap().camera.is_some());
    assert_eq!(ui.meta.prefers_border, Some(true));

    let err = read_ui_resource(tool.client(), "file:///etc/passwd")
        .await
        .unwrap_err();
    assert!(
        matches!(err, mcp_tools::UiResourceError::NotUi { .. }),
        "{err:?}"
    );
}

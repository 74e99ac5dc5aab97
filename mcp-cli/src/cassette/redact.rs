//! What never goes into a cassette: credentials and secrets.
//!
//! Two rules, applied to every message and to the recorded command line:
//!
//! - **secret members**: the string value of an object member whose name
//!   says it holds a credential (`token`, `secret`, `password`, `apiKey`,
//!   `authorization`, `cookie`, `credential`, `privateKey`, `accessKey`,
//!   in any case, with or without `_`/`-`; `progressToken` and the
//!   pagination members are the protocol's own and kept) becomes
//!   [`REDACTED`];
//! - **known secret values**: wherever a string contains one of the values
//!   `mcp` knows to be secret, it is replaced by [`REDACTED`]: the values of
//!   `--header`s, of the configured server's `env` and `headers`, the OAuth
//!   tokens in `mcp`'s token cache, and this process's environment
//!   variables whose names say they are secrets (`*TOKEN*`, `*SECRET*`,
//!   `*KEY*`, `*PASSWORD*`, `*PASSWD*`, `*CREDENTIAL*`, `*AUTH*`,
//!   `*COOKIE*`). Values shorter than [`MIN_SECRET_LEN`] are left alone (a
//!   `1` or `true` would blank out half a session).
//!
//! HTTP headers themselves (`Authorization`, cookies) are never recorded:
//! a cassette holds JSON-RPC messages, not HTTP exchanges.
//!
//! Key order and every untouched value are kept byte for byte: a message
//! with nothing to redact is recorded as it was received.

use serde_json::value::RawValue;

use mcp_cli::raw_json::Object;

/// What a redacted value becomes.
pub(crate) const REDACTED: &str = "[REDACTED]";

/// Secret values shorter than this are not searched for.
pub(crate) const MIN_SECRET_LEN: usize = 6;

/// Parts of a member name (lowercase, `_` and `-` removed) that say its
/// value is a credential.
const SECRET_NAME_PARTS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "authorization",
    "cookie",
    "credential",
    "privatekey",
    "accesskey",
];

/// Member names that look secret but are the protocol's own.
const PROTOCOL_NAMES: &[&str] = &["progresstoken", "nexttoken", "maxtokens", "tokens"];

/// Parts of an environment variable's name that say its value is secret.
const SECRET_ENV_PARTS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "KEY",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
];

/// The redaction rules of one recording.
#[derive(Debug, Default, Clone)]
pub(crate) struct Redactor {
    /// Known secret values, longest first (so a secret containing another
    /// is replaced whole).
    values: Vec<String>,
}

impl Redactor {
    /// Rules that know `values` as secrets (plus nothing else).
    pub(crate) fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut values: Vec<String> = values
            .into_iter()
            .filter(|v| v.len() >= MIN_SECRET_LEN)
            .collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Redactor { values }
    }

    /// The values of this process's environment variables whose names say
    /// they are secrets.
    pub(crate) fn secret_env() -> impl Iterator<Item = String> {
        std::env::vars_os().filter_map(|(k, v)| {
            let k = k.to_string_lossy().to_ascii_uppercase();
            SECRET_ENV_PARTS
                .iter()
                .any(|p| k.contains(p))
                .then(|| v.into_string().ok())
                .flatten()
        })
    }

    /// `text` (one JSON value) with every secret redacted; `None` when
    /// there was nothing to redact (the text is then kept as it is).
    pub(crate) fn json(&self, text: &str) -> Option<String> {
        if !self.may_hold_secret(text) {
            return None;
        }
        let raw: Box<RawValue> = serde_json::from_str(text).ok()?;
        let out = self.value(&raw)?;
        (out != text).then_some(out)
    }

    /// A command-line word with known secret values redacted.
    pub(crate) fn word(&self, word: &str) -> String {
        self.text(word).unwrap_or_else(|| word.to_owned())
    }

    /// Whether `text` mentions a secret-looking name or a known value: the
    /// cheap check before the walk.
    fn may_hold_secret(&self, text: &str) -> bool {
        let lower = text.to_ascii_lowercase();
        let squeezed: String = lower.chars().filter(|c| *c != '_' && *c != '-').collect();
        SECRET_NAME_PARTS.iter().any(|p| squeezed.contains(p))
            || self.values.iter().any(|v| text.contains(v.as_str()))
    }

    /// One value, redacted; `None` if it cannot be read (kept as it is).
    fn value(&self, raw: &RawValue) -> Option<String> {
        let text = raw.get().trim();
        match text.as_bytes().first()? {
            b'{' => {
                let obj = Object::parse(text).ok()?;
                let mut out = String::with_capacity(text.len());
                out.push('{');
                for (i, (k, v)) in obj.0.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(k).ok()?);
                    out.push(':');
                    if secret_name(k) && v.get().trim_start().starts_with('"') {
                        out.push_str(&serde_json::to_string(REDACTED).ok()?);
                    } else {
                        out.push_str(&self.value(v)?);
                    }
                }
                out.push('}');
                Some(out)
            }
            b'[' => {
                let items: Vec<Box<RawValue>> = serde_json::from_str(text).ok()?;
                let parts: Option<Vec<String>> = items.iter().map(|v| self.value(v)).collect();
                Some(format!("[{}]", parts?.join(",")))
            }
            b'"' => {
                let s: String = serde_json::from_str(text).ok()?;
                match self.text(&s) {
                    Some(r) => serde_json::to_string(&r).ok(),
                    None => Some(text.to_owned()),
                }
            }
            _ => Some(text.to_owned()),
        }
    }

    /// `s` with known secret values replaced; `None` if none occurs.
    fn text(&self, s: &str) -> Option<String> {
        let mut out: Option<String> = None;
        for v in &self.values {
            let cur = out.as_deref().unwrap_or(s);
            if cur.contains(v.as_str()) {
                out = Some(cur.replace(v.as_str(), REDACTED));
            }
        }
        out
    }
}

/// Whether a member's name says its value is a credential.
fn secret_name(name: &str) -> bool {
    let n: String = name
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    !PROTOCOL_NAMES.contains(&n.as_str()) && SECRET_NAME_PARTS.iter().any(|p| n.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_members_are_redacted_and_key_order_kept() {
        let r = Redactor::default();
        let text = r#"{"z":1,"api_key":"k-123","nested":{"Access-Token":"t","progressToken":"p"},"a":[{"password":"pw"}],"maxTokens":5}"#;
        assert_eq!(
            r.json(text).unwrap(),
            r#"{"z":1,"api_key":"[REDACTED]","nested":{"Access-Token":"[REDACTED]","progressToken":"p"},"a":[{"password":"[REDACTED]"}],"maxTokens":5}"#
        );
        // Nothing to redact: kept as received (no re-encoding).
        assert_eq!(r.json(r#"{"b": 1, "a": "x"}"#), None);
    }

    #[test]
    fn known_values_are_redacted_wherever_they_appear() {
        let r = Redactor::new(["s3cr3t-value".to_owned(), "ab".to_owned()]);
        let text = r#"{"content":[{"type":"text","text":"the key is s3cr3t-value!"}],"ab":"ab"}"#;
        assert_eq!(
            r.json(text).unwrap(),
            r#"{"content":[{"type":"text","text":"the key is [REDACTED]!"}],"ab":"ab"}"#
        );
        assert_eq!(r.word("Bearer s3cr3t-value"), "Bearer [REDACTED]");
    }
}

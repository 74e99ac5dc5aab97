//! The Skills extension (SEP-2640), feature `skills`: list a server's
//! skills, load one on need, and never use a file that is not what the
//! listing promised.
//!
//! Nothing is fetched ahead of need: [`Client::list_skills`] reads only the
//! listing, [`Client::load_skill`] only the skill's `SKILL.md`, and
//! [`Client::read_skill_file`] only the file asked for. Every file read is
//! checked against its manifest entry: its byte length against `size`
//! first, then its SHA-256 against `digest`; a `SKILL.md` also has its YAML
//! frontmatter compared field by field with the entry's `frontmatter`. A
//! mismatch is [`ClientError::SkillVerification`] and the content is
//! dropped.
//!
//! The frontmatter reader understands what skills use: top-level
//! `key: value` lines with plain, `'single'` or `"double"` quoted scalars
//! (compared as text with the entry's strings, numbers and booleans);
//! a key whose value is a nested block (a map, a list, `|`/`>` text) must
//! be present on both sides with a non-scalar value, and is not compared
//! further.

use base64::Engine;
use mcp_proto::schema::{JsonObject, ReadResourceResult, SKILLS_EXTENSION, SkillEntry, SkillFile};
use serde_json::Value;

use super::Client;
use crate::error::ClientError;

/// A loaded skill: its entry and its verified `SKILL.md`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LoadedSkill {
    /// The listing's entry.
    pub entry: SkillEntry,
    /// `SKILL.md`, frontmatter included, verified.
    pub skill_md: String,
}

impl Client {
    /// Whether the server declared the Skills extension
    /// ([`SKILLS_EXTENSION`] in `capabilities.extensions`).
    pub fn offers_skills(&self) -> bool {
        self.server().is_some_and(|s| {
            s.capabilities
                .extensions
                .as_ref()
                .is_some_and(|e| e.contains_key(SKILLS_EXTENSION))
        })
    }

    /// Every skill the server lists (`skills/list`, following cursors). Reads
    /// no skill file.
    pub async fn list_skills(&self) -> Result<Vec<SkillEntry>, ClientError> {
        self.list_all::<SkillEntry>().await
    }

    /// Loads a skill: reads its `SKILL.md` (and nothing else) and verifies
    /// size, digest and frontmatter against the entry.
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<LoadedSkill, ClientError> {
        let bytes = self.read_skill_file(entry, &entry.uri).await?;
        let skill_md = String::from_utf8(bytes).map_err(|_| ClientError::SkillVerification {
            uri: entry.uri.clone(),
            reason: "SKILL.md is not UTF-8".into(),
        })?;
        compare_frontmatter(&skill_md, &entry.frontmatter).map_err(|reason| {
            ClientError::SkillVerification {
                uri: entry.uri.clone(),
                reason,
            }
        })?;
        Ok(LoadedSkill {
            entry: entry.clone(),
            skill_md,
        })
    }

    /// Reads one file of a skill (`resources/read`) and returns its bytes once
    /// they match the entry's manifest (size, then digest). A file the
    /// manifest does not list is refused before anything is read.
    pub async fn read_skill_file(
        &self,
        entry: &SkillEntry,
        uri: &str,
    ) -> Result<Vec<u8>, ClientError> {
        let fail = |reason: String| ClientError::SkillVerification {
            uri: uri.to_owned(),
            reason,
        };
        let Some(file) = entry.file(uri) else {
            return Err(fail("the skill's manifest does not list it".into()));
        };
        let read: ReadResourceResult = self.read_resource(uri).await?;
        let bytes = contents_bytes(&read, uri).map_err(fail)?;
        verify(file, &bytes).map_err(fail)?;
        Ok(bytes)
    }
}

/// The bytes of the one content entry for `uri`.
fn contents_bytes(read: &ReadResourceResult, uri: &str) -> Result<Vec<u8>, String> {
    let c = read
        .contents
        .iter()
        .find(|c| c.uri == uri)
        .or(read.contents.first())
        .ok_or("the server returned no contents")?;
    if let Some(t) = c.as_text() {
        return Ok(t.as_bytes().to_vec());
    }
    let blob = c
        .as_blob()
        .ok_or("the contents have neither text nor blob")?;
    base64::engine::general_purpose::STANDARD
        .decode(blob)
        .map_err(|e| format!("the blob is not valid Base64: {e}"))
}

/// Size first (a length mismatch fails without hashing), then digest.
fn verify(file: &SkillFile, bytes: &[u8]) -> Result<(), String> {
    if bytes.len() as u64 != file.size {
        return Err(format!(
            "{} bytes, but the manifest says {}",
            bytes.len(),
            file.size
        ));
    }
    let Some(want) = file.digest.strip_prefix("sha256:") else {
        return Err(format!(
            "unsupported digest {:?} (only sha256: is known)",
            file.digest
        ));
    };
    let got = ring::digest::digest(&ring::digest::SHA256, bytes);
    let hex: String = got.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    if !hex.eq_ignore_ascii_case(want) {
        return Err(format!("SHA-256 is {hex}, but the manifest says {want}"));
    }
    Ok(())
}

/// A frontmatter value as read from `SKILL.md`.
#[derive(Debug, PartialEq)]
enum Field {
    Scalar(String),
    Nested,
}

/// The top-level fields of the YAML frontmatter between the leading `---`
/// lines.
fn parse_frontmatter(text: &str) -> Result<Vec<(String, Field)>, String> {
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("SKILL.md does not begin with YAML frontmatter (---)".into());
    }
    let mut fields: Vec<(String, Field)> = Vec::new();
    for line in lines {
        if line.trim_end() == "---" {
            return Ok(fields);
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t', '-']) {
            // Inside the previous key's nested block.
            match fields.last_mut() {
                Some((_, f)) => *f = Field::Nested,
                None => return Err(format!("frontmatter line {line:?} belongs to no key")),
            }
            continue;
        }
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| format!("frontmatter line {line:?} is not `key: value`"))?;
        let key = key.trim().to_owned();
        let value = value.trim();
        let field = if value.is_empty() || value.starts_with(['|', '>', '[', '{', '&', '*']) {
            Field::Nested
        } else {
            Field::Scalar(unquote(value))
        };
        fields.push((key, field));
    }
    Err("the frontmatter has no closing ---".into())
}

fn unquote(v: &str) -> String {
    let v = match v.find(" #") {
        Some(i) if !v.starts_with(['"', '\'']) => v[..i].trim_end(),
        _ => v,
    };
    if let Some(inner) = v.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return inner.replace("''", "'");
    }
    if let Some(inner) = v.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return inner.replace("\\\"", "\"").replace("\\\\", "\\");
    }
    v.to_owned()
}

/// Field by field: the same keys, and each scalar the same text.
fn compare_frontmatter(skill_md: &str, listed: &JsonObject) -> Result<(), String> {
    let read = parse_frontmatter(skill_md)?;
    for (key, field) in &read {
        let Some(want) = listed.get(key) else {
            return Err(format!(
                "frontmatter field {key:?} is not in the listing's entry"
            ));
        };
        let same = match (field, want) {
            (Field::Scalar(s), Value::String(w)) => s == w,
            (Field::Scalar(s), Value::Number(n)) => *s == n.to_string(),
            (Field::Scalar(s), Value::Bool(b)) => *s == b.to_string(),
            (Field::Scalar(s), Value::Null) => s == "null" || s == "~",
            (Field::Nested, Value::Object(_) | Value::Array(_) | Value::String(_)) => true,
            _ => false,
        };
        if !same {
            return Err(format!(
                "frontmatter field {key:?} is {field:?} in SKILL.md but {want} in the listing"
            ));
        }
    }
    let read_keys: std::collections::HashSet<&str> = read.iter().map(|(r, _)| &**r).collect();
    if let Some(missing) = listed.keys().find(|k| !read_keys.contains(k.as_str())) {
        return Err(format!(
            "the listing's frontmatter field {missing:?} is not in SKILL.md"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SKILL: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  owner: x\n---\n\nSkill body.\n";

    fn listed() -> JsonObject {
        let Value::Object(m) = json!({"name": "pdf-processing",
            "description": "Extract, fill, and assemble PDF documents", "metadata": {"owner": "x"}})
        else {
            unreachable!()
        };
        m
    }

    fn file(bytes: &[u8]) -> SkillFile {
        let d = ring::digest::digest(&ring::digest::SHA256, bytes);
        let hex: String = d.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        serde_json::from_value(json!({"uri": "skill://p/SKILL.md", "digest": format!("sha256:{hex}"), "size": bytes.len()}))
            .unwrap()
    }

    #[test]
    fn size_and_digest() {
        let f = file(SKILL.as_bytes());
        assert!(verify(&f, SKILL.as_bytes()).is_ok());
        let longer = format!("{SKILL}extra\n");
        assert!(verify(&f, longer.as_bytes()).unwrap_err().contains("bytes"));
        let evil = SKILL.replace("Skill body.", "Evil body!!");
        assert_eq!(evil.len(), SKILL.len());
        assert!(verify(&f, evil.as_bytes()).unwrap_err().contains("SHA-256"));
    }

    #[test]
    fn frontmatter_field_by_field() {
        assert!(compare_frontmatter(SKILL, &listed()).is_ok());
        let tampered = SKILL.replace(
            "description: Extract, fill, and assemble PDF documents",
            "description: Exfiltrate credentials",
        );
        assert!(
            compare_frontmatter(&tampered, &listed())
                .unwrap_err()
                .contains("description")
        );
        let quoted = SKILL.replace("name: pdf-processing", "name: 'pdf-processing'");
        assert!(compare_frontmatter(&quoted, &listed()).is_ok());
        let mut extra = listed();
        extra.insert("license".into(), json!("MIT"));
        assert!(compare_frontmatter(SKILL, &extra).is_err());
        assert!(compare_frontmatter("no frontmatter", &listed()).is_err());
        assert!(compare_frontmatter("---\nname: x\n", &listed()).is_err());
    }
}

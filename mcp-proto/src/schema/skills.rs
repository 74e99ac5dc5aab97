//! The Skills extension (SEP-2640, extension id [`SKILLS_EXTENSION`]): a
//! server that declares it in `capabilities.extensions` lists its skills
//! with `skills/list`. Each entry names the skill's `SKILL.md` resource,
//! carries that file's YAML frontmatter as a JSON object, and lists every
//! file of the skill with its SHA-256 digest and size; the files themselves
//! are read, when the skill is used, with `resources/read`.

use serde::{Deserialize, Serialize};

use super::JsonObject;
use super::page::{Page, PageItem};

/// The extension's identifier, the key in `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// One skill as `skills/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SkillEntry {
    /// The skill's `SKILL.md` resource, e.g. `skill://pdf-processing/SKILL.md`.
    pub uri: String,
    /// The YAML frontmatter of `SKILL.md` (at least `name` and `description`).
    #[serde(default)]
    pub frontmatter: JsonObject,
    /// Every file of the skill, `SKILL.md` included.
    #[serde(default)]
    pub resources: Vec<SkillFile>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SkillEntry {
    /// The skill's name from its frontmatter.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(|v| v.as_str())
    }

    /// The manifest entry of one of the skill's files.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        self.resources.iter().find(|f| f.uri == uri)
    }
}

/// One file of a skill: where it is and what it must be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SkillFile {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and the lower-case hex SHA-256 of the file's bytes.
    pub digest: String,
    /// The file's length in bytes.
    pub size: u64,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl PageItem for SkillEntry {
    const METHOD: &'static str = "skills/list";
    const MEMBER: &'static str = "skills";
}

/// Result of `skills/list`: a [`Page`] of skills.
pub type ListSkillsResult = Page<SkillEntry>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_listed_skill_round_trips() {
        let wire = json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "skills": [{
            "uri": "skill://pdf-processing/SKILL.md",
            "frontmatter": {"name": "pdf-processing", "description": "PDFs", "license": "MIT"},
            "resources": [{"uri": "skill://pdf-processing/SKILL.md", "digest": "sha256:00", "size": 3, "x": 1}],
            "future": true
        }], "nextCursor": "n"});
        let page: ListSkillsResult = serde_json::from_value(wire.clone()).unwrap();
        let skill = &page.items[0];
        assert_eq!(skill.name(), Some("pdf-processing"));
        assert_eq!(skill.file(&skill.uri).map(|f| f.size), Some(3));
        assert_eq!(page.next_cursor.as_deref(), Some("n"));
        assert_eq!(serde_json::to_value(&page).unwrap(), wire);
    }
}

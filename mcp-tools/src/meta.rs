//! The toolbox's own tools, offered to the model next to the servers':
//! `read_result` (the rest of a result cut to its budget) and
//! `search_tools` (deferred loading).
//!
//! Each takes the first of `name`, `name_2`, `name_3`, … that no server's
//! tool has: a server's tool keeps its name, and the notes that point the
//! model at a meta-tool use the name it got.

use std::sync::{Arc, OnceLock};

use mcp_proto::RawJson;

/// One of the toolbox's own tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Meta {
    /// `read_result`: more of a result that was cut to its budget.
    ReadResult,
    /// `search_tools`: find tools by what they do and load them.
    SearchTools,
}

impl Meta {
    /// The name it takes when no server's tool has it.
    pub(crate) fn base_name(self) -> &'static str {
        match self {
            Meta::ReadResult => "read_result",
            Meta::SearchTools => "search_tools",
        }
    }

    /// What it does, for the model.
    pub(crate) fn description(self) -> &'static str {
        match self {
            Meta::ReadResult => {
                "Reads more of a tool result that was cut short. A cut result ends with a note \
                 giving its id and the offset where it stopped; call this with both to read on."
            }
            Meta::SearchTools => {
                "Searches the tools you can use but do not see yet, by what you want to do, and \
                 loads the best matches: their definitions come back, and you can call them from \
                 the next turn on. Search again with other words if none fits."
            }
        }
    }

    /// The JSON Schema of its arguments.
    pub(crate) fn schema(self) -> &'static RawJson {
        static READ: OnceLock<RawJson> = OnceLock::new();
        static SEARCH: OnceLock<RawJson> = OnceLock::new();
        let (cell, text) = match self {
            Meta::ReadResult => (
                &READ,
                r#"{"type":"object","properties":{"id":{"type":"string","description":"The result's id, from the note at its end."},"offset":{"type":"integer","minimum":0,"description":"Where to go on from, from the same note."}},"required":["id","offset"],"additionalProperties":false}"#,
            ),
            Meta::SearchTools => (
                &SEARCH,
                r#"{"type":"object","properties":{"query":{"type":"string","description":"What you want to do, in a few words."},"limit":{"type":"integer","minimum":1,"maximum":20,"description":"How many tools to load at most (default 5)."}},"required":["query"],"additionalProperties":false}"#,
            ),
        };
        cell.get_or_init(|| {
            RawJson::from_string(text.to_owned()).unwrap_or_else(|_| RawJson::empty_object())
        })
    }
}

/// The first of `base`, `base_2`, `base_3`, … for which `taken` is false.
pub(crate) fn free_name(base: &str, taken: impl Fn(&str) -> bool) -> Arc<str> {
    if !taken(base) {
        return Arc::from(base);
    }
    let mut n = 2u32;
    loop {
        let name = format!("{base}_{n}");
        if !taken(&name) {
            return Arc::from(name);
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_json_objects_and_names_avoid_server_tools() {
        for m in [Meta::ReadResult, Meta::SearchTools] {
            let v: serde_json::Value = m.schema().decode().unwrap_or_default();
            assert_eq!(v["type"], "object", "{m:?}");
            assert!(crate::is_valid_model_name(m.base_name()));
        }
        let taken = ["read_result", "read_result_2"];
        assert_eq!(
            &*free_name("read_result", |n| taken.contains(&n)),
            "read_result_3"
        );
        assert_eq!(
            &*free_name("search_tools", |n| taken.contains(&n)),
            "search_tools"
        );
    }
}

//! Tool names: globs, include/exclude filters and sanitizing for model APIs.

use std::collections::HashMap;
use std::fmt;

use crate::toolbox::{Collision, OnCollision};

/// The longest tool name model APIs accept (OpenAI and Anthropic: 64).
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Characters that separate segments of a tool name for [`Glob`] matching.
/// MCP tool names use `.` and `/` for namespacing (e.g. `admin.tools.list`).
pub const SEGMENT_SEPARATORS: &[char] = &['.', '/'];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Lit(char),
    /// `*`: any run of characters inside one segment (possibly empty).
    Star,
    /// `**`: any run of characters, across segments (possibly empty).
    DoubleStar,
}

/// A glob over tool names: `*` matches within one segment, `**` matches at
/// any depth; every other character is literal. Segments are separated by
/// `.` or `/` ([`SEGMENT_SEPARATORS`]); `_` and `-` are ordinary characters,
/// so `file_*` matches `file_read_all`.
///
/// ```
/// use mcp_tools::Glob;
///
/// let g = Glob::new("admin.*");
/// assert!(g.matches("admin.users"));
/// assert!(!g.matches("admin.users.delete"));
/// assert!(Glob::new("admin.**").matches("admin.users.delete"));
/// assert!(Glob::new("read_*").matches("read_file"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Glob {
    source: String,
    tokens: Vec<Token>,
}

impl fmt::Debug for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Glob({:?})", self.source)
    }
}

impl fmt::Display for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl Glob {
    /// Parses a pattern. Every string is a valid pattern.
    pub fn new(pattern: impl Into<String>) -> Self {
        let source = pattern.into();
        let mut tokens = Vec::new();
        let mut chars = source.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '*' {
                if chars.peek() == Some(&'*') {
                    while chars.peek() == Some(&'*') {
                        chars.next();
                    }
                    tokens.push(Token::DoubleStar);
                } else {
                    tokens.push(Token::Star);
                }
            } else {
                tokens.push(Token::Lit(c));
            }
        }
        Glob { source, tokens }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the pattern matches any of `names`.
    pub fn matches_any<'n>(&self, names: impl IntoIterator<Item = &'n str>) -> bool {
        names.into_iter().any(|n| self.matches(n))
    }

    /// What to tell a user whose pattern matched nothing, when it holds
    /// syntax of other glob dialects that is literal here (`?`, `[...]`,
    /// `{a,b}`, `!`): `t[0-9]*` matches only names that start with the
    /// five characters `t[0-9]`.
    ///
    /// ```
    /// use mcp_tools::Glob;
    ///
    /// assert!(Glob::new("t[0-9]*").literal_syntax_hint().unwrap().contains("`[`"));
    /// assert_eq!(Glob::new("read_*").literal_syntax_hint(), None);
    /// ```
    pub fn literal_syntax_hint(&self) -> Option<String> {
        let mut found: Vec<char> = Vec::new();
        for c in self.source.chars() {
            if matches!(c, '?' | '[' | ']' | '{' | '}' | '!') && !found.contains(&c) {
                found.push(c);
            }
        }
        if found.is_empty() {
            return None;
        }
        let list: Vec<String> = found.iter().map(|c| format!("`{c}`")).collect();
        Some(format!(
            "only `*` and `**` are special in tool patterns; {} {} matched literally",
            list.join(", "),
            if found.len() == 1 { "is" } else { "are" }
        ))
    }

    /// Whether `name` matches the whole pattern.
    pub fn matches(&self, name: &str) -> bool {
        let name: Vec<char> = name.chars().collect();
        // reachable[j]: the tokens so far can match name[..j].
        let mut reachable = vec![false; name.len() + 1];
        reachable[0] = true;
        for token in &self.tokens {
            let mut next = vec![false; name.len() + 1];
            match token {
                Token::Lit(c) => {
                    for (j, ch) in name.iter().enumerate() {
                        if reachable[j] && ch == c {
                            next[j + 1] = true;
                        }
                    }
                }
                Token::Star | Token::DoubleStar => {
                    let crosses = *token == Token::DoubleStar;
                    let mut live = false;
                    for j in 0..=name.len() {
                        live |= reachable[j];
                        next[j] = live;
                        if let Some(ch) = name.get(j) {
                            if !crosses && SEGMENT_SEPARATORS.contains(ch) {
                                live = false;
                            }
                        }
                    }
                }
            }
            reachable = next;
        }
        reachable[name.len()]
    }
}

impl From<&str> for Glob {
    fn from(s: &str) -> Self {
        Glob::new(s)
    }
}

impl From<String> for Glob {
    fn from(s: String) -> Self {
        Glob::new(s)
    }
}

/// Which of a server's tools a toolbox keeps: an include list or an exclude
/// list of [`Glob`]s over the server's own tool names (before any prefix),
/// never both.
///
/// ```
/// use mcp_tools::Filter;
///
/// let only_reads = Filter::include(["read_*", "list_*"]);
/// assert!(only_reads.allows("read_file"));
/// assert!(!only_reads.allows("write_file"));
///
/// let no_admin = Filter::exclude(["admin.**"]);
/// assert!(no_admin.allows("read_file"));
/// assert!(!no_admin.allows("admin.users.delete"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Filter {
    /// Every tool.
    #[default]
    All,
    /// Only tools matching at least one glob.
    Include(Vec<Glob>),
    /// Every tool except those matching a glob.
    Exclude(Vec<Glob>),
}

impl Filter {
    /// Keeps only tools matching one of `patterns`.
    pub fn include<I, G>(patterns: I) -> Self
    where
        I: IntoIterator<Item = G>,
        G: Into<Glob>,
    {
        Filter::Include(patterns.into_iter().map(Into::into).collect())
    }

    /// Drops tools matching one of `patterns`.
    pub fn exclude<I, G>(patterns: I) -> Self
    where
        I: IntoIterator<Item = G>,
        G: Into<Glob>,
    {
        Filter::Exclude(patterns.into_iter().map(Into::into).collect())
    }

    /// The patterns that match none of `names` (a server's tool names): a
    /// typo, a tool the server renamed, or another dialect's syntax
    /// ([`Glob::literal_syntax_hint`]). Each is worth telling the user: an
    /// include pattern that matches nothing offers nothing, an exclude
    /// pattern that matches nothing protects nothing.
    ///
    /// ```
    /// use mcp_tools::Filter;
    ///
    /// let f = Filter::include(["t[0-9]*", "read_*"]);
    /// let names = ["t1", "read_file"];
    /// let unmatched: Vec<&str> = f.unmatched(names).iter().map(|g| g.as_str()).collect();
    /// assert_eq!(unmatched, ["t[0-9]*"]);
    /// ```
    pub fn unmatched<'n, I>(&self, names: I) -> Vec<&Glob>
    where
        I: IntoIterator<Item = &'n str>,
        I::IntoIter: Clone,
    {
        let names = names.into_iter();
        match self {
            Filter::All => Vec::new(),
            Filter::Include(globs) | Filter::Exclude(globs) => globs
                .iter()
                .filter(|g| !g.matches_any(names.clone()))
                .collect(),
        }
    }

    /// Logs a warning (`tracing`, target `mcp_tools::filter`) for each
    /// pattern that matches none of `server`'s tool `names`
    /// ([`unmatched`](Self::unmatched)), with the syntax hint when there is
    /// one.
    pub fn warn_unmatched<'n, I>(&self, server: &str, names: I)
    where
        I: IntoIterator<Item = &'n str>,
        I::IntoIter: Clone,
    {
        let kind = match self {
            Filter::All => return,
            Filter::Include(_) => "include",
            Filter::Exclude(_) => "exclude",
        };
        for g in self.unmatched(names) {
            let hint = g.literal_syntax_hint().unwrap_or_default();
            tracing::warn!(
                target: "mcp_tools::filter",
                server,
                pattern = g.as_str(),
                kind,
                hint,
                "a tool filter pattern matches none of the server's tools"
            );
        }
    }

    /// Whether the tool named `name` passes.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            Filter::All => true,
            Filter::Include(globs) => globs.iter().any(|g| g.matches(name)),
            Filter::Exclude(globs) => !globs.iter().any(|g| g.matches(name)),
        }
    }
}

/// Whether `name` is a tool name model APIs accept: `^[a-zA-Z0-9_-]{1,64}$`.
///
/// ```
/// assert!(mcp_tools::is_valid_model_name("get_weather-v2"));
/// assert!(!mcp_tools::is_valid_model_name("admin.users"));
/// assert!(!mcp_tools::is_valid_model_name(""));
/// ```
pub fn is_valid_model_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Turns any string into a name model APIs accept (`^[a-zA-Z0-9_-]{1,64}$`).
///
/// Each character outside `[a-zA-Z0-9_-]` becomes `_`; an empty name
/// becomes `_`. A name longer than [`MAX_TOOL_NAME_LEN`] keeps its first 55
/// characters followed by `_` and 8 hex digits of a hash of the whole input,
/// so long names that share a beginning stay distinct. A name that is
/// already valid is returned unchanged.
///
/// Sanitizing can map two names to one (`a.b` and `a_b`); a
/// [`Toolbox`](crate::Toolbox) keeps the reverse mapping and resolves such
/// collisions (see [`OnCollision`](crate::OnCollision)).
///
/// ```
/// use mcp_tools::{is_valid_model_name, sanitize_name};
///
/// assert_eq!(sanitize_name("get_weather"), "get_weather");
/// assert_eq!(sanitize_name("admin.users/list"), "admin_users_list");
/// assert_eq!(sanitize_name("météo"), "m_t_o");
/// let long = "x".repeat(100);
/// assert_eq!(sanitize_name(&long).len(), 64);
/// assert!(is_valid_model_name(&sanitize_name(&long)));
/// ```
pub fn sanitize_name(name: &str) -> String {
    if is_valid_model_name(name) {
        return name.to_owned();
    }
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() {
        out.push('_');
    }
    if out.len() > MAX_TOOL_NAME_LEN {
        // Every char is ASCII now, so byte truncation is safe.
        out.truncate(MAX_TOOL_NAME_LEN - 9);
        out.push('_');
        out.push_str(&format!("{:08x}", fnv1a(name.as_bytes())));
    }
    out
}

/// Appends `_<n>` to `name`, shortening it so the result still fits.
pub(crate) fn with_suffix(name: &str, n: usize) -> String {
    let suffix = format!("_{n}");
    let keep = MAX_TOOL_NAME_LEN
        .saturating_sub(suffix.len())
        .min(name.len());
    // `name` is sanitized (ASCII), so any byte index is a char boundary.
    let head = name.get(..keep).unwrap_or(name);
    format!("{head}{suffix}")
}

/// 32-bit FNV-1a: small, stable across runs and platforms.
fn fnv1a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// One server's tool names, for [`assign_names`].
#[derive(Debug)]
pub(crate) struct NamingInput<'a> {
    pub(crate) server: &'a str,
    pub(crate) prefix: &'a str,
    pub(crate) filter: &'a Filter,
    pub(crate) tools: Vec<&'a str>,
    /// Indices into `tools` of the tools no model may see (ascending).
    pub(crate) app_only: Vec<usize>,
}

/// A model-facing name given to `tools[tool]` of `input[server]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Assigned {
    pub(crate) server: usize,
    pub(crate) tool: usize,
    pub(crate) name: String,
}

/// Names every kept tool, deterministically: servers in order, tools in
/// listing order. A first pass gives each tool its sanitized
/// `prefix + name` if still free; a second pass renames (or drops) the
/// losers, so a generated `x_2` never takes a name a real tool has.
pub(crate) fn assign_names(
    input: &[NamingInput<'_>],
    policy: OnCollision,
) -> (Vec<Assigned>, Vec<Collision>) {
    let mut taken: HashMap<String, (usize, usize)> = HashMap::new();
    let mut slots: Vec<Option<Assigned>> = Vec::new();
    let mut losers = Vec::new();
    for (si, server) in input.iter().enumerate() {
        for (ti, tool) in server.tools.iter().enumerate() {
            if !server.filter.allows(tool) || server.app_only.binary_search(&ti).is_ok() {
                continue;
            }
            let name = sanitize_name(&format!("{}{}", server.prefix, tool));
            if taken.contains_key(&name) {
                losers.push((slots.len(), si, ti, name));
                slots.push(None);
            } else {
                taken.insert(name.clone(), (si, ti));
                slots.push(Some(Assigned {
                    server: si,
                    tool: ti,
                    name,
                }));
            }
        }
    }
    let mut collisions = Vec::new();
    // The next suffix to try per colliding name: k tools that share a name
    // are renamed in O(k) lookups in all, not O(k²).
    let mut next_suffix: HashMap<String, usize> = HashMap::new();
    for (slot, si, ti, name) in losers {
        let &(wsi, wti) = match taken.get(&name) {
            Some(w) => w,
            None => continue,
        };
        let renamed_to = match policy {
            OnCollision::Drop => None,
            OnCollision::Rename => {
                let n = next_suffix.entry(name.clone()).or_insert(2);
                let mut candidate = with_suffix(&name, *n);
                while taken.contains_key(&candidate) {
                    *n += 1;
                    candidate = with_suffix(&name, *n);
                }
                *n += 1;
                debug_assert!(candidate.len() <= MAX_TOOL_NAME_LEN);
                taken.insert(candidate.clone(), (si, ti));
                if let Some(s) = slots.get_mut(slot) {
                    *s = Some(Assigned {
                        server: si,
                        tool: ti,
                        name: candidate.clone(),
                    });
                }
                Some(candidate)
            }
        };
        let get = |s: usize, t: usize| {
            input
                .get(s)
                .map(|i| (i.server, i.tools.get(t).copied().unwrap_or_default()))
                .unwrap_or_default()
        };
        let (winner_server, winner_tool) = get(wsi, wti);
        let (server, tool) = get(si, ti);
        tracing::debug!(name = %name, server, tool, winner_server, winner_tool, renamed_to = ?renamed_to, "tool name collision");
        collisions.push(Collision {
            name,
            winner_server: winner_server.to_owned(),
            winner_tool: winner_tool.to_owned(),
            server: server.to_owned(),
            tool: tool.to_owned(),
            renamed_to,
        });
    }
    (slots.into_iter().flatten().collect(), collisions)
}

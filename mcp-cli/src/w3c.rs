//! The W3C formats of the trace context a script hands `mcp` in its
//! environment (`TRACEPARENT`, `TRACESTATE`, `BAGGAGE`), checked before
//! anything of them is used: what goes into every request's `_meta` is
//! what the formats allow, never raw bytes from the environment (a CR LF
//! or an ESC in a variable would otherwise reach the server as it is).
//!
//! - `traceparent`: W3C Trace Context §3.2 (`00-<32 hex>-<16 hex>-<2 hex>`,
//!   lowercase, ids not all zero; a later version may append `-…`).
//! - `tracestate`: Trace Context §3.3 (Level 1, and Level 2's keys):
//!   list-members `key=value` separated by `,` with optional spaces and
//!   tabs, at most 32; keys `lcalpha *(lcalpha / DIGIT / _ - * /)` or
//!   `tenant@system`, values of printable ASCII without `,` and `=`, no
//!   trailing space. A member that breaks them is dropped; the rest kept.
//! - `baggage`: W3C Baggage §3 (`key=value;property`, keys RFC 7230
//!   tokens, values `baggage-octet`s: printable ASCII without space, `"`,
//!   `,`, `;` and `\`), at most 64 members and 8192 bytes. A member that
//!   breaks them is dropped; the rest kept.

/// Most list-members a `tracestate` carries (Trace Context §3.3.1.1).
const MAX_TRACESTATE_MEMBERS: usize = 32;

/// Most list-members a `baggage` carries (Baggage §3.3.1).
const MAX_BAGGAGE_MEMBERS: usize = 64;

/// Most bytes of a `baggage` (Baggage §3.3.1).
const MAX_BAGGAGE_BYTES: usize = 8192;

/// Whether `v` is a `traceparent` of a version this client reads.
pub(crate) fn traceparent(v: &str) -> bool {
    let hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let mut parts = v.split('-');
    let (Some(version), Some(trace), Some(parent), Some(flags)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let rest_ok = match version {
        "00" => parts.next().is_none(),
        // A later version may carry more fields after the flags.
        _ => true,
    };
    hex(version, 2)
        && version != "ff"
        && hex(trace, 32)
        && trace.bytes().any(|b| b != b'0')
        && hex(parent, 16)
        && parent.bytes().any(|b| b != b'0')
        && hex(flags, 2)
        && rest_ok
}

/// The valid list-members of a `tracestate`, joined by `,`, and a note on
/// each one dropped (for `-v`).
pub(crate) fn tracestate(v: &str) -> (String, Vec<String>) {
    let mut kept: Vec<&str> = Vec::new();
    let mut dropped = Vec::new();
    let mut keys = std::collections::HashSet::new();
    for member in v.split(',').map(|m| m.trim_matches([' ', '\t'])) {
        if member.is_empty() {
            continue;
        }
        let why = match member.split_once('=') {
            None => Some("not key=value"),
            Some((k, _)) if !tracestate_key(k) => Some("not a tracestate key"),
            Some((_, val)) if !tracestate_value(val) => Some("not a tracestate value"),
            Some((k, _)) if !keys.insert(k) => Some("a key seen before"),
            Some(_) if kept.len() == MAX_TRACESTATE_MEMBERS => Some("past 32 members"),
            Some(_) => None,
        };
        match why {
            None => kept.push(member),
            Some(why) => dropped.push(format!("{why}: {}", shown(member))),
        }
    }
    (kept.join(","), dropped)
}

/// `simple-key` or `multi-tenant-key` (Trace Context Level 2).
fn tracestate_key(k: &str) -> bool {
    let rest = |s: &[u8]| {
        s.iter().all(|&b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-' | b'*' | b'/')
        })
    };
    match k.split_once('@') {
        None => {
            let b = k.as_bytes();
            (1..=256).contains(&b.len())
                && b.first().is_some_and(u8::is_ascii_lowercase)
                && rest(b.get(1..).unwrap_or_default())
        }
        Some((tenant, system)) => {
            let (t, s) = (tenant.as_bytes(), system.as_bytes());
            (1..=241).contains(&t.len())
                && t.first()
                    .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                && rest(t.get(1..).unwrap_or_default())
                && (1..=14).contains(&s.len())
                && s.first().is_some_and(u8::is_ascii_lowercase)
                && rest(s.get(1..).unwrap_or_default())
        }
    }
}

/// `0*255(chr) nblk-chr`: printable ASCII but `,` and `=`, spaces
/// allowed inside but not last.
fn tracestate_value(v: &str) -> bool {
    let b = v.as_bytes();
    (1..=256).contains(&b.len())
        && b.iter()
            .all(|&c| (0x20..=0x7e).contains(&c) && c != b',' && c != b'=')
        && b.last().is_some_and(|&c| c != b' ')
}

/// The valid list-members of a `baggage`, joined by `,`, and a note on
/// each one dropped.
pub(crate) fn baggage(v: &str) -> (String, Vec<String>) {
    let mut kept: Vec<String> = Vec::new();
    let mut dropped = Vec::new();
    let mut size = 0;
    for member in v.split(',').map(|m| m.trim_matches([' ', '\t'])) {
        if member.is_empty() {
            continue;
        }
        let why = if !baggage_member(member) {
            Some("not key=value;properties of tokens and baggage octets")
        } else if kept.len() == MAX_BAGGAGE_MEMBERS {
            Some("past 64 members")
        } else if size + member.len() + usize::from(!kept.is_empty()) > MAX_BAGGAGE_BYTES {
            Some("past 8192 bytes")
        } else {
            None
        };
        match why {
            None => {
                size += member.len() + usize::from(!kept.is_empty());
                kept.push(member.to_owned());
            }
            Some(why) => dropped.push(format!("{why}: {}", shown(member))),
        }
    }
    (kept.join(","), dropped)
}

/// `key OWS "=" OWS value *( OWS ";" OWS property )`.
fn baggage_member(m: &str) -> bool {
    let mut parts = m.split(';');
    let Some((k, v)) = parts.next().and_then(|kv| kv.split_once('=')) else {
        return false;
    };
    let ows = |s: &str| s.trim_matches([' ', '\t']).to_owned();
    token(&ows(k))
        && ows(v).bytes().all(baggage_octet)
        && parts.all(|p| match p.split_once('=') {
            Some((k, v)) => token(&ows(k)) && ows(v).bytes().all(baggage_octet),
            None => token(&ows(p)),
        })
}

/// An RFC 7230 `token`.
fn token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// `%x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E`.
fn baggage_octet(b: u8) -> bool {
    matches!(b, 0x21 | 0x23..=0x2b | 0x2d..=0x3a | 0x3c..=0x5b | 0x5d..=0x7e)
}

/// A dropped member as a `-v` line shows it: escaped, and cut at 80 characters.
fn shown(member: &str) -> String {
    let cut: String = member.chars().take(80).collect();
    mcp_cli::terminal::line(&cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_versions_ids_and_flags() {
        assert!(traceparent(
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        ));
        for bad in [
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\nX: y",
            "garbage",
        ] {
            assert!(!traceparent(bad), "{bad:?}");
        }
        assert!(traceparent(
            "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-future"
        ));
    }

    #[test]
    fn tracestate_keeps_the_valid_members_only() {
        let (kept, dropped) = tracestate("v=1\r\nX: y");
        assert_eq!(kept, "");
        assert_eq!(dropped.len(), 1, "{dropped:?}");
        assert!(!dropped[0].contains(['\r', '\n']), "escaped: {dropped:?}");
        let (kept, dropped) = tracestate(
            "congo=t61rcWkgMzE, rojo=00f067aa0ba902b7 ,\tt@sys=a b,Bad=1,k=\u{1b}[2K,k2=x ,k3=1=2,congo=again,,",
        );
        // Spaces around a member are the list's (OWS), not the value's.
        assert_eq!(
            kept,
            "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7,t@sys=a b,k2=x"
        );
        assert_eq!(dropped.len(), 4, "{dropped:?}");
        let many: Vec<String> = (0..40).map(|i| format!("k{i}=v")).collect();
        let (kept, dropped) = tracestate(&many.join(","));
        assert_eq!(kept.split(',').count(), 32);
        assert_eq!(dropped.len(), 8);
    }

    #[test]
    fn baggage_keeps_the_valid_members_only() {
        let (kept, dropped) = baggage(
            "userId=alice, serverNode = DF%2028 ;p1;p2=v,bad key=1,x=a\u{1b}b,y=\"q\",z=1\r\nX: y",
        );
        assert_eq!(kept, "userId=alice,serverNode = DF%2028 ;p1;p2=v");
        assert_eq!(dropped.len(), 4, "{dropped:?}");
        let long = format!("k={}", "v".repeat(9000));
        assert_eq!(baggage(&long).0, "");
    }
}

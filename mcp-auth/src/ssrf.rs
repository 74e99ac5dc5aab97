//! Which addresses the OAuth flow may reach: the [`SsrfPolicy`], the
//! address classifier behind it, and the URL check every OAuth request
//! passes (the DNS half is [`crate::net`]'s resolver).
//!
//! Invariants:
//! - A host is classified as the address the connection goes to: IP
//!   literals in every spelling a resolver accepts (`2130706433`,
//!   `0x7f.1`, `0177.0.0.1`, `127.1`, `[::ffff:127.0.0.1]`) are parsed
//!   here as the WHATWG URL standard parses them, and IPv4 addresses
//!   embedded in IPv6 (mapped, compatible, translated, NAT64 `64:ff9b::/96`,
//!   6to4) are classified as the IPv4 address they reach.
//! - Names are never resolved here: the connector's resolver checks each
//!   address it returns, at connect time, so a name that changes its
//!   answer between a check and the connection (DNS rebinding) cannot slip
//!   through.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::pin::Pin;
use std::sync::Arc;

use http::Uri;

use crate::error::AuthError;

/// What kind of address an IP address is, as the [`SsrfPolicy`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressClass {
    /// A globally routed address: always allowed.
    Public,
    /// This machine: `127.0.0.0/8`, `::1`, and the unspecified addresses
    /// `0.0.0.0` and `::` (a connection to them reaches this machine).
    Loopback,
    /// A private network: RFC 1918 (`10/8`, `172.16/12`, `192.168/16`),
    /// carrier-grade NAT `100.64/10`, `192.0.0.0/24`, benchmarking
    /// `198.18/15`, unique-local `fc00::/7`, site-local `fec0::/10`, local-use
    /// NAT64 `64:ff9b:1::/48`.
    Private,
    /// Link-local: `169.254/16` (the cloud metadata services) and
    /// `fe80::/10`.
    LinkLocal,
    /// Never a server: multicast, broadcast, documentation ranges, `0/8`,
    /// `240/4`, the IPv6 discard prefix, Teredo. Always refused.
    Reserved,
}

impl AddressClass {
    fn describe(self) -> &'static str {
        match self {
            AddressClass::Public => "a public address",
            AddressClass::Loopback => "a loopback address",
            AddressClass::Private => "a private-network address",
            AddressClass::LinkLocal => "a link-local address (where cloud metadata services live)",
            AddressClass::Reserved => "a reserved address",
        }
    }
}

/// The IPv4 address an IPv6 address stands for, if it embeds one: IPv4-mapped
/// `::ffff:0:0/96`, IPv4-compatible `::/96` (not `::` or `::1`), IPv4-translated
/// `::ffff:0:0:0/96`, the NAT64 well-known prefix `64:ff9b::/96` (RFC 6052),
/// and 6to4 `2002::/16` (RFC 3056, the relay's IPv4 address).
pub fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let o = ip.octets();
    let tail = || Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(tail()),
        [0, 0, 0, 0, 0xffff, 0, _, _] => Some(tail()),
        [0, 0, 0, 0, 0, 0, hi, lo] if hi != 0 || lo > 1 => Some(tail()),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(tail()),
        [0x2002, _, _, _, _, _, _, _] => Some(Ipv4Addr::new(o[2], o[3], o[4], o[5])),
        _ => None,
    }
}

/// `ip` with an embedded IPv4 address ([`embedded_ipv4`]) taken out: what the
/// classifier is asked about.
pub(crate) fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => embedded_ipv4(v6).map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The default classifier: what `ip` is on the Internet (IANA's special-purpose
/// registries), IPv4 addresses embedded in IPv6 classified as that IPv4
/// address.
pub fn classify(ip: IpAddr) -> AddressClass {
    match canonical_ip(ip) {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(v4: Ipv4Addr) -> AddressClass {
    let [a, b, c, _] = v4.octets();
    if v4.is_loopback() || v4.is_unspecified() {
        AddressClass::Loopback
    } else if v4.is_link_local() {
        AddressClass::LinkLocal
    } else if v4.is_private()
        || (a == 100 && (b & 0xc0) == 64)
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b & 0xfe) == 18)
    {
        AddressClass::Private
    } else if a == 0 || a >= 224 || v4.is_documentation() {
        // 0/8, multicast 224/4, 240/4 and the broadcast address.
        AddressClass::Reserved
    } else {
        AddressClass::Public
    }
}

fn classify_v6(v6: Ipv6Addr) -> AddressClass {
    let s = v6.segments();
    if v6.is_loopback() || v6.is_unspecified() {
        AddressClass::Loopback
    } else if (s[0] & 0xffc0) == 0xfe80 {
        AddressClass::LinkLocal
    } else if (s[0] & 0xfe00) == 0xfc00 || (s[0] & 0xffc0) == 0xfec0 || s[..3] == [0x64, 0xff9b, 1]
    {
        AddressClass::Private
    } else if v6.is_multicast()
        || s[..2] == [0x2001, 0xdb8]
        || s[..4] == [0x100, 0, 0, 0]
        || s[..2] == [0x2001, 0]
        || (s[0] == 0x3fff && (s[1] & 0xf000) == 0)
    {
        // Multicast, documentation (2001:db8::/32, 3fff::/20), discard
        // (100::/64), Teredo (2001::/32: tunnels to an obfuscated IPv4).
        AddressClass::Reserved
    } else {
        AddressClass::Public
    }
}

type Classifier = Arc<dyn Fn(IpAddr) -> AddressClass + Send + Sync>;

/// A DNS lookup: the addresses a name resolves to.
pub type LookupFuture = Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send>>;
type Lookup = Arc<dyn Fn(&str) -> LookupFuture + Send + Sync>;

/// Which addresses the OAuth HTTP client may reach (the MCP security best
/// practices' SSRF mitigations; RFC 9728 §7.7).
///
/// Public addresses are always allowed, [reserved](AddressClass::Reserved)
/// ones never. [Loopback](AddressClass::Loopback),
/// [private](AddressClass::Private) and [link-local](AddressClass::LinkLocal)
/// addresses are refused unless allowed here; [`crate::OAuthProvider`]
/// also allows the class of the MCP server's own address when its URL
/// names it literally (`http://127.0.0.1:8080/mcp`, `https://10.1.2.3/mcp`)
/// or as `localhost`. Names are checked when they are resolved, for every
/// connection and redirect hop, so the address checked is the address
/// connected to.
///
/// ```
/// use mcp_auth::{AddressClass, SsrfPolicy};
///
/// // An authorization server on the company network.
/// let policy = SsrfPolicy::new().allow_private(true);
/// assert!(policy.allows("10.1.2.3".parse().unwrap()));
/// assert!(!policy.allows("169.254.169.254".parse().unwrap()));
/// // Every spelling of an address is that address.
/// assert!(!policy.allows("::ffff:169.254.169.254".parse().unwrap()));
///
/// // Tests: declare another loopback address "private", to run a listener
/// // that stands for an internal service without leaving the machine.
/// let test = SsrfPolicy::new().allow_loopback(true).classifier(|ip| {
///     if ip == std::net::Ipv4Addr::new(127, 0, 0, 2) {
///         AddressClass::Private
///     } else {
///         mcp_auth::classify(ip)
///     }
/// });
/// assert!(!test.allows("127.0.0.2".parse().unwrap()));
/// assert!(test.allows("127.0.0.1".parse().unwrap()));
/// ```
#[derive(Clone)]
pub struct SsrfPolicy {
    loopback: bool,
    private: bool,
    link_local: bool,
    classifier: Option<Classifier>,
    lookup: Option<Lookup>,
}

impl Default for SsrfPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for SsrfPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SsrfPolicy")
            .field("allow_loopback", &self.loopback)
            .field("allow_private", &self.private)
            .field("allow_link_local", &self.link_local)
            .field("custom_classifier", &self.classifier.is_some())
            .field("custom_lookup", &self.lookup.is_some())
            .finish()
    }
}

impl SsrfPolicy {
    /// Public addresses only, classified by [`classify`], names resolved by
    /// the system resolver.
    pub fn new() -> Self {
        SsrfPolicy {
            loopback: false,
            private: false,
            link_local: false,
            classifier: None,
            lookup: None,
        }
    }

    /// Allow [loopback](AddressClass::Loopback) addresses (a local
    /// development server).
    pub fn allow_loopback(mut self, yes: bool) -> Self {
        self.loopback = yes;
        self
    }

    /// Allow [private-network](AddressClass::Private) addresses (an
    /// authorization server on the company network).
    pub fn allow_private(mut self, yes: bool) -> Self {
        self.private = yes;
        self
    }

    /// Allow [link-local](AddressClass::LinkLocal) addresses. Cloud metadata
    /// services (`169.254.169.254`) are link-local: allow this only where
    /// no such service can answer.
    pub fn allow_link_local(mut self, yes: bool) -> Self {
        self.link_local = yes;
        self
    }

    /// Allow the class `class` (nothing for [`AddressClass::Public`], which
    /// is always allowed, or [`AddressClass::Reserved`], which never is).
    pub fn allow_class(self, class: AddressClass) -> Self {
        match class {
            AddressClass::Loopback => self.allow_loopback(true),
            AddressClass::Private => self.allow_private(true),
            AddressClass::LinkLocal => self.allow_link_local(true),
            AddressClass::Public | AddressClass::Reserved => self,
        }
    }

    /// Classify addresses with `classifier` instead of [`classify`]. It is
    /// asked about IPv4 addresses embedded in IPv6 ([`embedded_ipv4`]) as
    /// the IPv4 address. Tests use it to declare loopback addresses other
    /// than `127.0.0.1` private or public, so that listeners on
    /// `127.0.0.2`, `127.0.0.3` stand for internal and external hosts.
    pub fn classifier(
        mut self,
        classifier: impl Fn(IpAddr) -> AddressClass + Send + Sync + 'static,
    ) -> Self {
        self.classifier = Some(Arc::new(classifier));
        self
    }

    /// Resolve names with `lookup` instead of the system resolver (e.g. a
    /// DNS-over-HTTPS client, or a test's table). Its answers are checked
    /// like the system resolver's, at every connection.
    pub fn lookup(mut self, lookup: impl Fn(&str) -> LookupFuture + Send + Sync + 'static) -> Self {
        self.lookup = Some(Arc::new(lookup));
        self
    }

    /// What `ip` is to this policy.
    pub fn classify(&self, ip: IpAddr) -> AddressClass {
        let ip = canonical_ip(ip);
        match &self.classifier {
            Some(c) => c(ip),
            None => classify(ip),
        }
    }

    /// Whether addresses of `class` may be contacted.
    pub fn allows_class(&self, class: AddressClass) -> bool {
        match class {
            AddressClass::Public => true,
            AddressClass::Loopback => self.loopback,
            AddressClass::Private => self.private,
            AddressClass::LinkLocal => self.link_local,
            AddressClass::Reserved => false,
        }
    }

    /// Whether `ip` may be contacted.
    pub fn allows(&self, ip: IpAddr) -> bool {
        self.allows_class(self.classify(ip))
    }

    /// Why `ip` is refused, or `None` when it is allowed.
    pub(crate) fn refusal(&self, ip: IpAddr) -> Option<String> {
        let class = self.classify(ip);
        if self.allows_class(class) {
            return None;
        }
        let how = match class {
            AddressClass::Loopback => {
                " (allowed when the MCP server itself is on loopback, or with SsrfPolicy::allow_loopback)"
            }
            AddressClass::Private => {
                " (allowed when the MCP server itself is at a private address, or with SsrfPolicy::allow_private)"
            }
            AddressClass::LinkLocal => " (allow it with SsrfPolicy::allow_link_local)",
            AddressClass::Public | AddressClass::Reserved => "",
        };
        Some(format!(
            "{ip} is {}, refused by the SSRF policy{how}",
            class.describe()
        ))
    }

    /// The addresses `name` resolves to, through the lookup of this policy.
    pub(crate) async fn resolve(&self, name: &str) -> io::Result<Vec<IpAddr>> {
        match &self.lookup {
            Some(lookup) => lookup(name).await,
            None => Ok(tokio::net::lookup_host((name, 0))
                .await?
                .map(|a| a.ip())
                .collect()),
        }
    }
}

/// A URL's host, as the connection will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Host {
    /// An IP literal, in any spelling.
    Ip(IpAddr),
    /// `localhost` or a name under `.localhost` (RFC 6761: always loopback).
    Localhost,
    /// A name to resolve.
    Name,
}

/// Parses a URL host (`Uri::host`, brackets included for IPv6) the way the
/// WHATWG URL standard does: a host whose last label is a number is an IPv4
/// address in decimal, octal (`0` prefix) or hex (`0x`), with 1 to 4 parts
/// (`127.1`, `2130706433`); `None` for a host that is not valid (a bad
/// numeric form, an IPv6 literal with a zone).
pub(crate) fn parse_host(host: &str) -> Option<Host> {
    if let Some(inner) = host.strip_prefix('[') {
        let v6 = inner.strip_suffix(']')?.parse::<Ipv6Addr>().ok()?;
        return Some(Host::Ip(IpAddr::V6(v6)));
    }
    if host.is_empty() {
        return None;
    }
    let lower = host.to_ascii_lowercase();
    let trimmed = lower.strip_suffix('.').unwrap_or(&lower);
    if trimmed == "localhost" || trimmed.ends_with(".localhost") {
        return Some(Host::Localhost);
    }
    let mut parts: Vec<&str> = trimmed.split('.').collect();
    let last = parts.last().copied().unwrap_or_default();
    if !ends_in_number(last) {
        return Some(Host::Name);
    }
    if parts.len() > 4 {
        return None;
    }
    let numbers: Vec<u64> = parts
        .drain(..)
        .map(ipv4_number)
        .collect::<Option<Vec<_>>>()?;
    let (init, last) = numbers.split_at(numbers.len() - 1);
    if init.iter().any(|&n| n > 255) {
        return None;
    }
    let room = 8 * (5 - numbers.len() as u32);
    if last[0] >= 1u64 << room {
        return None;
    }
    let mut value = last[0];
    for (i, &n) in init.iter().enumerate() {
        value += n << (8 * (3 - i as u32));
    }
    let value = u32::try_from(value).ok()?;
    Some(Host::Ip(IpAddr::V4(Ipv4Addr::from(value))))
}

/// WHATWG "ends in a number": the last label is decimal digits, or `0x`
/// and hex digits.
fn ends_in_number(label: &str) -> bool {
    if !label.is_empty() && label.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    label
        .strip_prefix("0x")
        .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// One part of a numeric IPv4 host: `0x` hex, `0` octal, else decimal
/// (capped so that no sum overflows: anything over 2^32 is refused anyway).
fn ipv4_number(part: &str) -> Option<u64> {
    let (digits, radix) = if let Some(h) = part.strip_prefix("0x") {
        (h, 16)
    } else if part.len() > 1 && part.starts_with('0') {
        (&part[1..], 8)
    } else {
        (part, 10)
    };
    if digits.is_empty() {
        return (radix != 10).then_some(0);
    }
    let n = u64::from_str_radix(digits, radix).ok()?;
    (n <= u64::from(u32::MAX)).then_some(n)
}

/// Whether `host` (a URL's host) is loopback to `policy`: `localhost`, or a
/// literal the policy classifies as loopback.
pub(crate) fn is_loopback_host(host: &str, policy: &SsrfPolicy) -> bool {
    match parse_host(host) {
        Some(Host::Localhost) => true,
        Some(Host::Ip(ip)) => policy.classify(ip) == AddressClass::Loopback,
        Some(Host::Name) | None => false,
    }
}

/// Checks a URL an OAuth request goes to: http(s) only, `https` unless the
/// host is loopback, a valid host, and an IP literal (in any spelling) or
/// `localhost` against the policy. Names are checked when resolved.
pub(crate) fn check_url(url: &Uri, policy: &SsrfPolicy) -> Result<(), AuthError> {
    let refused = |reason: &str| AuthError::invalid_url(url, reason);
    let raw_host = url.host().ok_or_else(|| refused("no host"))?;
    let host = parse_host(raw_host).ok_or_else(|| refused("not a valid host"))?;
    let loopback = is_loopback_host(raw_host, policy);
    match url.scheme_str() {
        Some("https") => {}
        Some("http") if loopback => {}
        Some("http") => {
            return Err(refused(
                "authorization endpoints must use https (http is allowed only for loopback)",
            ));
        }
        _ => return Err(refused("only http(s) URLs are allowed")),
    }
    match host {
        Host::Ip(ip) => match policy.refusal(ip) {
            Some(why) => Err(refused(&why)),
            None => Ok(()),
        },
        Host::Localhost if !policy.allows_class(AddressClass::Loopback) => Err(refused(
            "localhost is a loopback address, refused by the SSRF policy (allowed when the MCP server itself is on loopback, or with SsrfPolicy::allow_loopback)",
        )),
        Host::Localhost | Host::Name => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn default_classes() {
        use AddressClass::*;
        for (addr, class) in [
            ("127.0.0.1", Loopback),
            ("127.255.0.9", Loopback),
            ("0.0.0.0", Loopback),
            ("::1", Loopback),
            ("::", Loopback),
            ("10.0.0.1", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("100.64.0.1", Private),
            ("100.100.100.200", Private), // Alibaba Cloud's metadata service
            ("192.0.0.192", Private),
            ("198.18.0.1", Private),
            ("fd00::1", Private),
            ("fd00:ec2::254", Private), // AWS's IPv6 metadata service
            ("fec0::1", Private),
            ("64:ff9b:1::a00:1", Private),
            ("169.254.169.254", LinkLocal),
            ("fe80::1", LinkLocal),
            ("0.1.2.3", Reserved),
            ("224.0.0.1", Reserved),
            ("255.255.255.255", Reserved),
            ("240.0.0.1", Reserved),
            ("192.0.2.1", Reserved),
            ("ff02::1", Reserved),
            ("2001:db8::1", Reserved),
            ("100::1", Reserved),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Reserved),
            ("93.184.216.34", Public),
            ("172.32.0.1", Public),
            ("2606:4700::1", Public),
        ] {
            assert_eq!(classify(ip(addr)), class, "{addr}");
        }
    }

    #[test]
    fn ipv4_embedded_in_ipv6_is_that_ipv4() {
        for addr in [
            "::ffff:169.254.169.254",
            "::ffff:a9fe:a9fe",
            "::169.254.169.254",
            "::ffff:0:169.254.169.254",
            "64:ff9b::169.254.169.254",
            "2002:a9fe:a9fe::1",
        ] {
            assert_eq!(
                classify(ip(addr)),
                AddressClass::LinkLocal,
                "{addr} is the metadata service"
            );
        }
        assert_eq!(classify(ip("::ffff:127.0.0.1")), AddressClass::Loopback);
        assert_eq!(classify(ip("::ffff:10.1.1.1")), AddressClass::Private);
        assert_eq!(classify(ip("64:ff9b::8.8.8.8")), AddressClass::Public);
        // A custom classifier sees the IPv4 address.
        let p = SsrfPolicy::new().classifier(|ip| match ip {
            IpAddr::V4(v4) if v4 == Ipv4Addr::new(127, 0, 0, 2) => AddressClass::Private,
            IpAddr::V4(_) => AddressClass::Public,
            IpAddr::V6(_) => AddressClass::Reserved,
        });
        assert_eq!(p.classify(ip("::ffff:127.0.0.2")), AddressClass::Private);
        assert_eq!(p.classify(ip("::ffff:127.0.0.3")), AddressClass::Public);
    }

    #[test]
    fn every_spelling_of_an_ipv4_host() {
        let v4 = |s: &str| match parse_host(s) {
            Some(Host::Ip(IpAddr::V4(a))) => Some(a.to_string()),
            _ => None,
        };
        for s in [
            "169.254.169.254",
            "2852039166",
            "0xa9fea9fe",
            "0xA9FEA9FE",
            "0251.0376.0251.0376",
            "0xa9.0xfe.0xa9.0xfe",
            "169.254.43518",
            "169.16689662",
            "0251.0xfe.43518",
            "169.254.169.254.",
        ] {
            assert_eq!(v4(s).as_deref(), Some("169.254.169.254"), "{s}");
        }
        assert_eq!(v4("127.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(v4("0").as_deref(), Some("0.0.0.0"));
        assert_eq!(v4("0x").as_deref(), Some("0.0.0.0"));
        // Not valid IPv4 but ending in a number: not a host at all.
        for s in [
            "1.2.3.4.5",
            "256.1.1.1",
            "1.2.3.256",
            "4294967296",
            "08",
            "example.123",
        ] {
            assert_eq!(parse_host(s), None, "{s}");
        }
        assert_eq!(parse_host("0x1g"), Some(Host::Name));
        assert_eq!(parse_host("example.com"), Some(Host::Name));
        assert_eq!(parse_host("1.2.3.example"), Some(Host::Name));
        assert_eq!(parse_host("LocalHost."), Some(Host::Localhost));
        assert_eq!(parse_host("a.b.localhost"), Some(Host::Localhost));
        assert_eq!(
            parse_host("[::ffff:127.0.0.1]"),
            Some(Host::Ip(ip("::ffff:127.0.0.1")))
        );
        assert_eq!(parse_host("[fe80::1%25eth0]"), None);
        assert_eq!(parse_host("[::1"), None);
    }

    #[test]
    fn policy_refuses_what_it_was_not_told_to_allow() {
        let p = SsrfPolicy::new();
        for a in [
            "10.0.0.1",
            "169.254.169.254",
            "127.0.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!p.allows(ip(a)), "{a}");
        }
        assert!(p.allows(ip("93.184.216.34")));
        let lo = SsrfPolicy::new().allow_loopback(true);
        assert!(lo.allows(ip("127.0.0.1")) && !lo.allows(ip("10.1.2.3")));
        let private = SsrfPolicy::new().allow_private(true);
        assert!(private.allows(ip("10.1.2.3")));
        assert!(!private.allows(ip("169.254.169.254")), "metadata stays out");
        assert!(!private.allows(ip("127.0.0.1")));
        let all = SsrfPolicy::new()
            .allow_loopback(true)
            .allow_private(true)
            .allow_link_local(true);
        assert!(all.allows(ip("169.254.169.254")));
        assert!(!all.allows(ip("224.0.0.1")), "reserved never");
    }

    fn checked(s: &str, p: &SsrfPolicy) -> Result<(), AuthError> {
        check_url(&crate::util::parse_url(s).unwrap(), p)
    }

    #[test]
    fn urls_need_https_except_loopback() {
        let lo = SsrfPolicy::new().allow_loopback(true);
        for ok in [
            "http://localhost:8080/x",
            "http://127.0.0.1/x",
            "http://[::1]:9/x",
            "http://127.1/x",
            "https://as.example/x",
        ] {
            assert!(checked(ok, &lo).is_ok(), "{ok}");
        }
        let e = checked("http://as.example/x", &lo).unwrap_err();
        assert!(e.to_string().contains("https"), "{e}");
        for bad in [
            "https://10.0.0.1/x",
            "https://169.254.169.254/latest",
            "https://2852039166/latest",
            "https://0xa9fea9fe/latest",
            "https://0251.0376.0251.0376/latest",
            "https://[::ffff:a9fe:a9fe]/latest",
            "https://[64:ff9b::a9fe:a9fe]/latest",
            "https://1.2.3.4.5/",
        ] {
            let e = checked(bad, &lo).unwrap_err();
            assert_eq!(e.kind(), crate::AuthErrorKind::InvalidUrl, "{bad}");
        }
        // Loopback refused when not allowed, in every spelling.
        for bad in [
            "http://localhost/x",
            "http://LOCALHOST./x",
            "https://127.0.0.1/x",
            "https://2130706433/x",
            "https://[::ffff:127.0.0.1]/x",
            "https://0/x",
        ] {
            let e = checked(bad, &SsrfPolicy::new()).unwrap_err();
            assert!(e.to_string().contains("SSRF"), "{bad}: {e}");
        }
        // "Loopback" for the https rule is the classifier's loopback.
        let p = SsrfPolicy::new()
            .allow_loopback(true)
            .allow_private(true)
            .classifier(|ip| {
                if ip == Ipv4Addr::new(127, 0, 0, 2) {
                    AddressClass::Private
                } else {
                    classify(ip)
                }
            });
        assert!(checked("http://127.0.0.2/x", &p).is_err());
        assert!(checked("https://127.0.0.2/x", &p).is_ok());
    }
}

//! Properties of the `WWW-Authenticate` parser: never panics on any input,
//! and reads back every Bearer parameter it is given, quoted or not, in any
//! order, among other challenges.
#![allow(clippy::unwrap_used)]

use mcp_auth::BearerChallenge;
use proptest::prelude::*;

fn quote(v: &str) -> String {
    format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
}

proptest! {
    #[test]
    fn never_panics(s in ".{0,200}") {
        let _ = BearerChallenge::parse(&s);
    }

    #[test]
    fn never_panics_on_header_like_bytes(s in "[A-Za-z=\", \\\\_:/.-]{0,120}") {
        let _ = BearerChallenge::parse(&s);
    }

    #[test]
    fn reads_back_parameters(
        scope in "[a-z:]{1,10}( [a-z:]{1,10}){0,3}",
        url in "https://[a-z]{1,8}\\.example/[a-z/._-]{0,20}",
        desc in "[ -~]{0,40}",
        before in proptest::bool::ANY,
        rotate in 0usize..3,
    ) {
        let mut params = [
            format!("scope={}", quote(&scope)),
            format!("resource_metadata={}", quote(&url)),
            format!("error_description={}", quote(&desc)),
        ];
        params.rotate_left(rotate);
        let bearer = format!("Bearer error=insufficient_scope, {}", params.join(", "));
        let header = if before {
            format!("Basic realm=\"x\", scope=\"ignored\", {bearer}")
        } else {
            format!("{bearer}, DPoP algs=\"ES256\"")
        };
        let c = BearerChallenge::parse(&header).unwrap();
        prop_assert_eq!(c.scope.as_deref(), Some(scope.as_str()));
        prop_assert_eq!(c.resource_metadata.as_deref(), Some(url.as_str()));
        prop_assert_eq!(c.error_description.as_deref(), Some(desc.as_str()));
        prop_assert!(c.is_insufficient_scope());
    }
}

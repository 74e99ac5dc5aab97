//! The provider's workload identity federation grant (SEP-1933): RFC 7523
//! JWT bearer with the assertion from the configured [`AssertionSource`].

use super::Inner;
use crate::discovery::Discovered;
use crate::error::AuthError;
use crate::jwt_bearer::{AssertionSource, grant_body};
use crate::store::TokenSet;

impl Inner {
    /// One JWT-bearer token request. A refusal is returned as it is: no
    /// other grant is tried (the caller does not retry either).
    pub(super) async fn jwt_bearer(
        &self,
        disc: &Discovered,
        source: &dyn AssertionSource,
        scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let token_url = self.endpoint(disc.meta.token_endpoint.as_ref(), "token_endpoint")?;
        let assertion = source.assertion().await?;
        let scope = scopes.join(" ");
        let mut body = grant_body(assertion, &disc.resource, &scope);
        let mut t = self
            .token_request(&token_url, &mut body, self.client.as_ref(), disc)
            .await?;
        if t.scope.is_none() && !scope.is_empty() {
            t.scope = Some(scope);
        }
        Ok(t)
    }
}

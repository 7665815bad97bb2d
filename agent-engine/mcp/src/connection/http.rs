//! Streamable HTTP servers, through rmcp's reqwest transport.

use std::collections::{BTreeMap, HashMap};

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::{RmcpConnection, SharedDiagnostics};
use crate::{McpError, McpErrorKind};

pub(super) async fn connect(
    name: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<RmcpConnection, McpError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    let mut custom = HashMap::new();
    for (k, v) in headers {
        // rmcp sends a bearer token itself.
        if k.eq_ignore_ascii_case("authorization")
            && let Some(token) = v.strip_prefix("Bearer ")
        {
            config = config.auth_header(token.to_owned());
            continue;
        }
        let bad = |what: &str| {
            McpError::new(
                name,
                McpErrorKind::Config,
                format!("header `{k}`: invalid {what}"),
            )
        };
        let key = reqwest::header::HeaderName::from_bytes(k.as_bytes()).map_err(|_| bad("name"))?;
        let value = reqwest::header::HeaderValue::from_str(v).map_err(|_| bad("value"))?;
        custom.insert(key, value);
    }
    let config = config.custom_headers(custom);
    let transport = StreamableHttpClientTransport::from_config(config);
    RmcpConnection::serve(name, SharedDiagnostics::default(), transport, None).await
}

//! The MCP config in upstream's standard form: `{"mcpServers": {name: server}}`, where a server
//! is either stdio (`command`, `args`, `env`, `cwd`) or remote (`url`, `headers`, `auth`,
//! `transport`/`type`). A remote server's transport is `sse` when it says so, or, when it says
//! nothing, when its URL's path has an `/sse` segment (as upstream infers it); otherwise
//! streamable HTTP (`http`, `streamable-http`, `shttp`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::{McpError, McpErrorKind};

/// How Tandem reaches one MCP server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on its stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment.
        env: BTreeMap<String, String>,
        /// Its working directory (default: the agent's workspace).
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP (one endpoint, POST + optional SSE answers).
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request (auth included).
        headers: BTreeMap<String, String>,
    },
    /// The legacy HTTP+SSE transport (GET an event stream, POST to the endpoint it names).
    Sse {
        /// The event stream's URL.
        url: String,
        /// Headers sent with every request (auth included).
        headers: BTreeMap<String, String>,
    },
}

/// One server of the config.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// Its name (the key in `mcpServers`).
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// Per-call timeout from the server's `timeout` (seconds), if set.
    pub call_timeout: Option<Duration>,
}

/// Reads `{"mcpServers": {...}}`, or the bare server map `{name: server}` that upstream's SDK
/// keeps in `Agent.mcp_config` (an empty object, `null` or `{}` mean no servers). Servers with
/// `"enabled": false` are left out. A server entry that cannot be used is an error naming it;
/// the others are still returned, so one bad entry does not cost the rest.
pub fn parse_config(config: &Value) -> Result<(Vec<ServerConfig>, Vec<McpError>), McpError> {
    let servers = match config {
        Value::Null => return Ok((Vec::new(), Vec::new())),
        Value::Object(o) => match o.get("mcpServers") {
            Some(Value::Object(servers)) => servers,
            Some(Value::Null) => return Ok((Vec::new(), Vec::new())),
            Some(_) => {
                return Err(McpError::new(
                    "(config)",
                    McpErrorKind::Config,
                    "`mcpServers` must be an object: {\"mcpServers\": {name: {command, args, env} | {url, headers}}}",
                ));
            }
            // Upstream's SDK form: the map itself, each value a server object.
            None if o.values().all(Value::is_object) => o,
            None => {
                return Err(McpError::new(
                    "(config)",
                    McpErrorKind::Config,
                    "the MCP config must be {\"mcpServers\": {name: {command, args, env} | {url, headers}}} or {name: server}",
                ));
            }
        },
        _ => {
            return Err(McpError::new(
                "(config)",
                McpErrorKind::Config,
                "the MCP config must be a JSON object with `mcpServers`",
            ));
        }
    };
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for (name, server) in servers {
        if server.get("enabled").and_then(Value::as_bool) == Some(false) {
            continue;
        }
        match parse_server(name, server) {
            Ok(s) => ok.push(s),
            Err(e) => bad.push(e),
        }
    }
    Ok((ok, bad))
}

/// Reads one server entry (the value under its name).
pub fn parse_server(name: &str, server: &Value) -> Result<ServerConfig, McpError> {
    let err = |m: String| McpError::new(name, McpErrorKind::Config, m);
    let Some(o) = server.as_object() else {
        return Err(err("the entry must be a JSON object".into()));
    };
    let declared = o
        .get("transport")
        .or_else(|| o.get("type"))
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase);
    let call_timeout = match o.get("timeout") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64() {
            Some(s) if s > 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
            _ => {
                return Err(err(format!(
                    "`timeout` must be a positive number of seconds, got {v}"
                )));
            }
        },
    };
    let transport = if let Some(command) = o.get("command") {
        let command = command
            .as_str()
            .filter(|c| !c.trim().is_empty())
            .ok_or_else(|| err("`command` must be a non-empty string".into()))?;
        Transport::Stdio {
            command: command.to_owned(),
            args: string_list(o.get("args")).map_err(|m| err(format!("`args` {m}")))?,
            env: string_map(o.get("env")).map_err(|m| err(format!("`env` {m}")))?,
            cwd: o.get("cwd").and_then(Value::as_str).map(PathBuf::from),
        }
    } else if let Some(url) = o.get("url") {
        let url = url
            .as_str()
            .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
            .ok_or_else(|| err(format!("`url` must be an http(s) URL, got {url}")))?;
        let mut headers =
            string_map(o.get("headers")).map_err(|m| err(format!("`headers` {m}")))?;
        auth_headers(o.get("auth"), &mut headers).map_err(|m| err(format!("`auth` {m}")))?;
        let sse = match declared.as_deref() {
            Some("sse") => true,
            Some("http" | "streamable-http" | "streamable_http" | "shttp") => false,
            Some(other) => {
                return Err(err(format!(
                    "unknown transport `{other}` for a URL server (use http, streamable-http or sse)"
                )));
            }
            None => url_means_sse(url),
        };
        let url = url.to_owned();
        if sse {
            Transport::Sse { url, headers }
        } else {
            Transport::Http { url, headers }
        }
    } else {
        return Err(err(
            "the entry needs `command` (stdio) or `url` (HTTP)".into()
        ));
    };
    if declared.as_deref() == Some("stdio") && !matches!(transport, Transport::Stdio { .. }) {
        return Err(err("transport `stdio` needs `command`".into()));
    }
    Ok(ServerConfig {
        name: name.to_owned(),
        transport,
        call_timeout,
    })
}

/// Upstream's rule: a path with an `/sse` segment (followed by `/`, `?`, `&` or the end).
fn url_means_sse(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    let path = path.split(['?', '#']).next().unwrap_or("");
    path.split('/').any(|seg| seg == "sse")
}

/// Upstream's `auth`: a bare string is a bearer token (`"oauth"` asks for OAuth, which needs a
/// sign-in and is reported when the server refuses us), or an object with a `strategy`.
fn auth_headers(
    auth: Option<&Value>,
    headers: &mut BTreeMap<String, String>,
) -> Result<(), FieldProblem> {
    let Some(auth) = auth else { return Ok(()) };
    match auth {
        Value::Null => {}
        Value::String(s) if s == "oauth" => {}
        Value::String(token) => {
            headers.insert("Authorization".into(), format!("Bearer {token}"));
        }
        Value::Object(a) => {
            let text = |k: &str| a.get(k).and_then(Value::as_str).filter(|v| !v.is_empty());
            match a.get("strategy").and_then(Value::as_str) {
                Some("none" | "oauth2") => {}
                Some("bearer") => {
                    if let Some(v) = text("value") {
                        headers.insert("Authorization".into(), format!("Bearer {v}"));
                    }
                }
                Some("api_key") => {
                    if let Some(v) = text("value") {
                        match text("header_name") {
                            Some(h) => headers.insert(h.to_owned(), v.to_owned()),
                            None => headers.insert("Authorization".into(), format!("Bearer {v}")),
                        };
                    }
                }
                Some("basic") => {
                    let user = text("username").unwrap_or("");
                    let pass = text("password").unwrap_or("");
                    headers.insert(
                        "Authorization".into(),
                        format!("Basic {}", base64(format!("{user}:{pass}").as_bytes())),
                    );
                }
                Some("header") => {
                    let extra = string_map(a.get("headers"))
                        .map_err(|m| FieldProblem::AuthHeaders(Box::new(m)))?;
                    headers.extend(extra);
                }
                other => {
                    return Err(FieldProblem::UnknownStrategy(other.map(str::to_owned)));
                }
            }
        }
        other => return Err(FieldProblem::NotAuth(other.clone())),
    }
    Ok(())
}

/// What is wrong with one field of a server entry; the text follows the field's name
/// (`` `args` must be a list of strings, got 5 ``).
#[derive(Debug, thiserror::Error)]
enum FieldProblem {
    /// A list holds something other than a string.
    #[error("must hold strings, got {0}")]
    NotAString(Value),
    /// Not a list.
    #[error("must be a list of strings, got {0}")]
    NotAList(Value),
    /// A map's value is not a string (numbers and booleans are taken as their text).
    #[error("`{key}` must be a string, got {got}")]
    NotAStringValue {
        /// The key of the value.
        key: String,
        /// The value.
        got: Value,
    },
    /// Not a map.
    #[error("must be an object of strings, got {0}")]
    NotAMap(Value),
    /// `auth`'s `strategy` is none Tandem knows (`None`: absent).
    #[error(
        "unknown strategy {}: use none, bearer, api_key, basic, header or oauth2",
        .0.as_ref().map_or("(missing)".to_owned(), |s| format!("`{s}`"))
    )]
    UnknownStrategy(Option<String>),
    /// `auth` is neither a token nor an object.
    #[error("must be a token string or an object, got {0}")]
    NotAuth(Value),
    /// `auth`'s `headers` (strategy `header`) are wrong.
    #[error("headers {0}")]
    AuthHeaders(Box<FieldProblem>),
}

fn string_list(v: Option<&Value>) -> Result<Vec<String>, FieldProblem> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| FieldProblem::NotAString(i.clone()))
            })
            .collect(),
        Some(other) => Err(FieldProblem::NotAList(other.clone())),
    }
}

fn string_map(v: Option<&Value>) -> Result<BTreeMap<String, String>, FieldProblem> {
    match v {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                Value::Number(_) | Value::Bool(_) => Ok((k.clone(), v.to_string())),
                other => Err(FieldProblem::NotAStringValue {
                    key: k.clone(),
                    got: other.clone(),
                }),
            })
            .collect(),
        Some(other) => Err(FieldProblem::NotAMap(other.clone())),
    }
}

fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(T[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn transports_are_chosen_as_upstream_does() {
        let (s, bad) = parse_config(&json!({"mcpServers": {
            "a": {"command": "node", "args": ["x.js"], "env": {"K": "v"}},
            "b": {"url": "http://127.0.0.1:1/mcp"},
            "c": {"url": "http://127.0.0.1:1/sse"},
            "d": {"url": "http://127.0.0.1:1/sse", "transport": "http"},
            "e": {"url": "http://127.0.0.1:1/x", "type": "sse", "auth": "tok"},
            "f": {"url": "http://127.0.0.1:1/x", "type": "shttp", "enabled": false},
            "g": {"args": []},
        }}))
        .unwrap();
        let kinds: Vec<_> = s
            .iter()
            .map(|s| match &s.transport {
                Transport::Stdio { .. } => "stdio",
                Transport::Http { .. } => "http",
                Transport::Sse { .. } => "sse",
            })
            .collect();
        assert_eq!(kinds, ["stdio", "http", "sse", "http", "sse"]);
        let Transport::Sse { headers, .. } = &s[4].transport else {
            panic!()
        };
        assert_eq!(headers["Authorization"], "Bearer tok");
        assert_eq!(bad.len(), 1);
        assert!(bad[0].to_string().contains("`g`"), "{}", bad[0]);
    }

    #[test]
    fn basic_auth_is_base64() {
        assert_eq!(base64(b"user:pass"), "dXNlcjpwYXNz");
        assert_eq!(base64(b"ab"), "YWI=");
    }

    #[test]
    fn empty_configs_are_no_servers() {
        for c in [json!(null), json!({}), json!({"mcpServers": {}})] {
            assert!(parse_config(&c).unwrap().0.is_empty());
        }
        assert!(parse_config(&json!([1])).is_err());
    }

    #[test]
    fn the_sdk_s_bare_server_map_reads_like_mcp_servers() {
        let bare = json!({"everything": {"command": "node", "args": ["x.js"]}, "off": {"command": "y", "enabled": false}});
        let (ok, bad) = parse_config(&bare).unwrap();
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].name, "everything");
        assert!(bad.is_empty());
        let err = parse_config(&json!({"everything": "node x.js"})).unwrap_err();
        assert!(err.to_string().contains("mcpServers"), "{err}");
        assert!(parse_config(&json!({"mcpServers": [1]})).is_err());
    }
}

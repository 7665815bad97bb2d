//! The demo site: a few pages the demo server serves itself on loopback (no network), for the
//! demo model's tour to browse. A small shop with a sign-in form, so the tour can ask a person
//! to take over the browser and sign in: the account page then says who is signed in (a cookie
//! set by the form), which the agent reads after the hand-back.
//!
//! - `GET /demo/` the shop's front page;
//! - `GET /demo/login` the sign-in form (any name and password);
//! - `POST /demo/session` signs in (sets the `tandem_demo_user` cookie) and goes to the account;
//! - `GET /demo/account` "Signed in as …", or "Not signed in".

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

/// The request field the demo server adds to each completion request it hands its responder:
/// the demo site's address (`http://127.0.0.1:PORT/demo/`), learnt from the request's `Host`.
pub const SITE_FIELD: &str = "x_tandem_demo_site";

/// The path the site is served under.
pub const SITE_PATH: &str = "/demo/";

const COOKIE: &str = "tandem_demo_user";

/// The site's routes.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/demo/", get(front))
        .route("/demo/login", get(login))
        .route("/demo/session", post(session))
        .route("/demo/account", get(account))
}

fn page(title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <style>body{{font-family:system-ui,sans-serif;max-width:40em;margin:2em auto;padding:0 1em}}\
         label{{display:block;margin:.6em 0}}input{{font-size:1em;padding:.3em}}\
         button{{font-size:1em;padding:.3em 1em}}</style></head><body>{body}</body></html>"
    );
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

async fn front() -> Response {
    page(
        "Tandem demo shop",
        "<h1>Tandem demo shop</h1>\
         <p>This page is served by Tandem itself, on this machine: the demo needs no network.</p>\
         <h2>Today's items</h2>\
         <ul><li>Rubber duck (for debugging): $3</li><li>Mechanical keyboard: $89</li>\
         <li>Cup of coffee: $2</li></ul>\
         <p><a href=\"/demo/login\">Sign in</a> to see your account.</p>",
    )
}

/// The sign-in form. Its fields sit at fixed places (name at 40–340 × 130–166 CSS pixels,
/// password at 190–226, the button at 250) so that a person's clicks on the live picture,
/// and a test's, land on them whatever the fonts.
async fn login() -> Response {
    page(
        "Sign in — Tandem demo shop",
        "<style>form input,form button{position:absolute;left:40px;height:36px;font-size:16px;\
         box-sizing:border-box}form input{width:300px}#name{top:130px}#password{top:190px}\
         form button{top:250px;width:120px}h1,p{margin:0 0 12px}body{margin:0;padding:24px 40px}\
         </style>\
         <h1>Sign in</h1>\
         <p>Any name and password will do: nothing leaves this machine.</p>\
         <form method=\"post\" action=\"/demo/session\">\
         <input id=\"name\" name=\"name\" placeholder=\"Name\" aria-label=\"Name\" \
         autocomplete=\"username\" autofocus>\
         <input id=\"password\" name=\"password\" type=\"password\" placeholder=\"Password\" \
         aria-label=\"Password\" autocomplete=\"current-password\">\
         <button type=\"submit\">Sign in</button></form>",
    )
}

async fn session(body: Bytes) -> Response {
    let form = String::from_utf8_lossy(&body);
    let name = form
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == "name")
        .map(|(_, v)| form_decode(v))
        .map(|v| v.trim().chars().take(60).collect::<String>())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "guest".to_owned());
    let cookie = format!(
        "{COOKIE}={}; Path=/demo; SameSite=Lax",
        percent_encode(&name)
    );
    (
        StatusCode::SEE_OTHER,
        [
            (header::SET_COOKIE, cookie),
            (header::LOCATION, "/demo/account".to_owned()),
        ],
    )
        .into_response()
}

async fn account(headers: HeaderMap) -> Response {
    let user = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| form_decode(v));
    match user {
        Some(name) => page(
            "Your account — Tandem demo shop",
            &format!(
                "<h1>Your account</h1><p>Signed in as {}.</p><p>No orders yet.</p>",
                escape(&name)
            ),
        ),
        None => page(
            "Your account — Tandem demo shop",
            "<h1>Your account</h1><p>Not signed in. <a href=\"/demo/login\">Sign in</a></p>",
        ),
    }
}

/// Decodes `application/x-www-form-urlencoded` text (`+` and `%XX`).
fn form_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(hi << 4 | lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

/// Percent-encodes everything but ASCII letters and digits, for a cookie value.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_values_decode_and_cookie_values_round_trip() {
        assert_eq!(form_decode("Ada+Lovelace%21"), "Ada Lovelace!");
        assert_eq!(form_decode("50%"), "50%");
        assert_eq!(form_decode("%zz"), "%zz");
        for name in ["Ada Lovelace", "ü<b>", "a;b=c"] {
            assert_eq!(form_decode(&percent_encode(name)), name);
        }
        assert_eq!(escape("<b>&\""), "&lt;b&gt;&amp;&quot;");
    }
}

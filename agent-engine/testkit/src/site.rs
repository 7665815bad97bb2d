//! A small site tests of the agent's browser serve on 127.0.0.1: a home page with a link and
//! a button, a login form whose fields sit at fixed spots (user centred at (250, 215),
//! password at (250, 315)), the page it leads to, a page that closes its own tab, and pages
//! that misbehave (never finish loading, not HTML, huge), and a cookie login: `/sign-in?user=U`
//! sets a session cookie and a `theme` in local storage, `/account.html` shows who is signed
//! in by that cookie (and the stored theme).

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const HOME: &str = r#"<!doctype html><html><head><title>Tandem Shop</title></head>
<body><h1>Welcome</h1><p>A shop for tests.</p><a href="/login.html">Log in</a>
<button onclick="document.getElementById('out').textContent='pressed'">Press</button><p id="out"></p>
<a href="/closer.html" target="_blank">Open closer</a></body></html>"#;

const LOGIN: &str = r#"<!doctype html><html><head><title>Log in</title>
<style>#user,#pass{position:absolute;left:100px;width:300px;height:30px}#user{top:200px}#pass{top:300px}#go{position:absolute;left:100px;top:400px}</style></head>
<body><h1>Log in</h1><form action="/welcome.html" method="get">
<input id="user" name="user" placeholder="User name">
<input id="pass" name="pass" type="password" placeholder="Password">
<button id="go" type="submit">Sign in</button></form></body></html>"#;

const WELCOME: &str = r#"<!doctype html><html><head><title>Your account</title></head>
<body><h1 id="hi">Welcome</h1><script>
const u = new URLSearchParams(location.search).get('user');
document.getElementById('hi').textContent = 'Welcome, ' + u;
</script></body></html>"#;

/// A running site; pages at `url(path)`.
pub struct Site {
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Site {
    /// The URL of `path` (starting with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

fn huge() -> String {
    let mut s = String::from("<!doctype html><html><head><title>Huge</title></head><body>");
    for i in 0..3000 {
        s.push_str(&format!(
            "<p>Paragraph {i} <a href=\"/p{i}\">link {i}</a></p>"
        ));
    }
    s.push_str("</body></html>");
    s
}

/// Serves the site until the test ends.
///
/// # Panics
/// When no loopback port can be bound: a test kit should fail the test loudly then.
pub async fn serve() -> Site {
    let listener = match TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => panic!("test site: cannot bind 127.0.0.1:0: {e}"),
    };
    let addr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => panic!("test site: no local address: {e}"),
    };
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                break;
            };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let n = stream.read(&mut buf).await.unwrap_or(0);
                let req = String::from_utf8_lossy(&buf[..n]).to_string();
                let target = req.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let path = target.split('?').next().unwrap_or("/").to_owned();
                let mut extra = String::new();
                let (ctype, body) = match path.as_str() {
                    "/sign-in" => {
                        let user: String = target
                            .split_once("user=")
                            .map(|(_, u)| u)
                            .unwrap_or("someone")
                            .chars()
                            .take_while(char::is_ascii_alphanumeric)
                            .collect();
                        extra = format!("Set-Cookie: tandem_session={user}; Path=/; HttpOnly\r\n");
                        (
                            "text/html",
                            format!(
                                "<title>Signed in</title><p>Signed in as {user}</p><script>localStorage.setItem('theme', 'dark')</script>"
                            ),
                        )
                    }
                    "/account.html" => {
                        let user = req
                            .lines()
                            .find(|l| l.to_ascii_lowercase().starts_with("cookie:"))
                            .and_then(|l| l.split_once("tandem_session="))
                            .map(|(_, v)| v.split(';').next().unwrap_or("").trim().to_owned());
                        let who = match user {
                            Some(u) => format!("Signed in as {u}"),
                            None => "Not signed in".to_owned(),
                        };
                        (
                            "text/html",
                            format!(
                                "<title>Account</title><p>{who}</p><p id=\"theme\"></p><script>document.getElementById('theme').textContent = 'Theme: ' + localStorage.getItem('theme')</script>"
                            ),
                        )
                    }
                    "/" | "/index.html" => ("text/html", HOME.to_owned()),
                    "/login.html" => ("text/html", LOGIN.to_owned()),
                    "/welcome.html" => ("text/html", WELCOME.to_owned()),
                    "/closer.html" => (
                        "text/html",
                        "<title>Closer</title><button onclick=\"window.close()\">Close me</button>"
                            .to_owned(),
                    ),
                    "/data.json" => ("application/json", r#"{"answer": 42}"#.to_owned()),
                    "/huge.html" => ("text/html", huge()),
                    "/never" => {
                        // Headers and a first part, then nothing more: the page never loads.
                        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<html><head><title>Slow</title></head><body>Loading";
                        let _ = stream.write_all(head.as_bytes()).await;
                        tokio::time::sleep(std::time::Duration::from_secs(600)).await;
                        return;
                    }
                    _ => (
                        "text/html",
                        "<title>Not found</title>nothing here".to_owned(),
                    ),
                };
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(resp.as_bytes()).await;
            });
        }
    });
    Site { addr }
}

//! The desktop socket `/sockets/vnc/{id}` against a real VNC server: Xvfb on a free display
//! and x11vnc serving it on a loopback port, as the sandbox's entrypoint runs them. After the
//! auth frame the client gets the server's `RFB 003.008\n` greeting and goes through the RFB
//! handshake (version, security types, ClientInit → the display's size) over binary frames;
//! text frames after auth are ignored. Refusals: wrong key (4001), unknown conversation (4004),
//! a server without a desktop (error frame + 4004, `desktop: false` in server_info), a VNC
//! server that does not answer (error frame + 1011); the server keeps serving after each, and
//! the socket closes when the VNC server goes away. The sandbox's way, x11vnc on a unix socket
//! only (`TANDEM_VNC_ADDR` a path), is relayed the same.

use crate::harness;

use std::process::Stdio;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use harness::{KEY, TestServer, Ws, close_code};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::Message as WsMessage;

/// Hang guard for each wait; the tests never assert speed.
const PATIENCE: Duration = Duration::from_secs(30);
/// The X display's size, which the RFB ServerInit must report.
const WIDTH: u16 = 800;
const HEIGHT: u16 = 600;

/// Xvfb plus x11vnc on loopback (or on a unix socket only); both are killed when this drops.
struct Desktop {
    vnc: Child,
    xvfb: Child,
    /// `127.0.0.1:<port>` of the VNC server, or its unix socket's path.
    addr: String,
    /// The unix socket's folder, removed with it.
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Desktop {
    fn drop(&mut self) {
        let _ = self.vnc.start_kill();
        let _ = self.xvfb.start_kill();
    }
}

/// The first line of `child`'s stdout that starts with `prefix`, without it.
async fn line_of(child: &mut Child, prefix: &str) -> String {
    let out = child.stdout.take().expect("stdout is piped");
    let mut lines = BufReader::new(out).lines();
    let found = tokio::time::timeout(PATIENCE, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(rest) = line.trim().strip_prefix(prefix) {
                return rest.to_owned();
            }
        }
        panic!("the process ended before printing {prefix}…");
    });
    let found = found.await.expect("no readiness line within 30 s");
    // Keep draining stdout so the process never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    found
}

impl Desktop {
    /// A desktop whose VNC server listens on a loopback port.
    async fn start() -> Self {
        Self::start_on(false).await
    }

    /// A desktop whose VNC server listens on a unix socket only, as in the sandbox.
    async fn start_on_unix_socket() -> Self {
        Self::start_on(true).await
    }

    async fn start_on(unix: bool) -> Self {
        // Xvfb picks a free display itself and writes its number to the given fd.
        let mut xvfb = Command::new("Xvfb")
            .args(["-displayfd", "1", "-nolisten", "tcp", "-noreset"])
            .args(["-screen", "0", &format!("{WIDTH}x{HEIGHT}x24")])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("Xvfb is installed (scripts/setup.sh)");
        let display = line_of(&mut xvfb, "").await;
        if unix {
            let dir = tempfile::tempdir().unwrap();
            let sock = dir.path().join("vnc.sock");
            // No TCP port at all, as the sandbox's entrypoint runs it.
            let vnc = Command::new("x11vnc")
                .args(["-rfbport", "0", "-no6", "-rfbportv6", "0", "-unixsock"])
                .arg(&sock)
                .args(["-forever", "-nopw", "-quiet", "-display"])
                .arg(format!(":{display}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("x11vnc is installed (scripts/setup.sh)");
            let t = std::time::Instant::now();
            while !sock.exists() {
                assert!(t.elapsed() < PATIENCE, "x11vnc made no socket within 30 s");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            return Self {
                vnc,
                xvfb,
                addr: sock.to_string_lossy().into_owned(),
                _dir: Some(dir),
            };
        }
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let mut vnc = Command::new("x11vnc")
            .args(["-localhost", "-forever", "-nopw", "-quiet", "-rfbport"])
            .arg(port.to_string())
            .arg("-display")
            .arg(format!(":{display}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("x11vnc is installed (scripts/setup.sh)");
        // x11vnc prints PORT=<port> once it listens.
        let listening = line_of(&mut vnc, "PORT=").await;
        assert_eq!(listening, port.to_string());
        Self {
            vnc,
            xvfb,
            addr: format!("127.0.0.1:{port}"),
            _dir: None,
        }
    }
}

async fn server_with(desktop: &Desktop) -> TestServer {
    let addr = desktop.addr.clone();
    TestServer::start_with(move |c| c.vnc_addr = Some(addr)).await
}

/// A conversation to open the socket for (the desktop is the server's, not the conversation's).
async fn conversation(t: &TestServer) -> String {
    let llm = harness::llm(vec![]);
    t.create(&llm, json!({})).await
}

/// The next frame that is not a ping, within the hang guard.
async fn next(ws: &mut Ws) -> WsMessage {
    loop {
        let msg = tokio::time::timeout(PATIENCE, ws.next())
            .await
            .expect("no frame within 30 s")
            .expect("socket ended")
            .unwrap();
        if !matches!(msg, WsMessage::Ping(_) | WsMessage::Pong(_)) {
            return msg;
        }
    }
}

/// Reads binary frames until `n` bytes have come (RFB messages may span frames).
async fn read_bytes(ws: &mut Ws, buf: &mut Vec<u8>, n: usize) -> Vec<u8> {
    while buf.len() < n {
        match next(ws).await {
            WsMessage::Binary(b) => buf.extend_from_slice(&b),
            other => panic!("expected RFB bytes, got {other:?}"),
        }
    }
    buf.drain(..n).collect()
}

async fn send_bytes(ws: &mut Ws, bytes: &[u8]) {
    ws.send(WsMessage::Binary(bytes.to_vec().into()))
        .await
        .unwrap();
}

/// The JSON of the next frame, which must be text.
async fn next_text(ws: &mut Ws) -> Value {
    match next(ws).await {
        WsMessage::Text(t) => serde_json::from_str(t.as_str()).unwrap(),
        other => panic!("expected a text frame, got {other:?}"),
    }
}

/// Opens the socket, authenticates and reads the greeting.
async fn greeted(t: &TestServer, id: &str) -> (Ws, Vec<u8>) {
    let mut ws = t.ws(&format!("/sockets/vnc/{id}")).await;
    let mut buf = Vec::new();
    let greeting = read_bytes(&mut ws, &mut buf, 12).await;
    assert_eq!(greeting, b"RFB 003.008\n");
    (ws, buf)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_vnc_socket_relays_the_rfb_handshake_of_a_real_vnc_server_after_auth() {
    let desktop = Desktop::start().await;
    let t = server_with(&desktop).await;
    let (s, info) = t.get("/server_info").await;
    assert_eq!(s, 200);
    assert_eq!(info["desktop"], true, "{info}");
    let id = conversation(&t).await;

    let (mut ws, mut buf) = greeted(&t, &id).await;
    // A text frame after auth goes nowhere: the RFB stream stays intact.
    ws.send(WsMessage::Text(
        json!({"type": "auth", "session_api_key": KEY})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    send_bytes(&mut ws, b"RFB 003.008\n").await;
    // Security types: a count, then that many types; x11vnc -nopw offers None (1).
    let count = read_bytes(&mut ws, &mut buf, 1).await[0];
    assert!(count >= 1, "the VNC server refused: no security types");
    let types = read_bytes(&mut ws, &mut buf, usize::from(count)).await;
    assert!(types.contains(&1), "security types {types:?} lack None");
    send_bytes(&mut ws, &[1]).await;
    assert_eq!(read_bytes(&mut ws, &mut buf, 4).await, [0, 0, 0, 0]);
    // ClientInit (shared) → ServerInit starts with the framebuffer's width and height.
    send_bytes(&mut ws, &[1]).await;
    let size = read_bytes(&mut ws, &mut buf, 4).await;
    assert_eq!(
        (
            u16::from_be_bytes([size[0], size[1]]),
            u16::from_be_bytes([size[2], size[3]])
        ),
        (WIDTH, HEIGHT)
    );
    ws.close(None).await.unwrap();
    drop(ws);

    // A second viewer after the first left gets its own session.
    let (ws, _) = greeted(&t, &id).await;
    drop(ws);
    t.stop().await;
    drop(desktop);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_vnc_socket_relays_a_vnc_server_on_a_unix_socket_after_auth() {
    let desktop = Desktop::start_on_unix_socket().await;
    assert!(desktop.addr.starts_with('/'), "{}", desktop.addr);
    let t = server_with(&desktop).await;
    let id = conversation(&t).await;
    // Without the key: closed, no RFB.
    let mut ws = t.ws_as(&format!("/sockets/vnc/{id}"), "wrong").await;
    assert_eq!(close_code(&mut ws).await, Some(4001));
    // With it: the greeting and the handshake through to the display's size.
    let (mut ws, mut buf) = greeted(&t, &id).await;
    send_bytes(&mut ws, b"RFB 003.008\n").await;
    let count = read_bytes(&mut ws, &mut buf, 1).await[0];
    let types = read_bytes(&mut ws, &mut buf, usize::from(count)).await;
    assert!(types.contains(&1), "security types {types:?} lack None");
    send_bytes(&mut ws, &[1]).await;
    assert_eq!(read_bytes(&mut ws, &mut buf, 4).await, [0, 0, 0, 0]);
    send_bytes(&mut ws, &[1]).await;
    let size = read_bytes(&mut ws, &mut buf, 4).await;
    assert_eq!(
        (
            u16::from_be_bytes([size[0], size[1]]),
            u16::from_be_bytes([size[2], size[3]])
        ),
        (WIDTH, HEIGHT)
    );
    drop(ws);
    t.stop().await;
    drop(desktop);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_vnc_socket_refuses_a_wrong_key_and_an_unknown_conversation() {
    let desktop = Desktop::start().await;
    let t = server_with(&desktop).await;
    let id = conversation(&t).await;

    let mut ws = t.ws_as(&format!("/sockets/vnc/{id}"), "wrong").await;
    assert_eq!(close_code(&mut ws).await, Some(4001));

    let mut ws = t
        .ws("/sockets/vnc/0f0e0d0c-0b0a-4908-8706-050403020100")
        .await;
    assert_eq!(close_code(&mut ws).await, Some(4004));
    let mut ws = t.ws("/sockets/vnc/not-an-id").await;
    assert_eq!(close_code(&mut ws).await, Some(4004));

    // Still serving: the right key on a known conversation gets the desktop.
    let (ws, _) = greeted(&t, &id).await;
    drop(ws);
    t.stop().await;
    drop(desktop);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_server_without_a_desktop_says_so_and_refuses_the_vnc_socket() {
    let t = TestServer::start().await;
    let (_, info) = t.get("/server_info").await;
    assert_eq!(info["desktop"], false, "{info}");
    let id = conversation(&t).await;

    let mut ws = t.ws(&format!("/sockets/vnc/{id}")).await;
    let refused = next_text(&mut ws).await;
    assert_eq!(refused["type"], "error", "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("has no desktop"),
        "{refused}"
    );
    assert_eq!(close_code(&mut ws).await, Some(4004));
    let (s, _) = t.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(s, 200);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unreachable_vnc_server_gets_an_error_frame_and_1011() {
    // A port nothing listens on: bound, then let go.
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let vnc = addr.clone();
    let t = TestServer::start_with(move |c| c.vnc_addr = Some(vnc)).await;
    let id = conversation(&t).await;

    let mut ws = t.ws(&format!("/sockets/vnc/{id}")).await;
    let refused = next_text(&mut ws).await;
    assert_eq!(refused["type"], "error", "{refused}");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("cannot be reached") && message.contains(&addr),
        "{refused}"
    );
    assert_eq!(close_code(&mut ws).await, Some(1011));
    let (s, _) = t.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(s, 200);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_vnc_socket_closes_when_the_vnc_server_goes_away() {
    let desktop = Desktop::start().await;
    let t = server_with(&desktop).await;
    let id = conversation(&t).await;
    let (mut ws, _) = greeted(&t, &id).await;
    drop(desktop);
    assert_eq!(close_code(&mut ws).await, Some(1000));
    // Nothing answers any more: the next viewer is told why.
    let mut ws = t.ws(&format!("/sockets/vnc/{id}")).await;
    assert_eq!(next_text(&mut ws).await["type"], "error");
    assert_eq!(close_code(&mut ws).await, Some(1011));
    t.stop().await;
}

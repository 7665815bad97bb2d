//! `/sockets/vnc/{conversation_id}` (Tandem): the desktop of the machine the server runs on (the
//! sandbox's X display), for the UI's noVNC. After the auth frame the server connects to its VNC
//! server (`TANDEM_VNC_ADDR`: a unix socket path such as `/run/tandem/vnc.sock`, which is how
//! the sandbox offers it, in a folder only the server's user can enter, so nothing on the host
//! nor the agent's user reaches it; or `host:port` over TCP; no password either way: this
//! socket's session key is the only way in) and relays raw RFB bytes both ways, binary
//! WebSocket frames to TCP and back, from the server's `RFB 003.008\n` greeting on. Text frames
//! after auth are ignored. Refusals: unknown conversation → close 4004; no desktop → an error
//! frame, then 4004; VNC server unreachable → an error frame, then 1011.

use axum::extract::Path as UrlPath;
use axum::extract::ws::{Message as WsMessage, WebSocket};
use axum::response::Response;
use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, StreamExt};
use tandem_protocol::VncServerFrame;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

use super::Upgrade;
use crate::AppState;
use crate::auth::{CLOSE_NOT_FOUND, close};

/// Close code when the VNC server cannot be reached (an internal error of the server's side).
const CLOSE_UNREACHABLE: u16 = 1011;

/// The most bytes read from the VNC server into one binary frame.
const CHUNK: usize = 64 * 1024;

/// Upgrades to the VNC socket.
pub async fn handler(up: Upgrade, UrlPath(raw): UrlPath<String>) -> Response {
    up.serve_first_frame(move |socket, state| serve(socket, state, raw))
}

/// Sends an error frame saying why, then closes with `code`.
async fn refuse(socket: &mut WebSocket, code: u16, message: &str) {
    let frame = VncServerFrame::error(message).to_json();
    let _ = socket.send(WsMessage::Text(frame.into())).await;
    close(socket, code, message).await;
}

async fn serve(mut socket: WebSocket, state: AppState, raw: String) {
    let Some(live) = super::conversation(&mut socket, &state, &raw).await else {
        return;
    };
    let Some(addr) = state.config.vnc_addr.clone() else {
        let message =
            "This server has no desktop (TANDEM_VNC_ADDR is not set): only a sandbox has one";
        refuse(&mut socket, CLOSE_NOT_FOUND, message).await;
        return;
    };
    let vnc = match connect(&addr).await {
        Ok(vnc) => vnc,
        Err(e) => {
            let message = format!("The desktop's VNC server at {addr} cannot be reached: {e}");
            tracing::warn!("{message}");
            refuse(&mut socket, CLOSE_UNREACHABLE, &message).await;
            return;
        }
    };
    let _guard = live.watch();
    let (vnc_in, vnc_out) = tokio::io::split(vnc);
    let (ws_out, ws_in) = socket.split();
    // Each direction runs on its own so neither side waits for the other to read (a VNC server
    // blocked writing a big update must still get the client's input); when either ends, the
    // other is dropped, which closes the connection to the VNC server and the socket.
    tokio::select! {
        () = to_client(vnc_in, ws_out) => {}
        () = to_vnc(ws_in, vnc_out) => {}
    }
}

/// A byte stream to the VNC server, whichever way it is reached.
trait VncStream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> VncStream for T {}

/// Where `addr` names a unix socket: an absolute path, or `unix:PATH`.
fn unix_path(addr: &str) -> Option<&str> {
    addr.strip_prefix("unix:")
        .or_else(|| addr.starts_with('/').then_some(addr))
}

/// Connects to the VNC server at `addr` (a unix socket path, or `host:port`).
async fn connect(addr: &str) -> std::io::Result<Box<dyn VncStream>> {
    match unix_path(addr) {
        Some(path) => Ok(Box::new(UnixStream::connect(path).await?)),
        None => {
            let tcp = TcpStream::connect(addr).await?;
            // RFB is many small messages each way: do not hold any back.
            let _ = tcp.set_nodelay(true);
            Ok(Box::new(tcp))
        }
    }
}

/// VNC server → client: each read goes out as one binary frame (and a ping when idle). Closes
/// the socket when the VNC server ends the connection.
async fn to_client(
    mut vnc: tokio::io::ReadHalf<Box<dyn VncStream>>,
    mut ws: SplitSink<WebSocket, WsMessage>,
) {
    let mut buf = vec![0u8; CHUNK];
    let mut ping = tokio::time::interval(super::PING_INTERVAL);
    ping.tick().await;
    loop {
        tokio::select! {
            read = vnc.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let bytes = axum::body::Bytes::copy_from_slice(&buf[..n]);
                    if ws.send(WsMessage::Binary(bytes)).await.is_err() { return }
                }
            },
            _ = ping.tick() => {
                if ws.send(WsMessage::Ping(Default::default())).await.is_err() { return }
            }
        }
    }
    let _ = ws
        .send(WsMessage::Close(Some(axum::extract::ws::CloseFrame {
            code: 1000,
            reason: "The desktop's VNC server closed the connection".into(),
        })))
        .await;
}

/// Client → VNC server: binary frames are written through as they come; text frames (a late
/// auth frame, say) are ignored.
async fn to_vnc(mut ws: SplitStream<WebSocket>, mut vnc: tokio::io::WriteHalf<Box<dyn VncStream>>) {
    while let Some(msg) = ws.next().await {
        match msg {
            Ok(WsMessage::Binary(b)) => {
                if vnc.write_all(&b).await.is_err() {
                    break;
                }
            }
            Ok(WsMessage::Text(_) | WsMessage::Ping(_) | WsMessage::Pong(_)) => {}
            Ok(WsMessage::Close(_)) | Err(_) => break,
        }
    }
    let _ = vnc.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::unix_path;

    #[test]
    fn an_absolute_path_or_unix_prefix_names_a_unix_socket() {
        assert_eq!(
            unix_path("/run/tandem/vnc.sock"),
            Some("/run/tandem/vnc.sock")
        );
        assert_eq!(unix_path("unix:/tmp/v.sock"), Some("/tmp/v.sock"));
        assert_eq!(unix_path("127.0.0.1:5900"), None);
        assert_eq!(unix_path("localhost:5901"), None);
    }
}

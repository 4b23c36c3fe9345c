//! The sign-in's loopback callback: a one-shot HTTP listener on 127.0.0.1 that waits for the
//! browser to come back to `/callback?code=…&state=…` and answers it with a short page. Any
//! other path gets a 404 and the wait goes on (browsers ask for `/favicon.ico`).

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The path the authorization server sends the browser back to.
const PATH: &str = "/callback";
/// A request line and headers larger than this are not a browser's callback.
const MAX_REQUEST: usize = 16 * 1024;
/// One connection has this long to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

pub(super) struct Callback {
    listener: TcpListener,
    port: u16,
}

impl Callback {
    /// Listens on `port` (0: any free one).
    pub(super) async fn bind(port: u16) -> Result<Callback, String> {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| format!("could not listen on 127.0.0.1:{port} for the sign-in: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        Ok(Callback { listener, port })
    }

    /// Where the browser is sent back to.
    pub(super) fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{PATH}", self.port)
    }

    /// The full URL the browser came back with. An `error=` answer from the authorization
    /// server is an error here, with its description.
    pub(super) async fn wait(self) -> Result<String, String> {
        loop {
            let (mut stream, _) = self
                .listener
                .accept()
                .await
                .map_err(|e| format!("the sign-in callback failed: {e}"))?;
            let target = match tokio::time::timeout(READ_TIMEOUT, read_target(&mut stream)).await {
                Ok(Some(t)) => t,
                _ => continue,
            };
            let url = format!("http://127.0.0.1:{}{target}", self.port);
            let Ok(parsed) = reqwest::Url::parse(&url) else {
                let _ = respond(&mut stream, 400, "Bad request.").await;
                continue;
            };
            if parsed.path() != PATH {
                let _ = respond(&mut stream, 404, "Not found.").await;
                continue;
            }
            let query = |key: &str| {
                parsed
                    .query_pairs()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.into_owned())
            };
            if let Some(error) = query("error") {
                let why = match query("error_description") {
                    Some(d) => format!("{error}: {d}"),
                    None => error,
                };
                let _ = respond(&mut stream, 400, "Sign-in failed. You can close this tab.").await;
                return Err(format!("the authorization server refused: {why}"));
            }
            let _ = respond(
                &mut stream,
                200,
                "Signed in to the MCP server. You can close this tab and go back to the terminal.",
            )
            .await;
            return Ok(url);
        }
    }
}

/// The request target of a `GET` request line, once the headers are in.
async fn read_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 || buf.len() + n > MAX_REQUEST {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let line = buf.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?.trim_end();
    let mut parts = line.split(' ');
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Some(target.to_string()),
        _ => None,
    }
}

async fn respond(
    stream: &mut tokio::net::TcpStream,
    status: u16,
    text: &str,
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let body = format!(
        "<!doctype html><meta charset=utf-8><title>interpreter</title><p style=\"font:16px sans-serif;margin:3em\">{text}</p>"
    );
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        s.write_all(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn waits_past_other_paths_for_the_callback() {
        let cb = Callback::bind(0).await.unwrap();
        let port = cb.port;
        assert!(cb.redirect_uri().ends_with("/callback"));
        let waiting = tokio::spawn(cb.wait());
        assert!(get(port, "/favicon.ico").await.starts_with("HTTP/1.1 404"));
        assert!(
            get(port, "/callback?code=c1&state=s1")
                .await
                .starts_with("HTTP/1.1 200")
        );
        let url = waiting.await.unwrap().unwrap();
        assert!(url.ends_with("/callback?code=c1&state=s1"), "{url}");
    }

    #[tokio::test]
    async fn an_error_answer_is_an_error() {
        let cb = Callback::bind(0).await.unwrap();
        let port = cb.port;
        let waiting = tokio::spawn(cb.wait());
        get(port, "/callback?error=access_denied&error_description=nope").await;
        let e = waiting.await.unwrap().unwrap_err();
        assert!(e.contains("access_denied: nope"), "{e}");
    }
}

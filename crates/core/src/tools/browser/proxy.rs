//! The browser's only way out: a SOCKS5 proxy on loopback that every connection Chromium
//! makes goes through (loopback included). Request interception (`guard.rs`) sees HTTP
//! requests but not WebSockets, and Chromium resolves a host again after it was checked; here
//! each connection's host is checked by webfetch's rules and the connection goes to the
//! addresses that were checked, as webfetch's does. Chromium sends SOCKS5 the host name, so
//! the lookup is ours. Its refusals are logged, not told the model: Chromium's own
//! speculative connections would make them noise, and interception reports the requests.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use crate::tools::web::{self, WebConfig};

/// SOCKS5 reply codes (RFC 1928).
const SUCCEEDED: u8 = 0;
const NOT_ALLOWED: u8 = 2;
const HOST_UNREACHABLE: u8 = 4;
const COMMAND_NOT_SUPPORTED: u8 = 7;
const ADDRESS_NOT_SUPPORTED: u8 = 8;

/// A listening proxy; dropping it closes the listener and every connection through it.
pub(crate) struct Proxy {
    pub(crate) addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Listens on a free loopback port; connections are judged by `cfg`.
pub(crate) async fn start(cfg: Arc<WebConfig>) -> std::io::Result<Proxy> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        // Owned by the accept loop: aborting it drops every connection.
        let mut connections = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((client, _)) = accepted else { continue };
                    let cfg = cfg.clone();
                    connections.spawn(async move {
                        if let Err(e) = serve(client, &cfg).await {
                            tracing::debug!("browser proxy connection: {e}");
                        }
                    });
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
    });
    Ok(Proxy { addr, task })
}

/// One client: the SOCKS5 greeting and CONNECT, the rules, then bytes both ways.
async fn serve(mut client: TcpStream, cfg: &WebConfig) -> std::io::Result<()> {
    let handshake = tokio::time::timeout(cfg.timeout, request(&mut client)).await;
    let (host, port) = match handshake {
        Ok(Ok(Ok(target))) => target,
        Ok(Ok(Err(code))) => return reply(&mut client, code).await,
        Ok(Err(e)) => return Err(e),
        Err(_) => return Ok(()),
    };
    let shown = match host.contains(':') {
        true => format!("[{host}]:{port}"),
        false => format!("{host}:{port}"),
    };
    let addrs = match checked(cfg, &shown).await {
        Ok(a) => a,
        Err((code, why)) => {
            tracing::debug!("browser proxy: {shown} not reached: {why}");
            return reply(&mut client, code).await;
        }
    };
    let upstream = tokio::time::timeout(cfg.timeout, TcpStream::connect(&addrs[..])).await;
    let Ok(Ok(mut upstream)) = upstream else {
        return reply(&mut client, HOST_UNREACHABLE).await;
    };
    reply(&mut client, SUCCEEDED).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// The addresses `host:port` may be reached at, by webfetch's rules; else the reply code
/// and why.
async fn checked(cfg: &WebConfig, host_port: &str) -> Result<Vec<SocketAddr>, (u8, String)> {
    let url = reqwest::Url::parse(&format!("http://{host_port}/"))
        .map_err(|e| (ADDRESS_NOT_SUPPORTED, format!("not a host: {e}")))?;
    let lookup = web::resolve_checked(cfg, &url);
    match tokio::time::timeout(cfg.timeout, lookup).await {
        Ok(Ok(addrs)) => Ok(addrs),
        Ok(Err(e @ web::FetchError::Refused(_))) => Err((NOT_ALLOWED, e.to_string())),
        Ok(Err(e)) => Err((HOST_UNREACHABLE, e.to_string())),
        Err(_) => Err((HOST_UNREACHABLE, "no answer in time".into())),
    }
}

/// Reads the greeting (no authentication is offered) and the request: the host and port of a
/// CONNECT, or the reply code that refuses it.
async fn request(client: &mut TcpStream) -> std::io::Result<Result<(String, u16), u8>> {
    let [version, methods] = read::<2>(client).await?;
    if version != 5 {
        return Err(std::io::Error::other("not a SOCKS5 client"));
    }
    let mut offered = vec![0u8; usize::from(methods)];
    client.read_exact(&mut offered).await?;
    if !offered.contains(&0) {
        client.write_all(&[5, 0xff]).await?;
        return Err(std::io::Error::other("the client offers no method we take"));
    }
    client.write_all(&[5, 0]).await?;
    let [_, command, _, kind] = read::<4>(client).await?;
    let host = match kind {
        1 => IpAddr::from(Ipv4Addr::from(read::<4>(client).await?)).to_string(),
        4 => IpAddr::from(Ipv6Addr::from(read::<16>(client).await?)).to_string(),
        3 => {
            let [len] = read::<1>(client).await?;
            let mut name = vec![0u8; usize::from(len)];
            client.read_exact(&mut name).await?;
            String::from_utf8_lossy(&name).into_owned()
        }
        _ => return Ok(Err(ADDRESS_NOT_SUPPORTED)),
    };
    let port = u16::from_be_bytes(read::<2>(client).await?);
    Ok(match command {
        1 => Ok((host, port)),
        _ => Err(COMMAND_NOT_SUPPORTED),
    })
}

async fn read<const N: usize>(client: &mut TcpStream) -> std::io::Result<[u8; N]> {
    let mut buf = [0u8; N];
    client.read_exact(&mut buf).await?;
    Ok(buf)
}

/// A reply with `code` and an empty IPv4 bound address (clients do not use it).
async fn reply(client: &mut TcpStream, code: u8) -> std::io::Result<()> {
    client.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SOCKS5 CONNECT to `host:port` through `proxy`; the reply code, and the stream.
    async fn connect(proxy: SocketAddr, host: &str, port: u16) -> (u8, TcpStream) {
        let mut s = TcpStream::connect(proxy).await.unwrap();
        s.write_all(&[5, 1, 0]).await.unwrap();
        assert_eq!(read::<2>(&mut s).await.unwrap(), [5, 0]);
        let mut req = vec![5, 1, 0, 3, host.len() as u8];
        req.extend(host.as_bytes());
        req.extend(port.to_be_bytes());
        s.write_all(&req).await.unwrap();
        let answer = read::<10>(&mut s).await.unwrap();
        (answer[1], s)
    }

    fn config(allow_private: bool, denied: &[&str]) -> Arc<WebConfig> {
        Arc::new(WebConfig {
            allow_private,
            denied_domains: denied.iter().map(|d| d.to_string()).collect(),
            ..WebConfig::default()
        })
    }

    #[tokio::test]
    async fn connections_go_through_only_where_the_rules_allow() {
        let server = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = server.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = server.accept().await {
                let _ = s.write_all(b"hello").await;
            }
        });
        let open = start(config(true, &[])).await.unwrap();
        let (code, mut s) = connect(open.addr, "127.0.0.1", port).await;
        assert_eq!(code, SUCCEEDED);
        assert_eq!(&read::<5>(&mut s).await.unwrap(), b"hello");

        // Loopback without allow_private, and a denied domain, are refused.
        let strict = start(config(false, &[])).await.unwrap();
        assert_eq!(connect(strict.addr, "127.0.0.1", port).await.0, NOT_ALLOWED);
        let denied = start(config(true, &["localhost"])).await.unwrap();
        assert_eq!(connect(denied.addr, "localhost", port).await.0, NOT_ALLOWED);
        assert_eq!(connect(denied.addr, "127.0.0.1", port).await.0, SUCCEEDED);
        let (code, _) = connect(denied.addr, "no-such-host.invalid", port).await;
        assert_eq!(code, HOST_UNREACHABLE);
    }
}

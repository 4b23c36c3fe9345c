use super::*;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A tiny HTTP/1.1 server with canned answers per path; counts the requests it got.
async fn server() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let n = sock.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let reply = |status: &str, ctype: &str, body: &str| {
                    format!(
                        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    )
                };
                let text = match path.as_str() {
                    "/page" => reply(
                        "200 OK",
                        "text/html; charset=utf-8",
                        "<html><head><title>The  Title</title><script>var x = 1;</script></head><body><h1>Hello</h1><p>World <a href=\"/x\">link</a></p></body></html>",
                    ),
                    "/redirect" => format!(
                        "HTTP/1.1 302 Found\r\nLocation: http://localhost:{port}/page\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    ),
                    "/loop" => "HTTP/1.1 302 Found\r\nLocation: /loop\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string(),
                    "/binary" => reply("200 OK", "image/png", "\u{89}PNG"),
                    "/missing" => reply("404 Not Found", "text/plain", "no"),
                    "/endless" => {
                        let _ = sock
                            .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")
                            .await;
                        let chunk = vec![b'a'; 64 * 1024];
                        while sock.write_all(&chunk).await.is_ok() {}
                        return;
                    }
                    "/slow" => {
                        let _ = sock
                            .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nabc")
                            .await;
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        return;
                    }
                    _ => reply("404 Not Found", "text/plain", ""),
                };
                let _ = sock.write_all(text.as_bytes()).await;
            });
        }
    });
    (format!("http://127.0.0.1:{port}"), hits)
}

fn local() -> WebConfig {
    WebConfig {
        allow_private: true,
        timeout: Duration::from_secs(5),
        ..WebConfig::default()
    }
}

#[test]
fn public_addresses_are_told_from_the_rest() {
    for private in [
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3)),
        IpAddr::V4(Ipv4Addr::new(172, 16, 0, 1)),
        IpAddr::V4(Ipv4Addr::new(192, 168, 1, 1)),
        IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
        IpAddr::V4(Ipv4Addr::new(100, 64, 0, 1)),
        IpAddr::V4(Ipv4Addr::new(0, 0, 0, 0)),
        IpAddr::V6(Ipv6Addr::LOCALHOST),
        IpAddr::V6("fd00::1".parse().unwrap()),
        IpAddr::V6("fe80::1".parse().unwrap()),
        IpAddr::V6("::ffff:127.0.0.1".parse().unwrap()),
        IpAddr::V6("64:ff9b::a00:1".parse().unwrap()),
    ] {
        assert!(!is_public(private), "{private}");
    }
    for public in [
        IpAddr::V4(Ipv4Addr::new(93, 184, 216, 34)),
        IpAddr::V6("2606:4700::1111".parse().unwrap()),
    ] {
        assert!(is_public(public), "{public}");
    }
}

#[test]
fn only_http_urls_without_credentials_are_fetched() {
    for bad in [
        "file:///etc/passwd",
        "ftp://example.com/",
        "gopher://x/",
        "not a url",
        "http://user:pw@example.com/",
    ] {
        assert!(
            matches!(check_url(bad), Err(FetchError::Refused(_))),
            "{bad}"
        );
    }
    assert!(check_url("https://example.com/a?b=c").is_ok());
}

#[test]
fn domain_rules_cover_subdomains() {
    let o = crate::config::Overrides {
        config: vec![
            r#"web.allowed_domains=["docs.rs", "*.github.com"]"#.into(),
            r#"web.denied_domains=["evil.github.com"]"#.into(),
        ],
        ..Default::default()
    };
    let cfg = crate::config::Config::from_layers("/h".into(), None, None, &[], &o)
        .unwrap()
        .web;
    assert!(cfg.domain_refusal("docs.rs").is_none());
    assert!(cfg.domain_refusal("api.github.com").is_none());
    assert!(
        cfg.domain_refusal("evil.github.com")
            .unwrap()
            .contains("denied")
    );
    assert!(
        cfg.domain_refusal("notdocs.rs")
            .unwrap()
            .contains("allowed_domains")
    );
}

#[tokio::test]
async fn loopback_is_refused_before_any_connection_unless_allowed() {
    let (base, hits) = server().await;
    let refused = fetch(&WebConfig::default(), &format!("{base}/page"))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("allow_private"), "{refused}");
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    let page = fetch(&local(), &format!("{base}/page")).await.unwrap();
    assert_eq!(page.title.as_deref(), Some("The Title"));
    assert!(page.text.starts_with("# Hello"), "{}", page.text);
    assert!(page.text.contains("World [link](/x)"), "{}", page.text);
    assert!(!page.text.contains("var x"), "{}", page.text);
}

#[tokio::test]
async fn every_redirect_hop_is_checked_and_bounded() {
    let (base, _) = server().await;
    let page = fetch(&local(), &format!("{base}/redirect")).await.unwrap();
    assert!(page.url.contains("localhost"), "{}", page.url);
    // The hop to `localhost` is held to the same rules as the first URL.
    let only_ip = WebConfig {
        allowed_domains: vec!["127.0.0.1".into()],
        ..local()
    };
    let err = fetch(&only_ip, &format!("{base}/redirect"))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("localhost is not in [web] allowed_domains"),
        "{err}"
    );
    let err = fetch(&local(), &format!("{base}/loop")).await.unwrap_err();
    assert!(err.to_string().contains("more than 5 redirects"), "{err}");
}

#[tokio::test]
async fn bodies_are_bounded_in_bytes_and_time_and_must_be_text() {
    let (base, _) = server().await;
    let small = WebConfig {
        max_bytes: 256 * 1024,
        ..local()
    };
    let page = fetch(&small, &format!("{base}/endless")).await.unwrap();
    assert!(page.cut);
    assert_eq!(page.text.len(), 256 * 1024);
    let quick = WebConfig {
        timeout: Duration::from_secs(1),
        ..local()
    };
    let err = fetch(&quick, &format!("{base}/slow")).await.unwrap_err();
    assert!(
        err.to_string().contains("did not finish within 1 s"),
        "{err}"
    );
    let err = fetch(&local(), &format!("{base}/binary"))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("`image/png`, not a page or text"),
        "{err}"
    );
    let err = fetch(&local(), &format!("{base}/missing"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, FetchError::Status { status: 404, .. }),
        "{err}"
    );
}

#[test]
fn html_as_text_keeps_what_a_reader_sees() {
    let html = "<html><head><title>T</title><style>p{}</style></head><body>\
        <h1>Title  here</h1><p>One <b>bold</b>\n word.</p><script>var x = 1;</script>\
        <ul><li>a</li><li>b &amp; c</li></ul><noscript>enable js</noscript></body></html>";
    assert_eq!(html_to_text(html), "Title here\nOne bold word.\na\nb & c");
}

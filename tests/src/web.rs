//! The web the mock serves, so fetch and search tools have something to reach without the
//! network: `GET /web/<name>` is an HTML page about `<name>` (`/web/slow/<ms>/<name>` after
//! a delay), `GET /search?q=…` answers in SearXNG's JSON with two results on `/web/`, and
//! `POST …/coding/v1/search` the same in Kimi Code's search service's JSON. For the browser:
//! `/web/links` is a long page with links (one on `localhost`), an image and a WebSocket on
//! `localhost` and a form that submits to `/web/echo?q=…`, which says what was searched for.

use axum::body::Body;
use axum::http::{Response, StatusCode, header};
use serde_json::json;

/// The answer to a `GET` the mock serves as the web, if `path` is one.
pub(crate) async fn answer(
    path: &str,
    query: Option<&str>,
    host: Option<&str>,
) -> Option<Response<Body>> {
    // `/web/slow/<ms>/<name>`: the page after a delay (a slow site, for timing parallel calls).
    if let Some(rest) = path.strip_prefix("/web/slow/")
        && let Some((ms, name)) = rest.split_once('/')
        && let Ok(ms) = ms.parse::<u64>()
    {
        tokio::time::sleep(std::time::Duration::from_millis(ms.min(60_000))).await;
        return Box::pin(answer(&format!("/web/{name}"), query, host)).await;
    }
    if path == "/web/links" {
        return Some(reply("text/html; charset=utf-8", links_page(host)));
    }
    if path == "/web/echo" {
        let q = query
            .unwrap_or("")
            .split('&')
            .find_map(|kv| kv.strip_prefix("q="))
            .map(|q| percent_decode(&q.replace('+', " ")))
            .unwrap_or_default();
        let html = format!(
            "<!doctype html><html><head><title>Echo</title></head><body><p>You searched for: {}</p></body></html>",
            html_escape(&q)
        );
        return Some(reply("text/html; charset=utf-8", html));
    }
    if let Some(name) = path.strip_prefix("/web/") {
        let name = html_escape(name);
        let html = format!(
            "<!doctype html><html><head><title>Mock page: {name}</title>\
             <style>body {{ color: red }}</style><script>track();</script></head>\
             <body><nav>Home | About</nav><h1>{name}</h1>\
             <p>This page is about <strong>{name}</strong>. The answer is 42.</p>\
             <ul><li>first point</li><li>second point</li></ul></body></html>"
        );
        return Some(reply("text/html; charset=utf-8", html));
    }
    if path == "/search" {
        let q = query
            .unwrap_or("")
            .split('&')
            .find_map(|kv| kv.strip_prefix("q="))
            .map(|q| percent_decode(&q.replace('+', " ")))
            .unwrap_or_default();
        let body = json!({"query": q, "results": hits(&q, host)});
        return Some(reply("application/json", body.to_string()));
    }
    None
}

/// `/web/links`: links to `/web/next` and to `/web/forbidden` on `localhost` (the same mock
/// under another name, for domain rules), an image and a WebSocket from there too, a search
/// form, and 80 paragraphs, so the text takes several chunks and the page scrolls.
fn links_page(host: Option<&str>) -> String {
    let port = host
        .and_then(|h| h.rsplit_once(':'))
        .map_or("80", |(_, p)| p);
    let other = format!("http://localhost:{port}");
    let paragraphs: String = (1..=80)
        .map(|i| format!("<p>Paragraph {i} of the links page, about nothing in particular.</p>"))
        .collect();
    format!(
        "<!doctype html><html><head><title>Links page</title></head><body>\
         <h1>Links page</h1>\
         <p><a href=\"/web/next\">Next page</a> | <a href=\"{other}/web/forbidden\">Forbidden page</a></p>\
         <img alt=\"\" width=\"1\" height=\"1\" src=\"{other}/web/forbidden-image\">\
         <form action=\"/web/echo\" method=\"get\"><label>Query <input id=\"q\" name=\"q\" value=\"old\"></label> \
         <button type=\"submit\">Search</button></form>{paragraphs}\
         <script>try {{ new WebSocket(\"ws://localhost:{port}/web/forbidden-socket\"); }} catch (e) {{}}</script>\
         </body></html>"
    )
}

/// Two results on the mock's `/web/` about `q`, in SearXNG's fields.
fn hits(q: &str, host: Option<&str>) -> serde_json::Value {
    let base = format!("http://{}", host.unwrap_or("127.0.0.1"));
    let slug: String = q
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    json!([
        {"title": format!("{q}: the guide"), "url": format!("{base}/web/{slug}-guide"), "content": format!("Everything about {q}.")},
        {"title": format!("{q} on the forum"), "url": format!("{base}/web/{slug}-forum"), "content": "People discuss it."}
    ])
}

/// Kimi Code's search service (`POST …/coding/v1/search` with `{"text_query", "limit"}`):
/// the same two results in its fields, `snippet` beside the crawled `content`.
pub(crate) fn kimi_search(body: &serde_json::Value, host: Option<&str>) -> Response<Body> {
    let q = body["text_query"].as_str().unwrap_or_default();
    let results: Vec<_> = hits(q, host)
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| {
            json!({"site_name": "mock", "title": h["title"], "url": h["url"],
                   "snippet": h["content"], "content": "The whole crawled page.", "date": "2026-12-01"})
        })
        .collect();
    reply(
        "application/json",
        json!({"search_results": results}).to_string(),
    )
}

fn reply(content_type: &str, body: String) -> Response<Body> {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from(body))
        .expect("valid response")
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

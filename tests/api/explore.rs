//! `/explore` over HTTP: the page and its two files, their validators and policies, and the
//! size budget. The browser test (`browser.rs`) checks what a person sees.

use crate::support::TestApp;

#[tokio::test]
async fn the_page_and_its_files_are_cacheable_strict_and_small() {
    let app = TestApp::new().await;
    let page = app.get("/explore").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), "text/html; charset=utf-8");
    assert_eq!(page.header("cache-control"), "public, max-age=300");
    let csp = page.header("content-security-policy");
    assert!(csp.starts_with("default-src 'self';"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'") && csp.contains("object-src 'none'"), "{csp}");
    assert_eq!(page.header("x-content-type-options"), "nosniff");
    let html = std::str::from_utf8(&page.body).expect("utf8").to_string();

    // The files the page names, with their versions, and nothing from elsewhere.
    let mut total = page.body.len();
    for (name, kind) in [("app.js", "text/javascript; charset=utf-8"), ("app.css", "text/css; charset=utf-8")]
    {
        let start = html.find(&format!("/explore/{name}?v=")).unwrap_or_else(|| panic!("{name} is linked"));
        let url: String = html[start..].chars().take_while(|c| *c != '"').collect();
        let r = app.get(&url).await;
        assert_eq!(r.status, 200, "{url}");
        assert_eq!(r.header("content-type"), kind);
        assert_eq!(r.header("cache-control"), "public, max-age=86400");
        assert_eq!(&url[url.len() - 8..], &r.header("etag")[1..9], "the version is the file's ETag");
        total += r.body.len();
        assert_conditional(&app, &url).await;
        if name != "app.js" {
            continue;
        }
        // The script's modules, each named by its import with the set's version.
        let entry = std::str::from_utf8(&r.body).expect("utf8").to_string();
        let imports: Vec<&str> = entry.lines().filter(|l| l.starts_with("import ")).collect();
        assert!(imports.len() >= 5, "the entry imports the page's parts: {imports:?}");
        for line in imports {
            let (_, target) = line.split_once(" from \"./").expect("a relative import");
            let module = format!("/explore/{}", target.trim_end_matches("\";"));
            let m = app.get(&module).await;
            assert_eq!(m.status, 200, "{module}");
            assert_eq!(m.header("content-type"), kind, "{module}");
            assert_eq!(m.header("cache-control"), "public, max-age=86400", "{module}");
            total += m.body.len();
            assert_conditional(&app, &module).await;
        }
    }
    for tag in ["src=\"http", "href=\"http://", "src=\"//", "href=\"//"] {
        assert!(!html.contains(tag), "no third-party code: {tag}");
    }
    assert!(total < 100_000, "the page before data is {total} bytes");
    assert_conditional(&app, "/explore").await;
    // No tile service configured: the page's own coastline, and no Leaflet linked.
    assert!(
        !html.contains("leaflet") && !html.contains("tiles.js"),
        "the coastline page loads no map library"
    );
    let map = app.get("/explore/map.json").await;
    assert_eq!(map.status, 200);
    assert_eq!(map.json(), serde_json::json!({ "mode": "coastline" }));
    crate::support::assert_valid("ExplorerMap", &map.json());
    assert_eq!(app.get("/explore/tiles.png").await.status, 404);

    let head = app.call("HEAD", "/explore", &[]).await;
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(head.header("etag"), page.header("etag"));
    for method in ["POST", "PUT", "DELETE"] {
        let r = app.call(method, "/explore", &[]).await;
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow"), "GET, HEAD");
    }
    for missing in ["/explore/index.html", "/explore/app.js.map", "/explore/APP.JS", "/explore/"] {
        assert_eq!(app.get(missing).await.status, 404, "{missing}");
    }
    // `/`, `/v1` and `/legacy` are unchanged: `/` still redirects to `/v1`.
    assert_eq!(app.get("/").await.header("location"), "/v1");
    assert_eq!(app.source_requests(), 0, "the page itself needs no prices");
}

/// A matching `If-None-Match` gives 304 with the same validator; another tag gives 200.
async fn assert_conditional(app: &TestApp, url: &str) {
    let etag = app.get(url).await.header("etag").to_string();
    let same = app.call("GET", url, &[("if-none-match", &etag)]).await;
    assert_eq!(same.status, 304, "{url}");
    assert!(same.body.is_empty());
    assert_eq!(same.header("etag"), etag);
    let other = app.call("GET", url, &[("if-none-match", "\"other\"")]).await;
    assert_eq!(other.status, 200, "{url}");
}

/// The page's own files go compressed to a browser that takes brotli or gzip, each coding with
/// its own strong ETag (a cache never mixes them), and plain to a client that asks for none.
#[tokio::test]
async fn the_page_and_its_files_are_sent_compressed() {
    use std::io::Read;
    let app = TestApp::new().await;
    let html = String::from_utf8(app.get("/explore").await.body.to_vec()).expect("utf8");
    let script = html.find("/explore/app.js?v=").expect("script linked");
    let script: String = html[script..].chars().take_while(|c| *c != '"').collect();
    for url in ["/explore", script.as_str(), "/explore/app.css"] {
        let plain = app.get(url).await;
        assert!(plain.header("content-encoding").is_empty(), "{url}: no coding unless asked");
        assert_eq!(plain.header("vary"), "Accept-Encoding", "{url}");

        let br = app.call("GET", url, &[("accept-encoding", "gzip, deflate, br")]).await;
        assert_eq!(br.status, 200, "{url}");
        assert_eq!(br.header("content-encoding"), "br", "{url}");
        let mut unpacked = Vec::new();
        brotli::Decompressor::new(&br.body[..], 4096).read_to_end(&mut unpacked).expect("brotli");
        assert_eq!(unpacked, plain.body.to_vec(), "{url}: the same bytes");
        assert!(
            br.body.len() * 2 < plain.body.len(),
            "{url}: {} of {} bytes",
            br.body.len(),
            plain.body.len()
        );
        assert_ne!(br.header("etag"), plain.header("etag"), "{url}: one ETag per coding");
        let revalidated =
            app.call("GET", url, &[("accept-encoding", "br"), ("if-none-match", br.header("etag"))]).await;
        assert_eq!(revalidated.status, 304, "{url}");

        let gz = app.call("GET", url, &[("accept-encoding", "gzip")]).await;
        assert_eq!(gz.header("content-encoding"), "gzip", "{url}");
        let mut unzipped = Vec::new();
        flate2::read::GzDecoder::new(&gz.body[..]).read_to_end(&mut unzipped).expect("gzip");
        assert_eq!(unzipped, plain.body.to_vec(), "{url}");
    }
}

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
    }
    for tag in ["src=\"http", "href=\"http://", "src=\"//", "href=\"//"] {
        assert!(!html.contains(tag), "no third-party code: {tag}");
    }
    assert!(total < 100_000, "the page before data is {total} bytes");
    assert_conditional(&app, "/explore").await;

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

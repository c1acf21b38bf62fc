//! The explorer's files as this binary serves them: the page for the deployment's base map,
//! its script and style sheet, Leaflet and the tile layer (loaded only with a street map), and
//! `map.json`. The page names each file with a version taken from its ETag, so a new binary's
//! page never runs with an old script from a cache, and the files can be cached for a day.
//! The script is the browser's own modules (`app.js` imports the others), served as written:
//! each import names its module with the version of the whole set, so one release's modules
//! never meet another's.

use std::collections::HashMap;
use std::sync::LazyLock;

use axum::http::{HeaderName, HeaderValue, header};

use super::street_map::BaseMap;
use crate::render::asset::Asset;

const HTML: &str = include_str!("../../assets/explore/index.html");
/// The page's modules, the entry first.
const MODULES: [(&str, &str); 7] = [
    ("app.js", include_str!("../../assets/explore/app.js")),
    ("core.js", include_str!("../../assets/explore/core.js")),
    ("stream.js", include_str!("../../assets/explore/stream.js")),
    ("map.js", include_str!("../../assets/explore/map.js")),
    ("list.js", include_str!("../../assets/explore/list.js")),
    ("card.js", include_str!("../../assets/explore/card.js")),
    ("market.js", include_str!("../../assets/explore/market.js")),
];
const STYLE: &str = include_str!("../../assets/explore/app.css");
const TILES: &str = include_str!("../../assets/explore/tiles.js");
const LEAFLET: &str = include_str!("../../assets/explore/leaflet/leaflet.js");
const LEAFLET_STYLE: &str = include_str!("../../assets/explore/leaflet/leaflet.css");

static FILES: LazyLock<HashMap<&'static str, Asset>> = LazyLock::new(|| {
    let file = |body: &str, kind| Asset::new(body, kind);
    let set = modules_version();
    let modules = MODULES.map(|(name, source)| (name, Asset::new(served_module(source, &set), SCRIPT_TYPE)));
    let mut files = HashMap::from(modules);
    files.extend([
        ("app.css", file(&served_style(STYLE), "text/css; charset=utf-8")),
        ("tiles.js", Asset::new(served_script(TILES), SCRIPT_TYPE)),
        ("leaflet.js", file(LEAFLET, SCRIPT_TYPE)),
        ("leaflet.css", file(LEAFLET_STYLE, "text/css; charset=utf-8")),
    ]);
    files
});

const SCRIPT_TYPE: &str = "text/javascript; charset=utf-8";

/// The version every module's imports carry: of all the modules' sources together, so a
/// change to any one gives every import (and so the entry's own version) a new URL.
fn modules_version() -> String {
    let all: String = MODULES.iter().map(|(_, source)| *source).collect();
    let mut digest = wafuel_domain::key::sha256_hex(all.as_bytes());
    digest.truncate(8);
    digest
}

/// A module as browsers get it: [`served_script`], each `from "./x.js"` naming the set's
/// version (`./x.js?v=…`), so a module is fetched again exactly when the set changed.
fn served_module(source: &str, version: &str) -> String {
    let served = served_script(source);
    let mut out = String::with_capacity(served.len());
    for line in served.lines() {
        match line.strip_suffix(".js\";").filter(|_| line.starts_with("import ")) {
            Some(head) => out.push_str(&format!("{head}.js?v={version}\";")),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

fn version(name: &str) -> &'static str {
    FILES.get(name).map(Asset::version).unwrap_or_default()
}

/// The explorer as this deployment serves it: the page for its base map, `map.json` saying
/// which, and the headers of both and of every file.
pub struct Explorer {
    pub(super) page: Asset,
    pub(super) map: Asset,
    pub(super) headers: Vec<(HeaderName, HeaderValue)>,
}

impl Explorer {
    pub fn new(base: &BaseMap) -> Self {
        // With tiles, Leaflet and the page's tile layer load before the page's script, which
        // then draws in their projection; without, the page is the coastline page, unchanged.
        let map = match base {
            BaseMap::Coastline => String::new(),
            BaseMap::Raster(_) | BaseMap::Archive(_) => format!(
                "<link rel=\"stylesheet\" href=\"/explore/leaflet.css?v={}\">\n\
                 <script src=\"/explore/leaflet.js?v={}\" defer></script>\n\
                 <script src=\"/explore/tiles.js?v={}\" defer></script>\n",
                version("leaflet.css"),
                version("leaflet.js"),
                version("tiles.js"),
            ),
        };
        let html = HTML
            .replace("{{map}}\n", &map)
            .replace("{{app.js}}", version("app.js"))
            .replace("{{app.css}}", version("app.css"));
        let described = serde_json::to_vec(&base.describe()).unwrap_or_default();
        Self {
            page: Asset::new(html, "text/html; charset=utf-8"),
            map: Asset::new(described, "application/json"),
            headers: page_headers(base),
        }
    }
}

impl Default for Explorer {
    fn default() -> Self {
        Self::new(&BaseMap::Coastline)
    }
}

/// The page may ask for the visitor's location (for "cheapest near me"), nothing else.
const PERMISSIONS_POLICY: &str = "geolocation=(self), camera=(), microphone=()";

/// The headers every explorer file carries: the base map's policies, and the permissions.
fn page_headers(base: &BaseMap) -> Vec<(HeaderName, HeaderValue)> {
    // The policy is built from checked parts (a tile origin of visible ASCII without `;`);
    // were it ever refused as a header, the page would get the strictest one instead.
    let policy = HeaderValue::from_str(&base.content_security_policy())
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'none'"));
    vec![
        (header::CONTENT_SECURITY_POLICY, policy),
        (HeaderName::from_static("permissions-policy"), HeaderValue::from_static(PERMISSIONS_POLICY)),
        (header::REFERRER_POLICY, HeaderValue::from_static(base.referrer_policy())),
    ]
}

/// The script as browsers get it: without its comment lines, indentation and blank lines,
/// which are for its readers here and are a sixth of its bytes. Safe for this script because
/// no string or template in it spans lines (a test holds that), so every line's leading
/// blanks and every line that starts with `//` are outside any literal.
fn served_script(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    for line in source.lines().map(str::trim_start) {
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The style sheet as browsers get it: without its comments, indentation and blank lines, for
/// the same reason as the script. Safe because no string in it holds `/*` (a test holds that).
fn served_style(source: &str) -> String {
    let mut uncommented = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(open) = rest.find("/*") {
        uncommented.push_str(&rest[..open]);
        rest = rest[open..].find("*/").map_or("", |close| &rest[open + close + 2..]);
    }
    uncommented.push_str(rest);
    uncommented.lines().map(str::trim).filter(|l| !l.is_empty()).map(|l| format!("{l}\n")).collect()
}

/// A built-in file by its name under `/explore/`.
pub(super) fn file(name: &str) -> Option<&'static Asset> {
    FILES.get(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_names_its_files_by_version() {
        let page = Explorer::default();
        let html = std::str::from_utf8(&page.page.repr.identity).expect("utf8");
        for name in ["app.js", "app.css"] {
            let version = FILES[name].version();
            assert_eq!(version.len(), 8);
            assert!(html.contains(&format!("/explore/{name}?v={version}")), "{name}");
        }
        assert!(!html.contains("{{"), "every placeholder is filled");
    }

    #[test]
    fn only_a_tile_map_loads_leaflet_before_the_page_script() {
        let coast = Explorer::default();
        let coast = std::str::from_utf8(&coast.page.repr.identity).expect("utf8");
        assert!(!coast.contains("leaflet") && !coast.contains("tiles.js"), "the coastline page is as it was");
        let tiles =
            super::super::street_map::RasterTiles::new("https://t.example.org/{z}/{x}/{y}.png", "me", 19)
                .expect("tiles");
        let tiled = Explorer::new(&BaseMap::Raster(tiles));
        let html = std::str::from_utf8(&tiled.page.repr.identity).expect("utf8");
        let at = |name: &str| html.find(&format!("/explore/{name}?v={}", FILES[name].version())).expect(name);
        assert!(at("leaflet.js") < at("tiles.js") && at("tiles.js") < at("app.js"), "{html}");
        assert!(at("leaflet.css") < at("leaflet.js"));
        let described: serde_json::Value = serde_json::from_slice(&tiled.map.repr.identity).expect("json");
        assert_eq!(described["mode"], "raster");
    }

    #[test]
    fn the_served_script_drops_only_what_no_literal_holds() {
        // No template literal spans lines: each line opens and closes its own.
        for (name, source) in MODULES.iter().chain([&("tiles.js", TILES)]) {
            for (n, line) in source.lines().enumerate() {
                assert_eq!(line.matches('`').count() % 2, 0, "{name} line {}: a template spans lines", n + 1);
            }
        }
        let served = served_script("  const a = 1; // kept\n\n    // a comment\n  f(`x // y`);\n");
        assert_eq!(served, "const a = 1; // kept\nf(`x // y`);\n");
        let script = std::str::from_utf8(&FILES["app.js"].repr.identity).expect("utf8");
        assert!(script.contains("wireMap();") && script.len() < MODULES[0].1.len() * 9 / 10);
    }

    #[test]
    fn every_import_names_a_served_module_at_the_set_version() {
        let set = modules_version();
        let mut imported = std::collections::BTreeSet::new();
        for (name, _) in MODULES {
            let served = std::str::from_utf8(&FILES[name].repr.identity).expect("utf8");
            for line in served.lines().filter(|l| l.starts_with("import ")) {
                let (_, target) = line.split_once(" from \"./").expect("a relative import");
                let (file, version) = target.trim_end_matches("\";").split_once("?v=").expect("versioned");
                assert_eq!(version, set, "{name}: {line}");
                assert!(
                    MODULES.iter().any(|(m, _)| *m == file),
                    "{name} imports {file}, which is not served"
                );
                imported.insert(file);
            }
        }
        // Every module but the entry is reached from it.
        assert_eq!(imported.len(), MODULES.len() - 1, "{imported:?}");
        assert!(!imported.contains("app.js"), "nothing imports the entry");
    }

    #[test]
    fn the_served_style_drops_only_comments_and_blanks() {
        assert!(!STYLE.contains("\"/*") && !STYLE.contains("'/*"), "no string holds a comment opener");
        let served = served_style("/* a\n   b */\n.a {\n  color: red; /* why */\n}\n\n  .b { margin: 0 }\n");
        assert_eq!(served, ".a {\ncolor: red;\n}\n.b { margin: 0 }\n");
        let sheet = std::str::from_utf8(&FILES["app.css"].repr.identity).expect("utf8");
        assert_eq!(sheet.matches('{').count(), STYLE.matches('{').count(), "every rule kept");
        assert!(!sheet.contains("/*") && sheet.len() < STYLE.len());
    }

    #[test]
    fn no_hand_written_module_is_over_800_lines() {
        for (name, source) in MODULES.iter().chain([&("tiles.js", TILES)]) {
            assert!(source.lines().count() <= 800, "{name}: {} lines", source.lines().count());
        }
    }

    #[test]
    fn no_inline_code_that_the_policy_would_block() {
        let page = Explorer::default();
        let html = std::str::from_utf8(&page.page.repr.identity).expect("utf8");
        // Scripts only by src, styles only by link, no inline handlers or style attributes.
        assert!(!html.contains("<script>") && !html.contains("<style"));
        assert!(!html.contains(" style=") && !html.contains(" onclick="));
        for (name, source) in MODULES {
            assert!(!source.contains("innerHTML"), "{name}: the script builds nodes, never HTML text");
            assert!(!source.contains("eval(") && !source.contains("new Function"), "{name}");
        }
    }
}

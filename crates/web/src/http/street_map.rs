//! The explorer's base map. By default the page draws its own WA coastline; a deployment may
//! name a raster tile service instead (`--map-tiles`), drawn by Leaflet under the page's own
//! station layer. The page's security headers follow the choice: its images may come from the
//! tile service's origin, and a tile request carries this site's origin as its `Referer`
//! (OpenStreetMap's tile policy asks for a valid one), which the coastline page never sends.

/// The highest zoom a tile service is asked for unless told (OpenStreetMap's standard layer).
pub const DEFAULT_MAX_ZOOM: u8 = 19;
/// Web Mercator tile pyramids end here; a larger `maxZoom` is no real service.
const MAX_ZOOM_LIMIT: u8 = 24;

/// Which base map the explorer draws.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BaseMap {
    /// The page's own coastline: nothing from outside this origin.
    #[default]
    Coastline,
    Raster(RasterTiles),
    /// The deployment's own PMTiles archive, served at `/map/tiles/{z}/{x}/{y}`.
    Archive(ArchiveTiles),
}

/// What the page needs to know of the archive: its tiles' format, whose map it is, its zooms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveTiles {
    pub format: &'static str,
    pub attribution: String,
    pub min_zoom: u8,
    pub max_zoom: u8,
}

impl ArchiveTiles {
    pub fn new(
        archive: &wafuel_service::map_tiles::MapArchive,
        attribution: &str,
    ) -> Result<Self, MapConfigError> {
        let attribution = checked_attribution(attribution)?;
        let (min_zoom, max_zoom) = (archive.min_zoom(), archive.max_zoom());
        Ok(Self { format: archive.kind().format(), attribution, min_zoom, max_zoom })
    }
}

fn checked_attribution(text: &str) -> Result<String, MapConfigError> {
    let text = text.trim();
    if text.is_empty() || text.chars().count() > 300 || text.contains(['\r', '\n']) {
        return Err(MapConfigError::Attribution);
    }
    Ok(text.to_string())
}

/// A raster tile service in the `{z}/{x}/{y}` form every tile server and Leaflet share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RasterTiles {
    template: String,
    attribution: String,
    max_zoom: u8,
    /// The CSP source its tiles come from: scheme, host (`{s}.` as `*.`) and port.
    origin: String,
}

/// Why a tile configuration is refused at start (said with the flag's name).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MapConfigError {
    #[error(
        "--map-tiles must be an http or https URL with {{z}}, {{x}} and {{y}}, e.g. https://tile.openstreetmap.org/{{z}}/{{x}}/{{y}}.png"
    )]
    Template,
    #[error(
        "--map-attribution must say whose map it is (e.g. '© OpenStreetMap contributors'), at most 300 characters"
    )]
    Attribution,
    #[error("--map-max-zoom must be from 1 to 24")]
    MaxZoom,
}

impl RasterTiles {
    pub fn new(template: &str, attribution: &str, max_zoom: u8) -> Result<Self, MapConfigError> {
        let attribution = checked_attribution(attribution)?;
        if !(1..=MAX_ZOOM_LIMIT).contains(&max_zoom) {
            return Err(MapConfigError::MaxZoom);
        }
        let origin = tile_origin(template).ok_or(MapConfigError::Template)?;
        Ok(Self { template: template.to_string(), attribution, max_zoom, origin })
    }
}

/// The CSP source of a tile template's origin, or `None` when it is no tile URL: http(s),
/// a host, `{z}`, `{x}` and `{y}` in its path, nothing the policy header could not carry.
fn tile_origin(template: &str) -> Option<String> {
    if !["{z}", "{x}", "{y}"].iter().all(|p| template.contains(p)) {
        return None;
    }
    // `{s}` is Leaflet's subdomain letter (a, b, c): any one label there.
    let parsed = url::Url::parse(&template.replace("{s}", "s-wildcard")).ok()?;
    if !matches!(parsed.scheme(), "https" | "http") || !template.is_ascii() {
        return None;
    }
    let host = parsed.host_str()?.replace("s-wildcard", "*");
    if host.contains('*') && !host.starts_with("*.") {
        return None;
    }
    let port = parsed.port().map(|p| format!(":{p}")).unwrap_or_default();
    let origin = format!("{}://{host}{port}", parsed.scheme());
    origin.chars().all(|c| c.is_ascii_graphic() && c != ';' && c != ',').then_some(origin)
}

impl BaseMap {
    /// The page's Content-Security-Policy: only this origin's files and API (and, with tiles,
    /// the tile service's images); no inline code, framing, plugins or `<base>`.
    pub fn content_security_policy(&self) -> String {
        let images = match self {
            BaseMap::Coastline => String::new(),
            BaseMap::Archive(_) => "; img-src 'self' data:".to_string(),
            // `data:`: Leaflet blanks a tile it drops with an empty inline image.
            BaseMap::Raster(tiles) => format!("; img-src 'self' data: {}", tiles.origin),
        };
        format!(
            "default-src 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'; form-action 'self'{images}"
        )
    }

    /// No `Referer` from the coastline page; with tiles, this site's origin only (never a
    /// path or the hash's station), as a tile service asks.
    pub fn referrer_policy(&self) -> &'static str {
        match self {
            BaseMap::Coastline | BaseMap::Archive(_) => "no-referrer",
            BaseMap::Raster(_) => "strict-origin-when-cross-origin",
        }
    }

    /// `/explore/map.json`: which base map the page draws, and from where.
    pub fn describe(&self) -> serde_json::Value {
        match self {
            BaseMap::Coastline => serde_json::json!({ "mode": "coastline" }),
            BaseMap::Raster(t) => serde_json::json!({
                "mode": "raster",
                "tiles": t.template,
                "attribution": t.attribution,
                "maxZoom": t.max_zoom,
            }),
            BaseMap::Archive(a) => serde_json::json!({
                "mode": "pmtiles",
                "format": a.format,
                "tiles": "/map/tiles/{z}/{x}/{y}",
                "attribution": a.attribution,
                "minZoom": a.min_zoom,
                "maxZoom": a.max_zoom,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OSM: &str = "https://tile.openstreetmap.org/{z}/{x}/{y}.png";

    #[test]
    fn a_tile_service_is_let_in_by_its_origin_only() {
        let osm = BaseMap::Raster(RasterTiles::new(OSM, "© OpenStreetMap contributors", 19).expect("valid"));
        assert!(
            osm.content_security_policy().ends_with("; img-src 'self' data: https://tile.openstreetmap.org")
        );
        assert_eq!(osm.referrer_policy(), "strict-origin-when-cross-origin");
        let lettered = RasterTiles::new("https://{s}.tile.example.org:8443/{z}/{x}/{y}@2x.png", "x", 18)
            .expect("subdomains");
        assert_eq!(lettered.origin, "https://*.tile.example.org:8443");
        let coast = BaseMap::Coastline;
        assert!(!coast.content_security_policy().contains("img-src"));
        assert_eq!(coast.referrer_policy(), "no-referrer");
        assert_eq!(coast.describe(), serde_json::json!({ "mode": "coastline" }));
    }

    #[test]
    fn what_is_no_tile_service_is_refused_with_its_flag() {
        for bad in [
            "https://tile.openstreetmap.org/{z}/{x}.png",
            "ftp://tiles.example.org/{z}/{x}/{y}.png",
            "/tiles/{z}/{x}/{y}.png",
            "https://tiles.example.org;script-src *;/{z}/{x}/{y}.png",
            "https://a{s}b.example.org/{z}/{x}/{y}.png",
        ] {
            assert_eq!(RasterTiles::new(bad, "me", 19), Err(MapConfigError::Template), "{bad}");
        }
        assert_eq!(RasterTiles::new(OSM, " ", 19), Err(MapConfigError::Attribution));
        assert_eq!(RasterTiles::new(OSM, "a\nb", 19), Err(MapConfigError::Attribution));
        assert_eq!(RasterTiles::new(OSM, "me", 0), Err(MapConfigError::MaxZoom));
        assert_eq!(RasterTiles::new(OSM, "me", 25), Err(MapConfigError::MaxZoom));
    }
}

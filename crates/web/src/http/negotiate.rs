//! `Accept`, `Accept-Encoding` and `Content-Type` rules (docs/api.md "Content negotiation
//! (`/v1`)"), checked before any cache or source work, with the one `q` parser they share.
//! Pure.

use crate::render::representation::Coding;

const JSON_API: &str = "application/vnd.api+json";

/// One media range of an `Accept` header.
#[derive(Debug, PartialEq)]
struct MediaRange {
    essence: String,
    /// Weight in thousandths (RFC 9110 `qvalue`).
    q: u16,
    /// Parameter names other than `q`, lower-case.
    params: Vec<String>,
}

/// Split on a separator outside double-quoted strings.
fn split_unquoted(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// The media ranges of an `Accept` header, or `None` when it is absent or empty (anything
/// goes).
fn ranges(accept: Option<&str>) -> Option<Vec<MediaRange>> {
    let accept = accept.map(str::trim).filter(|a| !a.is_empty())?;
    Some(split_unquoted(accept, ',').into_iter().filter_map(parse_range).collect())
}

fn parse_range(text: &str) -> Option<MediaRange> {
    let mut pieces = split_unquoted(text, ';').into_iter();
    let essence = pieces.next()?.trim().to_ascii_lowercase();
    if essence.is_empty() {
        return None;
    }
    let mut q = 1000;
    let mut params = Vec::new();
    for p in pieces {
        let (name, value) = p.split_once('=').unwrap_or((p, ""));
        let name = name.trim().to_ascii_lowercase();
        if name == "q" {
            q = parse_qvalue(value.trim()).unwrap_or(0);
        } else if !name.is_empty() {
            params.push(name);
        }
    }
    Some(MediaRange { essence, q, params })
}

/// Whether an `Accept` header permits the JSON:API media type as we serve it.
pub fn accepts_json_api(accept: Option<&str>) -> bool {
    let Some(ranges) = ranges(accept) else { return true };
    // Listed explicitly: only a clean JSON:API range (profile at most) counts.
    quality(&ranges, JSON_API, clean_json_api) > 0
}

fn clean_json_api(range: &MediaRange) -> bool {
    range.params.iter().all(|p| p == "profile")
}

/// Whether an `Accept` header permits `text/event-stream` (`/v1/events`): absent or empty,
/// the exact type, else `text/*`, else `*/*`, with q above 0.
pub fn accepts_event_stream(accept: Option<&str>) -> bool {
    let Some(ranges) = ranges(accept) else { return true };
    quality(&ranges, "text/event-stream", |_| true) > 0
}

/// The q `ranges` give `essence`: its exact ranges decide (those `clean` allows), else
/// `type/*`, else `*/*`; the highest q among the deciding ranges, 0 when none matches.
fn quality(ranges: &[MediaRange], essence: &str, clean: impl Fn(&MediaRange) -> bool) -> u16 {
    let best = |matches: &dyn Fn(&MediaRange) -> bool| {
        let mut found = ranges.iter().filter(|r| matches(r)).peekable();
        found.peek().is_some().then(|| found.map(|r| r.q).max().unwrap_or(0))
    };
    if ranges.iter().any(|r| r.essence == essence) {
        return best(&|r| r.essence == essence && clean(r)).unwrap_or(0);
    }
    // `type/*` compared without building it: this runs on every `/v1` request.
    let kind = essence.split('/').next().unwrap_or("");
    best(&|r| r.essence.strip_suffix("/*") == Some(kind))
        .or_else(|| best(&|r| r.essence == "*/*"))
        .unwrap_or(0)
}

/// The representations of the station API's routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Media {
    JsonApi,
    GeoJson,
    Csv,
}

impl Media {
    pub fn essence(self) -> &'static str {
        match self {
            Media::JsonApi => JSON_API,
            Media::GeoJson => "application/geo+json",
            Media::Csv => "text/csv",
        }
    }

    /// The `Content-Type` served.
    pub fn content_type(self) -> &'static str {
        match self {
            Media::JsonApi => JSON_API,
            Media::GeoJson => "application/geo+json",
            Media::Csv => "text/csv; charset=utf-8; header=present",
        }
    }
}

/// The best of `offered` (in order of preference) that `Accept` permits, or `None` (406).
/// An absent or empty header takes the first. For each offer, an exact range decides (for
/// JSON:API only a clean one, `profile` at most), else `type/*`, else `*/*`; the highest
/// q above 0 wins, ties going to the earlier offer.
pub fn negotiate_media(accept: Option<&str>, offered: &[Media]) -> Option<Media> {
    let Some(ranges) = ranges(accept) else { return offered.first().copied() };
    let mut best: Option<(Media, u16)> = None;
    for &media in offered {
        let q = quality(&ranges, media.essence(), |r| media != Media::JsonApi || clean_json_api(r));
        if q > 0 && best.is_none_or(|(_, bq)| q > bq) {
            best = Some((media, q));
        }
    }
    best.map(|(m, _)| m)
}

/// Whether a request `Content-Type` is JSON:API with parameters other than `profile` (415).
pub fn unsupported_content_type(content_type: Option<&str>) -> bool {
    let Some(ct) = content_type else { return false };
    let mut pieces = split_unquoted(ct, ';').into_iter();
    let essence = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
    essence == JSON_API
        && pieces.any(|p| {
            let name = p.split('=').next().unwrap_or("").trim().to_ascii_lowercase();
            !name.is_empty() && name != "profile"
        })
}

/// A weight (`q`) as RFC 9110 writes it — `0` to `1` with at most three decimals — in
/// thousandths; `None` for any other text (`1.0000001`, `0.5e1`, `-0`), which the callers
/// read as "not acceptable" rather than guess.
pub fn parse_qvalue(text: &str) -> Option<u16> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let thousandths =
        fraction.bytes().enumerate().fold(0u16, |acc, (i, b)| acc + u16::from(b - b'0') * [100, 10, 1][i]);
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

/// The weight of one `;`-separated element's parameters: its `q`, 1000 when it has none,
/// 0 when its `q` is not one. Not [`parse_range`]: `Accept-Encoding` is read on every
/// request, the front cache's hits included, and this reads it without allocating.
fn element_weight<'a>(params: impl Iterator<Item = &'a str>) -> u16 {
    for p in params {
        let (name, value) = p.split_once('=').unwrap_or((p, ""));
        if name.trim().eq_ignore_ascii_case("q") {
            return parse_qvalue(value.trim()).unwrap_or(0);
        }
    }
    1000
}

/// Choose the coding for an `Accept-Encoding` header: the accepted coding of highest weight
/// among br, gzip and identity (ties in that order). A coding the header does not name takes
/// `*`'s weight; identity is acceptable unless `identity;q=0` (or `*;q=0` without identity)
/// excludes it, and br and gzip are then acceptable unless named with q=0, as the client
/// asked for a coding. When every coding is excluded, identity is sent (RFC 9110 12.5.3).
pub fn negotiate_encoding(header: Option<&str>) -> Coding {
    let Some(header) = header else { return Coding::Identity };
    let (mut br, mut gzip, mut identity, mut star) = (None, None, None, None);
    for part in header.split(',') {
        let mut pieces = part.split(';');
        let name = pieces.next().unwrap_or("").trim();
        let weight = element_weight(pieces);
        let slot = match name {
            n if n.eq_ignore_ascii_case("br") => &mut br,
            n if n.eq_ignore_ascii_case("gzip") || n.eq_ignore_ascii_case("x-gzip") => &mut gzip,
            n if n.eq_ignore_ascii_case("identity") => &mut identity,
            "*" => &mut star,
            _ => continue,
        };
        *slot = Some(weight);
    }
    let identity = identity.or(star).unwrap_or(1);
    // With identity refused, a coding the header leaves unnamed is what the client wants.
    let implied = if identity == 0 { 1 } else { 0 };
    let (br, gzip) = (br.or(star).unwrap_or(implied), gzip.or(star).unwrap_or(implied));
    let best = br.max(gzip).max(identity);
    if best == 0 {
        Coding::Identity
    } else if br == best {
        Coding::Br
    } else if gzip == best {
        Coding::Gzip
    } else {
        Coding::Identity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_stream_acceptance() {
        for ok in [
            None,
            Some(""),
            Some("*/*"),
            Some("text/*"),
            Some("text/event-stream"),
            Some("application/json;q=0.9, */*;q=0.1"),
        ] {
            assert!(accepts_event_stream(ok), "{ok:?}");
        }
        for refused in [
            Some("application/json"),
            Some("text/event-stream;q=0, */*"),
            Some("text/html"),
            Some("text/*;q=0"),
        ] {
            assert!(!accepts_event_stream(refused), "{refused:?}");
        }
    }

    #[test]
    fn accept_vectors() {
        let cases: [(Option<&str>, bool); 13] = [
            (None, true),
            (Some("application/vnd.api+json"), true),
            (Some("*/*"), true),
            (Some("application/*"), true),
            (Some("application/vnd.api+json;profile=\"https://example.com/p,a;b\""), true),
            (
                Some(
                    "application/vnd.api+json;ext=\"https://example.com/x\", application/vnd.api+json;q=0.9",
                ),
                true,
            ),
            (Some("application/vnd.api+json;charset=utf-8, application/vnd.api+json"), true),
            (Some("application/vnd.api+json; charset=utf-8"), false),
            (Some("application/vnd.api+json; ext=\"https://example.com/unknown\""), false),
            (Some("application/vnd.api+json;q=0, */*;q=1"), false),
            (Some("application/*;q=0, */*;q=1"), false),
            (Some("*/*;q=1, application/*;q=0"), false),
            (Some("application/json"), false),
        ];
        for (accept, ok) in cases {
            assert_eq!(accepts_json_api(accept), ok, "{accept:?}");
        }
        assert!(accepts_json_api(Some("text/html, application/xhtml+xml, */*;q=0.8")));
        assert!(accepts_json_api(Some("APPLICATION/VND.API+JSON")));
    }

    #[test]
    fn media_vectors() {
        use Media::*;
        let all = [JsonApi, GeoJson, Csv];
        let cases: [(Option<&str>, Option<Media>); 11] = [
            (None, Some(JsonApi)),
            (Some(""), Some(JsonApi)),
            (Some("*/*"), Some(JsonApi)),
            (Some("application/geo+json"), Some(GeoJson)),
            (Some("text/csv"), Some(Csv)),
            (Some("text/*"), Some(Csv)),
            (Some("text/csv;q=0.5, application/geo+json;q=0.9"), Some(GeoJson)),
            (Some("application/vnd.api+json;q=0, */*"), Some(GeoJson)),
            (Some("application/vnd.api+json; charset=utf-8"), None),
            (Some("text/html"), None),
            (Some("application/*;q=0, text/csv;q=0.1"), Some(Csv)),
        ];
        for (accept, expected) in cases {
            assert_eq!(negotiate_media(accept, &all), expected, "{accept:?}");
        }
        assert_eq!(negotiate_media(Some("text/csv"), &[JsonApi]), None);
    }

    #[test]
    fn content_type_vectors() {
        assert!(unsupported_content_type(Some("application/vnd.api+json; charset=utf-8")));
        assert!(!unsupported_content_type(Some("application/vnd.api+json")));
        assert!(!unsupported_content_type(Some("application/vnd.api+json; profile=\"x\"")));
        assert!(!unsupported_content_type(Some("text/plain")));
        assert!(!unsupported_content_type(None));
        assert!(unsupported_content_type(Some("application/vnd.api+json; q=1")));
    }

    #[test]
    fn accept_encoding() {
        assert_eq!(negotiate_encoding(None), Coding::Identity);
        assert_eq!(negotiate_encoding(Some("gzip, deflate, br")), Coding::Br);
        assert_eq!(negotiate_encoding(Some("gzip")), Coding::Gzip);
        assert_eq!(negotiate_encoding(Some("br;q=0, gzip;q=0.5")), Coding::Gzip);
        assert_eq!(negotiate_encoding(Some("identity")), Coding::Identity);
        assert_eq!(negotiate_encoding(Some("*")), Coding::Br);
        assert_eq!(negotiate_encoding(Some("*;q=0, gzip")), Coding::Gzip);
        // RFC 9110 weights: at most three decimals, and the higher weight wins.
        assert_eq!(negotiate_encoding(Some("gzip;q=1, br;q=0.999")), Coding::Gzip);
        assert_eq!(negotiate_encoding(Some("br;q=1.0000001, gzip;q=0.5")), Coding::Gzip);
        assert_eq!(negotiate_encoding(Some("br;q=0.5, gzip;q=0.5")), Coding::Br);
        // Identity refused: a coding is sent, unless every one is refused too.
        assert_eq!(negotiate_encoding(Some("identity;q=0")), Coding::Br);
        assert_eq!(negotiate_encoding(Some("br;q=0, identity;q=0")), Coding::Gzip);
        assert_eq!(negotiate_encoding(Some("*;q=0")), Coding::Identity);
        assert_eq!(negotiate_encoding(Some("identity, br;q=0.5")), Coding::Identity);
    }

    #[test]
    fn qvalues_follow_rfc_9110() {
        for (text, q) in
            [("1", 1000), ("1.", 1000), ("1.000", 1000), ("0", 0), ("0.5", 500), ("0.001", 1), ("0.25", 250)]
        {
            assert_eq!(parse_qvalue(text), Some(q), "{text}");
        }
        for bad in ["1.0000001", "1.001", "2", "-0", "0.1234", ".5", "0.5e1", "", "q", "01"] {
            assert_eq!(parse_qvalue(bad), None, "{bad}");
        }
    }
}

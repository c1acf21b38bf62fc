//! The simulated origin's answer: select stations for a query the way FuelWatch does, and
//! write them as its RSS, byte for byte in its shape.

use std::fmt::Write as _;

use jiff::Timestamp;
use jiff::civil::Date;

use super::dataset::{Dataset, SimStation, title_case};
use super::faults::FaultMode;
use wafuel_domain::time::{Day, perth_now, tomorrow_published};

/// Stations within this distance of a suburb count as its neighbours (`Surrounding=yes`);
/// the real 2022 Ellenbrook answer reaches Bullsbrook, 13 km from the suburb's centre.
pub const SURROUNDING_KM: f64 = 15.0;

/// The origin's query parameters. Unknown parameters are ignored; a value the origin cannot
/// read selects nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct SimQuery {
    pub product: u8,
    pub brand: Option<u8>,
    pub region: Option<u8>,
    pub suburb: Option<String>,
    pub surrounding: bool,
    pub day: Day,
    /// A parameter had a value the origin cannot read: the feed is empty.
    pub unreadable: bool,
}

impl SimQuery {
    pub fn parse(query: &str) -> Self {
        let mut q = SimQuery {
            product: 1,
            brand: None,
            region: None,
            suburb: None,
            surrounding: true,
            day: Day::Today,
            unreadable: false,
        };
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "product" => match value.parse() {
                    Ok(p) => q.product = p,
                    Err(_) => q.unreadable = true,
                },
                "brand" => q.brand = parse_or_flag(value, &mut q.unreadable),
                "region" => q.region = parse_or_flag(value, &mut q.unreadable),
                "suburb" => q.suburb = Some(value.split_whitespace().collect::<Vec<_>>().join(" ")),
                "surrounding" => q.surrounding = !value.eq_ignore_ascii_case("no"),
                "day" => match Day::from_word(value) {
                    Some(d) => q.day = d,
                    None => q.unreadable = true,
                },
                _ => {}
            }
        }
        q
    }

    /// The product this request asks for, if readable (for per-product faults).
    pub fn product_hint(query: &str) -> Option<u8> {
        url::form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| k.eq_ignore_ascii_case("product"))
            .map_or(Some(1), |(_, v)| v.trim().parse().ok())
    }
}

fn parse_or_flag(value: &str, flag: &mut bool) -> Option<u8> {
    match value.parse() {
        Ok(v) => Some(v),
        Err(_) => {
            *flag = true;
            None
        }
    }
}

/// One line of the answer: a station and its price text.
pub struct FeedItem<'a> {
    pub station: &'a SimStation,
    pub price: String,
}

/// Stations and prices for a query at `now`, sorted by price as the real feed is.
pub fn select<'a>(data: &'a Dataset, q: &SimQuery, date: Date, now: Timestamp) -> Vec<FeedItem<'a>> {
    if q.unreadable || (q.day == Day::Tomorrow && !tomorrow_published(now)) {
        return Vec::new();
    }
    let in_area = area_filter(data, q);
    let mut items: Vec<FeedItem<'a>> = data
        .stations
        .iter()
        .filter(|s| q.brand.is_none_or(|b| s.brand_code == b))
        .filter(|s| q.region.is_none_or(|r| s.region == r))
        .filter(|s| in_area(s))
        .filter_map(|s| Some(FeedItem { price: s.price_text(q.product, date)?, station: s }))
        .collect();
    items.sort_by(|a, b| {
        let pa: f64 = a.price.parse().unwrap_or(f64::MAX);
        let pb: f64 = b.price.parse().unwrap_or(f64::MAX);
        pa.total_cmp(&pb).then_with(|| a.station.trading_name.cmp(&b.station.trading_name))
    });
    items
}

/// The suburb filter: exact locality, or the locality and its neighbours within a few km.
fn area_filter<'a>(data: &'a Dataset, q: &SimQuery) -> Box<dyn Fn(&SimStation) -> bool + 'a> {
    let Some(suburb) = q.suburb.clone() else {
        return Box::new(|_| true);
    };
    let exact = move |s: &SimStation| s.location.eq_ignore_ascii_case(&suburb);
    if !q.surrounding {
        return Box::new(exact);
    }
    let members: Vec<&SimStation> = data.stations.iter().filter(|s| exact(s)).collect();
    if members.is_empty() {
        return Box::new(|_| false);
    }
    let n = members.len() as f64;
    let lat = members.iter().map(|s| s.lat).sum::<f64>() / n;
    let lon = members.iter().map(|s| s.lon).sum::<f64>() / n;
    Box::new(move |s: &SimStation| exact(s) || s.distance_km(lat, lon) <= SURROUNDING_KM)
}

/// Escape text content the way the origin does (`&`, `<`, `>`).
fn escape(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
}

fn element(out: &mut String, name: &str, text: &str) {
    // The origin writes an empty phone as `<phone />` but other empty elements in full.
    if text.is_empty() && name == "phone" {
        out.push_str("<phone />");
        return;
    }
    let _ = write!(out, "<{name}>");
    escape(out, text);
    let _ = write!(out, "</{name}>");
}

fn scope(q: &SimQuery) -> String {
    match (&q.suburb, q.region) {
        (Some(s), _) => title_case(s),
        (None, Some(r)) => format!("Region {r}"),
        (None, None) => "All Regions".to_string(),
    }
}

/// Write the RSS document. `mode` corrupts it on purpose.
pub fn render(
    items: &[FeedItem<'_>],
    q: &SimQuery,
    date: Date,
    now: Timestamp,
    mode: Option<FaultMode>,
) -> Vec<u8> {
    let item_date = match mode {
        Some(FaultMode::WrongDate) => date.yesterday().unwrap_or(date),
        _ => date,
    };
    let items: &[FeedItem<'_>] = if mode == Some(FaultMode::Empty) { &[] } else { items };
    let mut out = String::with_capacity(400 + items.len() * 900);
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n");
    if mode == Some(FaultMode::Doctype) {
        out.push_str("<!DOCTYPE rss [<!ENTITY boom \"boom\">]>");
    }
    let scope = scope(q);
    let perth = perth_now(now);
    out.push_str("<rss version=\"2.0\"><channel><title>FuelWatch Prices For ");
    escape(&mut out, &scope);
    out.push_str("</title><ttl>720</ttl><link>https://www.fuelwatch.wa.gov.au/</link><description>");
    let _ = write!(out, "{} - ", date.strftime("%d/%m/%Y"));
    escape(&mut out, &scope);
    if mode == Some(FaultMode::Oversize) {
        // Well-formed but past the 4 MiB response cap.
        out.extend(std::iter::repeat_n(' ', 4 * 1024 * 1024 + 4096));
    }
    out.push_str("</description><language>en-us</language><copyright>Copyright 2005 FuelWatch. All Rights Reserved.</copyright><lastBuildDate>");
    out.push_str(&perth.strftime("%a, %d %b %Y %H:%M:%S %z").to_string());
    out.push_str("</lastBuildDate><image><url>/fuelwatch/art/fuelwatch-logo.gif</url><title>FuelWatch</title><link>https://www.fuelwatch.wa.gov.au</link></image>");
    for item in items {
        write_item(&mut out, item, &item.price, item_date);
    }
    if mode == Some(FaultMode::Conflict)
        && let Some(first) = items.first()
    {
        let other: f64 = first.price.parse::<f64>().unwrap_or(100.0) + 1.0;
        write_item(&mut out, first, &format!("{other:.1}"), item_date);
    }
    out.push_str("</channel></rss>\r\n");
    let mut bytes = out.into_bytes();
    match mode {
        Some(FaultMode::Malformed) => splice(&mut bytes, b"</title>", b" & Sons"),
        Some(FaultMode::Doctype) => splice(&mut bytes, b"</title>", b" &boom;"),
        Some(FaultMode::InvalidUtf8) => splice(&mut bytes, b"</title>", &[0xC3, 0x28]),
        Some(FaultMode::BadPrice) => replace_first(&mut bytes, "price", Some("0")),
        Some(FaultMode::BadCoordinate) => replace_first(&mut bytes, "latitude", Some("-91.5")),
        Some(FaultMode::MissingField) => replace_first(&mut bytes, "address", None),
        Some(FaultMode::RepeatedElement) => {
            if let Some((start, end)) = element_span(&bytes, "brand") {
                let copy = bytes[start..end].to_vec();
                bytes.splice(end..end, copy);
            }
        }
        _ => {}
    }
    bytes
}

/// Byte range of the first `<name>…</name>` element.
fn element_span(bytes: &[u8], name: &str) -> Option<(usize, usize)> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = bytes.windows(open.len()).position(|w| w == open.as_bytes())?;
    let end = start + bytes[start..].windows(close.len()).position(|w| w == close.as_bytes())? + close.len();
    Some((start, end))
}

/// Replace the first `<name>` element's text, or remove the element (`None`).
fn replace_first(bytes: &mut Vec<u8>, name: &str, text: Option<&str>) {
    if let Some((start, end)) = element_span(bytes, name) {
        let replacement = text.map(|t| format!("<{name}>{t}</{name}>")).unwrap_or_default();
        bytes.splice(start..end, replacement.into_bytes());
    }
}

/// Insert `extra` before the first occurrence of `marker`.
fn splice(bytes: &mut Vec<u8>, marker: &[u8], extra: &[u8]) {
    if let Some(at) = bytes.windows(marker.len()).position(|w| w == marker) {
        bytes.splice(at..at, extra.iter().copied());
    }
}

fn write_item(out: &mut String, item: &FeedItem<'_>, price: &str, date: Date) {
    let s = item.station;
    out.push_str("<item>");
    element(out, "title", &format!("{price}: {}", s.trading_name));
    element(out, "description", &s.description);
    element(out, "brand", &s.brand);
    element(out, "date", &date.to_string());
    element(out, "price", price);
    element(out, "trading-name", &s.trading_name);
    element(out, "location", &s.location);
    element(out, "address", &s.address);
    element(out, "phone", &s.phone);
    element(out, "latitude", &s.latitude);
    element(out, "longitude", &s.longitude);
    element(out, "site-features", &s.site_features);
    element(out, "restrictions", &s.restrictions);
    out.push_str("</item>");
}

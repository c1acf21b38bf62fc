//! Property tests for the pure stages: generated valid items round-trip through the RSS
//! reader and the validator; arbitrary input never panics.

use jiff::civil::date;
use proptest::prelude::*;
use wafuel_domain::codes::{BRANDS, FEATURES, RESTRICTIONS};
use wafuel_domain::normalize::normalize_station;
use wafuel_domain::phone::normalize_phone;
use wafuel_domain::restrictions::parse_restrictions;
use wafuel_domain::site_features::parse_site_features;
use wafuel_source::rss;
use wafuel_source::validate::{Component, validate};

use crate::support::p;

#[derive(Debug, Clone)]
struct Item {
    trading_name: String,
    brand: String,
    price: String,
    street: String,
    suburb: String,
    phone: String,
    latitude: String,
    longitude: String,
    site_features: String,
    restrictions: String,
}

fn text() -> impl Strategy<Value = String> {
    // Names with the characters that need escaping, and spaces to collapse.
    "[A-Za-z0-9&<>'\"() -]{1,40}".prop_filter("not blank", |s| !s.trim().is_empty())
}

fn decimal(int_max: u32, negative: bool) -> impl Strategy<Value = String> {
    (0..int_max, 0usize..=8, any::<u64>()).prop_map(move |(int, places, frac)| {
        let sign = if negative { "-" } else { "" };
        if places == 0 {
            format!("{sign}{int}")
        } else {
            let digits = format!("{:08}", frac % 100_000_000);
            format!("{sign}{int}.{}", &digits[..places])
        }
    })
}

fn item() -> impl Strategy<Value = Item> {
    let brand = prop::sample::select(
        BRANDS.iter().map(|b| b.name.to_string()).chain(["".into(), "Quest Fuel".into()]).collect::<Vec<_>>(),
    );
    let features = prop::sample::subsequence(
        FEATURES.iter().filter(|f| f.code != 21).map(|f| f.name).collect::<Vec<_>>(),
        0..6,
    );
    let restriction =
        prop::option::of(prop::sample::select(RESTRICTIONS.iter().map(|r| r.name).collect::<Vec<_>>()));
    let phone =
        prop::sample::select(vec!["", "(08) 9981 1151", "0450 238 181", "123", "1300 655 055", "--EMPTY--"]);
    (
        text(),
        brand,
        (1u32..99_999),
        text(),
        text(),
        phone,
        decimal(89, true),
        decimal(179, false),
        features,
        restriction,
    )
        .prop_map(
            |(
                trading_name,
                brand,
                tenths,
                street,
                suburb,
                phone,
                latitude,
                longitude,
                features,
                restriction,
            )| Item {
                trading_name,
                brand,
                price: if tenths % 10 == 0 {
                    (tenths / 10).to_string()
                } else {
                    format!("{}.{}", tenths / 10, tenths % 10)
                },
                street,
                suburb,
                phone: phone.to_string(),
                latitude,
                longitude,
                site_features: format!(" {}, Open 24 hours", features.join(" ")),
                restrictions: restriction.map(|r| format!("{r};")).unwrap_or_default(),
            },
        )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn render(items: &[Item]) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<rss version=\"2.0\"><channel><title>t</title>",
    );
    for i in items {
        let phone = if i.phone.is_empty() {
            "<phone />".to_string()
        } else {
            format!("<phone>{}</phone>", escape(&i.phone))
        };
        out.push_str(&format!(
            "<item><title>{p}: {n}</title><description>d</description><brand>{b}</brand><date>2026-09-29</date><price>{p}</price><trading-name>{n}</trading-name><location>{s}</location><address>{a}</address>{phone}<latitude>{lat}</latitude><longitude>{lon}</longitude><site-features>{f}</site-features><restrictions>{r}</restrictions></item>",
            p = i.price,
            n = escape(&i.trading_name),
            b = escape(&i.brand),
            s = escape(&i.suburb),
            a = escape(&i.street),
            lat = i.latitude,
            lon = i.longitude,
            f = escape(&i.site_features),
            r = escape(&i.restrictions),
        ));
    }
    out.push_str("</channel></rss>\r\n");
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn valid_items_round_trip(items in prop::collection::vec(item(), 1..8)) {
        let doc = render(&items);
        let feed = rss::parse(&doc).expect("well-formed");
        prop_assert_eq!(feed.items.len(), items.len());
        for (record, original) in feed.items.iter().zip(&items) {
            prop_assert_eq!(record.trading_name.as_deref(), Some(original.trading_name.as_str()));
            prop_assert_eq!(record.address.as_deref(), Some(original.street.as_str()));
            prop_assert_eq!(record.price.as_deref(), Some(original.price.as_str()));
            prop_assert_eq!(record.phone.as_deref(), Some(original.phone.as_str()));
            prop_assert_eq!(record.site_features.as_deref(), Some(original.site_features.as_str()));
        }
        // Distinct stations validate; the normalised forms obey the model's invariants.
        let mut distinct = items.clone();
        for (n, i) in distinct.iter_mut().enumerate() {
            i.street = format!("{n} {}", i.street);
        }
        let doc = render(&distinct);
        let feed = rss::parse(&doc).expect("well-formed");
        let quotes = validate(&[Component { product: p(1), feed }], date(2026, 9, 29)).expect("valid");
        prop_assert_eq!(quotes.len(), distinct.len());
        for (q, original) in quotes.iter().zip(&distinct) {
            let s = &q.station;
            prop_assert!(s.features.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(s.features.contains(&21));
            prop_assert_eq!(s.is_24_hours, Some(true));
            prop_assert_eq!(s.id.as_str().len(), 64);
            prop_assert_eq!(q.price_text.as_str(), original.price.as_str());
            if let Some(p) = &s.phone {
                prop_assert!(p.starts_with('+') && p[1..].bytes().all(|b| b.is_ascii_digit()));
            }
            prop_assert_eq!(s.restrictions.is_some(), !original.restrictions.is_empty());
        }
    }

    #[test]
    fn id_ignores_case_and_spacing(item in item()) {
        let doc = render(std::slice::from_ref(&item));
        let feed = rss::parse(&doc).expect("well-formed");
        let a = normalize_station(&feed.items[0]).expect("normalises");
        let mut shouty = feed.items[0].clone();
        shouty.address = shouty.address.map(|s| format!("  {}  ", s.to_uppercase().replace(' ', "   ")).into());
        shouty.location = shouty.location.map(|s| s.to_lowercase().into());
        let b = normalize_station(&shouty).expect("normalises");
        prop_assert_eq!(a.id, b.id);
    }

    #[test]
    fn parser_never_panics(text in "\\PC{0,400}") {
        let _ = rss::parse(&text);
    }

    #[test]
    fn parser_never_panics_on_near_feeds(items in prop::collection::vec(item(), 0..3), cut in 0usize..2000, junk in "[<>&;/!?a-z\\[\\]-]{0,12}") {
        let mut doc = render(&items);
        let at = doc.char_indices().map(|(i, _)| i).nth(cut % doc.chars().count().max(1)).unwrap_or(0);
        doc.insert_str(at, &junk);
        let _ = rss::parse(&doc);
    }

    #[test]
    fn text_normalisers_never_panic(text in "\\PC{0,200}") {
        let _ = parse_site_features(&text);
        let _ = parse_restrictions(&text);
        let _ = normalize_phone(&text);
    }

    #[test]
    fn hours_grammar_never_panics(text in "Open ((Mon|Tue|Sun|Fri|Xyz)(-(Wed|Sat))?: ([0-9]{1,2}:[0-9]{2}-[0-9]{1,2}:[0-9]{2}|-|closed)(, )?){0,6}") {
        let sf = parse_site_features(&text);
        if let Some(false) = sf.hours.is_24_hours() {
            // A limited schedule is only claimed from parsed days.
            let is_schedule = matches!(sf.hours, wafuel_domain::site_features::Hours::Schedule { .. });
            prop_assert!(is_schedule);
        }
    }
}

/// Generated stations: (brand index, feature indices, restriction indices, price in tenths).
type GenStation = (usize, Vec<usize>, Option<Vec<usize>>, u32);

fn gen_station() -> impl Strategy<Value = GenStation> {
    (
        0..BRANDS.len(),
        prop::collection::vec(0..FEATURES.len(), 0..4),
        prop::option::of(prop::collection::vec(0..RESTRICTIONS.len(), 1..3)),
        1000u32..2500,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The station API's `id`, `feature`, `excludeBrand` and `excludeRestriction` keep exactly
    /// the stations a brute-force filter of the same catalog keeps, in the order asked (`id`
    /// without `sort`) or the sort's.
    #[test]
    fn the_station_filters_keep_what_a_brute_force_filter_keeps(
        stations in prop::collection::vec(gen_station(), 1..30),
        features in prop::collection::vec(0..FEATURES.len(), 0..2),
        brands in prop::collection::vec(0..BRANDS.len(), 0..3),
        restrictions in prop::collection::vec(0..RESTRICTIONS.len(), 0..2),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
        by_name in any::<bool>(),
    ) {
        use std::sync::Arc;
        use wafuel_domain::testing;
        let built: Vec<(Arc<wafuel_domain::station::Station>, f64)> = stations
            .iter()
            .enumerate()
            .map(|(i, (b, f, r, price))| {
                let mut s = (*testing::station(&format!("S{i:02}"), BRANDS[*b].name, "-31.95", "115.86")).clone();
                s.features = f.iter().map(|k| FEATURES[*k].code).collect();
                s.features.sort_unstable();
                s.features.dedup();
                s.restrictions = r.as_ref().map(|r| {
                    let mut codes: Vec<u8> = r.iter().map(|k| RESTRICTIONS[*k].code).collect();
                    codes.sort_unstable();
                    codes.dedup();
                    codes
                });
                (Arc::new(s), f64::from(*price) / 10.0)
            })
            .collect();
        let quotes: Vec<_> = built.iter().map(|(s, p)| testing::quote(s, 1, *p)).collect();
        let refs: Vec<_> = quotes.iter().collect();
        let mut ids: Vec<String> = picks.iter().map(|ix| built[ix.index(built.len())].0.id.to_string()).collect();
        ids.dedup();
        let mut seen = std::collections::HashSet::new();
        ids.retain(|i| seen.insert(i.clone()));
        let list = |codes: Vec<u8>| codes.iter().map(u8::to_string).collect::<Vec<_>>().join(",");
        let feature_codes: Vec<u8> = features.iter().map(|k| FEATURES[*k].code).collect();
        let brand_codes: Vec<u8> = brands.iter().map(|k| BRANDS[*k].code).collect();
        let restriction_codes: Vec<u8> = restrictions.iter().map(|k| RESTRICTIONS[*k].code).collect();
        let mut query = "product=1".to_string();
        if !ids.is_empty() { query.push_str(&format!("&id={}", ids.join(","))); }
        if !feature_codes.is_empty() { query.push_str(&format!("&feature={}", list(feature_codes.clone()))); }
        if !brand_codes.is_empty() { query.push_str(&format!("&excludeBrand={}", list(brand_codes.clone()))); }
        if !restriction_codes.is_empty() { query.push_str(&format!("&excludeRestriction={}", list(restriction_codes.clone()))); }
        if by_name { query.push_str("&sort=name"); }
        let now = wafuel_domain::time::perth_instant(date(2026, 9, 29).at(10, 0, 0, 0));
        let q = wafuel_query::stations::parse_stations(&query, now).expect("a valid query");
        let no_profiles = wafuel_service::catalog::ProfileMap::default();
        let showing = wafuel_service::catalog::search::Showing { open_at: date(2026, 9, 29).at(10, 0, 0, 0), profiles: &no_profiles, now };
        let rows = wafuel_service::catalog::search::station_rows(&q, None, &refs, None, showing);
        let got: Vec<&str> = rows.iter().map(|r| r.row.station.id.as_str()).collect();
        // Brute force: every station, each rule read off its own fields.
        let mut want: Vec<&Arc<wafuel_domain::station::Station>> = built
            .iter()
            .map(|(s, _)| s)
            .filter(|s| ids.is_empty() || ids.iter().any(|i| *i == s.id.as_str()))
            .filter(|s| feature_codes.iter().all(|f| s.features.contains(f)))
            .filter(|s| !brand_codes.contains(&s.brand.get()))
            .filter(|s| s.restrictions.as_ref().is_none_or(|r| r.iter().all(|c| !restriction_codes.contains(c))))
            .collect();
        if by_name {
            want.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
        } else if !ids.is_empty() {
            want.sort_by_key(|s| ids.iter().position(|i| *i == s.id.as_str()));
        } else {
            want.sort_by(|a, b| wafuel_domain::documents::document_order(a, b));
        }
        let want: Vec<&str> = want.iter().map(|s| s.id.as_str()).collect();
        prop_assert_eq!(got, want);
    }
}

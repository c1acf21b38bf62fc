//! Property tests for the pure stages: generated valid items round-trip through the RSS
//! reader and the validator; arbitrary input never panics.

use jiff::civil::date;
use proptest::prelude::*;
use wafuel::model::codes::{BRANDS, FEATURES, RESTRICTIONS};
use wafuel::model::normalize::normalize_station;
use wafuel::model::phone::normalize_phone;
use wafuel::model::restrictions::parse_restrictions;
use wafuel::model::site_features::parse_site_features;
use wafuel::source::rss;
use wafuel::source::validate::{Component, validate};

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
            prop_assert_eq!(s.digest.len(), 64);
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
        prop_assert_eq!(a.digest, b.digest);
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
            let is_schedule = matches!(sf.hours, wafuel::model::site_features::Hours::Schedule { .. });
            prop_assert!(is_schedule);
        }
    }
}

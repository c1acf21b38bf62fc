//! Every real feed in tests/fixtures parses and normalises (or is rejected, for the
//! malformed one), spot-checked field by field.

use jiff::civil::{Date, date};
use wafuel_domain::error_code::ErrorCode;
use wafuel_domain::normalize::normalize_station;
use wafuel_domain::record::SourceRecord;
use wafuel_domain::station::Quote;
use wafuel_source::rss;
use wafuel_source::validate::{Component, validate};

use crate::support::p;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("tests/fixtures/{name}")).expect("fixture readable")
}

fn quotes(name: &str, day: Date) -> Vec<Quote> {
    let text = fixture(name);
    let feed = rss::parse(&text).expect("parses");
    validate(&[Component { product: p(1), feed }], day).expect("validates")
}

fn find<'a>(quotes: &'a [Quote], trading_name: &str) -> &'a Quote {
    quotes.iter().find(|q| q.station.trading_name == trading_name).expect("station present")
}

#[test]
fn statewide_2026_excerpt() {
    let q = quotes("2026-09-29_statewide-excerpt_product-1.xml", date(2026, 9, 29));
    assert_eq!(q.len(), 3);
    let billabong = find(&q, "Billabong Roadhouse");
    let s = &billabong.station;
    assert_eq!(billabong.price, 195.0);
    assert_eq!(billabong.price_text, "195.0");
    assert_eq!(s.id.as_str(), "319621520a443f7357aec2b6e23441ef7309cc0e4bc2a5b45786f4573e8395fe");
    assert_eq!(s.brand.get(), 15);
    assert_eq!(s.suburb, "MEADOW");
    assert_eq!(s.street, "Lot 2 North West Coastal Hwy");
    assert_eq!((s.latitude, s.longitude), (-26.816033, 114.614261));
    assert_eq!(s.phone, None);
    assert!(s.notes.is_empty());
    assert_eq!(s.is_24_hours, Some(false));
    let hours = s.open_hours.as_ref().expect("hours");
    assert!(hours.iter().all(|d| d.as_deref() == Some("06:00-20:30")));
    assert_eq!(s.restrictions, None);
    assert_eq!(s.features, Vec::<u8>::new());

    let wandering = &find(&q, "Shire of Wandering").station;
    assert_eq!(wandering.brand.get(), 0);
    assert_eq!(wandering.notes.brand.as_deref(), Some("Quest Fuel"));
    assert_eq!(wandering.restrictions, Some(vec![1]));
    assert_eq!(wandering.is_24_hours, None);
    assert_eq!(wandering.open_hours, None);

    let meeka = find(&q, "Meekatharra Corner Store");
    assert_eq!(meeka.station.id.as_str(), "294ed847a15de8a8305c548cece119542e625a89897cd82290470f7df5ec0a8e");
    assert_eq!(meeka.station.phone.as_deref(), Some("+61899811151"));
    assert_eq!(meeka.station.brand.get(), 5);
    assert_eq!(meeka.price, 212.9);
}

#[test]
fn default_2019_feed() {
    let q = quotes("2019-11-03_default_product-1.xml", date(2019, 11, 3));
    assert_eq!(q.len(), 380);
    let byford = &find(&q, "United Byford").station;
    assert_eq!(byford.phone.as_deref(), Some("+61450238181"));
    assert_eq!(byford.brand.get(), 23);
    assert_eq!(byford.features, Vec::<u8>::new());
    assert_eq!(byford.is_24_hours, None);
    assert_eq!(byford.legacy.site_features.as_deref(), Some(", "));
    // `&amp;` decoded in names; every phone either E.164, absent or kept as a note.
    assert!(q.iter().any(|x| x.station.trading_name.contains('&')));
    for x in &q {
        let s = &x.station;
        if let Some(p) = &s.phone {
            assert!(p.starts_with("+61"), "{p}");
        }
        assert!(s.features.windows(2).all(|w| w[0] < w[1]));
        // A known limited schedule always comes with the hours it was read from.
        if s.is_24_hours == Some(false) {
            assert!(s.open_hours.is_some(), "{}", s.trading_name);
        }
    }
    // The 12 empty phones are absent, not notes.
    assert_eq!(q.iter().filter(|x| x.station.phone.is_none() && x.station.notes.phone.is_none()).count(), 12);
    // Latitude written as a bare integer.
    assert!(q.iter().any(|x| x.station.legacy.latitude == "-32"));
    let brands_unmapped = q.iter().filter(|x| x.station.brand.get() == 0).count();
    assert!(brands_unmapped > 0, "Caltex Woolworths and Coles Express have no code");
}

#[test]
fn ellenbrook_2022_response() {
    let text = fixture("2022-12-05_suburb-ellenbrook_surrounding-yes_product-1.xml");
    assert!(text.contains("?>\r\n<rss"));
    let q = quotes("2022-12-05_suburb-ellenbrook_surrounding-yes_product-1.xml", date(2022, 12, 5));
    assert_eq!(q.len(), 14);
    let whole = q.iter().find(|x| x.price_text == "179").expect("whole-cent price");
    assert_eq!(whole.price, 179.0);
    let united = &find(&q, "United Ellenbrook").station;
    assert_eq!(united.features, vec![4, 5, 6, 7, 8, 12, 13, 14]);
    assert_eq!(united.is_24_hours, Some(false));
    let hours = united.open_hours.as_ref().expect("hours");
    assert_eq!(hours[0].as_deref(), Some("06:00-22:00"));
    assert_eq!(hours[6].as_deref(), Some("06:00-22:00"));
    let coles = &find(&q, "Coles Express Ellenbrook").station;
    assert_eq!(coles.is_24_hours, Some(true));
    assert_eq!(coles.open_hours, None);
    assert!(coles.features.contains(&21));
    assert_eq!(coles.phone.as_deref(), Some("+61862474312"));
    let all_day = text.matches("Open 24 hours</site-features>").count();
    assert_eq!(q.iter().filter(|x| x.station.is_24_hours == Some(true)).count(), all_day);
}

#[test]
fn malformed_copy_is_rejected_not_repaired() {
    let err =
        rss::parse(&fixture("malformed_2020-12-30_unescaped-ampersand.xml")).expect_err("raw ampersand");
    assert_eq!(err.code, ErrorCode::InvalidFeed);
}

#[test]
fn the_2020_extraction_normalises() {
    // Not RSS: one consumer's JSON of all seven products. Its stations still normalise.
    let raw: serde_json::Value =
        serde_json::from_str(&fixture("2020-12_metro_products-1-2-4-5-6-10-11_yesterday-today.json"))
            .expect("json");
    let mut counts = Vec::new();
    let days = raw.as_array().expect("days");
    for product in days[0].as_array().expect("products") {
        let stations = product["stations"].as_array().expect("stations");
        counts.push(stations.len());
        for s in stations {
            let text = |k: &str| s[k].as_str().map(|v| std::borrow::Cow::Owned(v.to_string()));
            let record = SourceRecord {
                brand: text("brand"),
                price: text("price"),
                trading_name: text("trading-name"),
                location: text("location"),
                address: text("address"),
                latitude: text("latitude"),
                longitude: text("longitude"),
                ..SourceRecord::default()
            };
            let station = normalize_station(&record).expect("normalises");
            assert_eq!(station.id.as_str().len(), 64);
            assert!(wafuel_source::validate::parse_price(record.price.as_deref().unwrap_or("")).is_some());
        }
    }
    assert_eq!(counts, vec![396, 314, 219, 125, 380, 8, 226]);
}

//! The site-features and opening-hours grammar on arbitrary text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wafuel_domain::site_features::{Hours, parse_site_features};

fuzz_target!(|text: &str| {
    let parsed = parse_site_features(text);
    assert!(parsed.features.windows(2).all(|w| w[0] < w[1]));
    if let Hours::Schedule { days, .. } = &parsed.hours {
        assert!(days.iter().any(Option::is_some));
    }
});

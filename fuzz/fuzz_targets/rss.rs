//! The RSS reader and validator on arbitrary bytes: any outcome but a panic is fine.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wafuel_source::client::decode_body;
use wafuel_source::rss;
use wafuel_source::validate::{Component, validate};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = decode_body(data.to_vec())
        && let Ok(feed) = rss::parse(&text)
    {
        let _ = validate(&[Component { product: wafuel_domain::codes::ProductCode::UNLEADED, feed }], jiff::civil::date(2026, 9, 29));
    }
});

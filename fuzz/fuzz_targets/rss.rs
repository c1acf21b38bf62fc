//! The RSS reader and validator on arbitrary bytes: any outcome but a panic is fine.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wafuel::source::client::decode_body;
use wafuel::source::rss;
use wafuel::source::validate::{Component, validate};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = decode_body(data.to_vec())
        && let Ok(feed) = rss::parse(&text)
    {
        let _ = validate(&[Component { product: 1, feed }], jiff::civil::date(2026, 9, 29));
    }
});

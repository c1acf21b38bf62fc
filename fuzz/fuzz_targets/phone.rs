//! The phone normaliser on arbitrary text: valid output is always E.164.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wafuel_domain::phone::{Phone, normalize_phone};

fuzz_target!(|text: &str| {
    if let Phone::Valid(n) = normalize_phone(text) {
        let digits = &n[1..];
        assert!(n.starts_with('+') && (2..=15).contains(&digits.len()) && !digits.starts_with('0'));
    }
});

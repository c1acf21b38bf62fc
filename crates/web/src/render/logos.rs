//! Our own brand badges: a rounded square in a colour derived from the brand name, with the
//! brand's initials. No brand artwork is copied. Built once; served from memory.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::asset::Asset;
use wafuel_domain::codes::{BRANDS, GENERIC_LOGO, brand_logo_file};
use wafuel_domain::key::sha256_hex;

static LOGOS: LazyLock<HashMap<String, Asset>> = LazyLock::new(|| {
    let mut map = HashMap::new();
    for b in BRANDS {
        map.insert(brand_logo_file(b.code), logo(&badge(b.name)));
    }
    map.insert(GENERIC_LOGO.to_string(), logo(&badge("")));
    map
});

/// The logo with this exact file name.
pub fn find(file: &str) -> Option<&'static Asset> {
    LOGOS.get(file)
}

fn logo(svg: &str) -> Asset {
    Asset::new(svg.to_string(), "image/svg+xml")
}

fn initials(name: &str) -> String {
    let words: Vec<&str> =
        name.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let text: String = match words.as_slice() {
        [] => String::new(),
        [one] => one.chars().take(3).collect(),
        many => many.iter().filter_map(|w| w.chars().next()).take(3).collect(),
    };
    text.to_uppercase()
}

fn badge(name: &str) -> String {
    let hue = sha256_hex(name.as_bytes()).bytes().take(4).fold(0u32, |h, b| h * 31 + u32::from(b)) % 360;
    let title = xml_escape(if name.is_empty() { "Fuel station" } else { name });
    // The unbranded badge draws a pump: an emoji glyph would depend on the viewer's fonts.
    let mark = if name.is_empty() {
        "<path d=\"M18 14h20v36H18z\" fill=\"#fff\"/><path d=\"M22 19h12v9H22z\" fill=\"#555\"/><path d=\"M38 24l6 5v14a3 3 0 0 0 6 0V25l-5-5\" fill=\"none\" stroke=\"#fff\" stroke-width=\"3\" stroke-linejoin=\"round\"/>".to_string()
    } else {
        format!(
            "<text x=\"32\" y=\"40\" font-family=\"Helvetica,Arial,sans-serif\" font-size=\"20\" font-weight=\"700\" text-anchor=\"middle\" fill=\"#fff\">{}</text>",
            xml_escape(&initials(name))
        )
    };
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 64 64\" width=\"64\" height=\"64\" role=\"img\" aria-label=\"{title}\"><title>{title}</title><rect width=\"64\" height=\"64\" rx=\"12\" fill=\"hsl({hue},55%,38%)\"/>{mark}</svg>\n"
    )
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_logo_per_brand_plus_generic() {
        assert_eq!(LOGOS.len(), BRANDS.len() + 1);
        for b in BRANDS {
            let logo = find(&brand_logo_file(b.code)).expect("logo");
            assert!(logo.repr.identity.starts_with(b"<svg"));
        }
        let dunning = find("dunning_s.svg").expect("dunning");
        assert!(std::str::from_utf8(&dunning.repr.identity).expect("utf8").contains("Dunning&apos;s"));
        assert!(find("generic.svg").is_some());
        assert!(find("GENERIC.svg").is_none());
        for n in LOGOS.keys() {
            assert!(
                n.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.')
            );
        }
    }
}

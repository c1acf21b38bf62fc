//! The RSS-shaped JSON of `/legacy`: one item per station and product, source text kept.

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq};

use wafuel_domain::documents::LegacyDoc;
use wafuel_domain::station::Quote;

/// Render `{"feed":{"items":[…]}}`. `multi_product` adds `product` to every item.
pub fn render(legacy: &LegacyDoc) -> Result<Vec<u8>, super::RenderError> {
    let (quotes, date) = (legacy.quotes.as_slice(), &legacy.date.to_string());
    let doc = Doc { feed: Feed { items: Items { quotes, date, multi_product: legacy.multi_product } } };
    let mut out = Vec::with_capacity(128 + quotes.len() * 450);
    serde_json::to_writer(&mut out, &doc)?;
    Ok(out)
}

#[derive(Serialize)]
struct Doc<'a> {
    feed: Feed<'a>,
}

#[derive(Serialize)]
struct Feed<'a> {
    items: Items<'a>,
}

struct Items<'a> {
    quotes: &'a [Quote],
    date: &'a str,
    multi_product: bool,
}

impl Serialize for Items<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.quotes.len()))?;
        for q in self.quotes {
            seq.serialize_element(&Item { quote: q, date: self.date, multi_product: self.multi_product })?;
        }
        seq.end()
    }
}

struct Item<'a> {
    quote: &'a Quote,
    date: &'a str,
    multi_product: bool,
}

impl Serialize for Item<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let st = &self.quote.station;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("trading-name", &st.trading_name)?;
        if let Some(b) = st.legacy.brand.as_deref().filter(|b| !b.trim().is_empty()) {
            map.serialize_entry("brand", b)?;
        }
        map.serialize_entry("price", &self.quote.price_text)?;
        map.serialize_entry("date", self.date)?;
        map.serialize_entry("address", &st.street)?;
        map.serialize_entry("location", &st.suburb)?;
        map.serialize_entry("latitude", &st.legacy.latitude)?;
        map.serialize_entry("longitude", &st.legacy.longitude)?;
        map.serialize_entry("phone", &st.phone)?;
        if let Some(f) = &st.legacy.site_features {
            map.serialize_entry("site-features", f)?;
        }
        if let Some(r) = st.legacy.restrictions.as_deref().filter(|r| !r.trim().is_empty()) {
            map.serialize_entry("restrictions", r)?;
        }
        if self.multi_product {
            map.serialize_entry("product", &self.quote.product)?;
        }
        map.end()
    }
}

//! One `<item>` of the source feed as text, before any interpretation.

use std::borrow::Cow;

/// The fields of a feed item, as the source wrote them (entities decoded, nothing else).
/// `None` means the element was absent; `Some("")` means it was present and empty. Text is
/// borrowed from the feed where it needs no decoding, so reading a feed copies little.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceRecord<'a> {
    pub brand: Option<Cow<'a, str>>,
    pub date: Option<Cow<'a, str>>,
    pub price: Option<Cow<'a, str>>,
    pub trading_name: Option<Cow<'a, str>>,
    pub location: Option<Cow<'a, str>>,
    pub address: Option<Cow<'a, str>>,
    pub phone: Option<Cow<'a, str>>,
    pub latitude: Option<Cow<'a, str>>,
    pub longitude: Option<Cow<'a, str>>,
    pub site_features: Option<Cow<'a, str>>,
    pub restrictions: Option<Cow<'a, str>>,
}

/// The item elements we read, in the feed's order. `title` and `description` repeat these
/// fields in prose and are not read.
pub const FIELDS: [&str; 11] = [
    "brand",
    "date",
    "price",
    "trading-name",
    "location",
    "address",
    "phone",
    "latitude",
    "longitude",
    "site-features",
    "restrictions",
];

impl<'a> SourceRecord<'a> {
    /// The same record owning its text (for keeping it past the feed it was read from).
    pub fn into_owned(self) -> SourceRecord<'static> {
        let own = |f: Option<Cow<'a, str>>| f.map(|c| Cow::Owned(c.into_owned()));
        SourceRecord {
            brand: own(self.brand),
            date: own(self.date),
            price: own(self.price),
            trading_name: own(self.trading_name),
            location: own(self.location),
            address: own(self.address),
            phone: own(self.phone),
            latitude: own(self.latitude),
            longitude: own(self.longitude),
            site_features: own(self.site_features),
            restrictions: own(self.restrictions),
        }
    }

    /// Index in [`FIELDS`] of a known item element name.
    pub fn field_index(element: &str) -> Option<usize> {
        FIELDS.iter().position(|f| *f == element)
    }

    /// The slot of a field by its index in [`FIELDS`].
    pub fn slot(&mut self, index: usize) -> Option<&mut Option<Cow<'a, str>>> {
        Some(match index {
            0 => &mut self.brand,
            1 => &mut self.date,
            2 => &mut self.price,
            3 => &mut self.trading_name,
            4 => &mut self.location,
            5 => &mut self.address,
            6 => &mut self.phone,
            7 => &mut self.latitude,
            8 => &mut self.longitude,
            9 => &mut self.site_features,
            10 => &mut self.restrictions,
            _ => return None,
        })
    }
}

//! One `<item>` of the source feed as text, before any interpretation.

/// The fields of a feed item, as the source wrote them (entities decoded, nothing else).
/// `None` means the element was absent; `Some("")` means it was present and empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceRecord {
    pub brand: Option<String>,
    pub date: Option<String>,
    pub price: Option<String>,
    pub trading_name: Option<String>,
    pub location: Option<String>,
    pub address: Option<String>,
    pub phone: Option<String>,
    pub latitude: Option<String>,
    pub longitude: Option<String>,
    pub site_features: Option<String>,
    pub restrictions: Option<String>,
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

impl SourceRecord {
    /// Index in [`FIELDS`] of a known item element name.
    pub fn field_index(element: &str) -> Option<usize> {
        FIELDS.iter().position(|f| *f == element)
    }

    /// The slot of a field by its index in [`FIELDS`].
    pub fn slot(&mut self, index: usize) -> Option<&mut Option<String>> {
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

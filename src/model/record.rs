//! One `<item>` of the source feed as text, before any interpretation.

/// The fields of a feed item, as the source wrote them (entities decoded, nothing else).
/// `None` means the element was absent; `Some("")` means it was present and empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceRecord {
    pub title: Option<String>,
    pub description: Option<String>,
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

/// The item elements we read, in the feed's order.
pub const FIELDS: [&str; 13] = [
    "title",
    "description",
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
            0 => &mut self.title,
            1 => &mut self.description,
            2 => &mut self.brand,
            3 => &mut self.date,
            4 => &mut self.price,
            5 => &mut self.trading_name,
            6 => &mut self.location,
            7 => &mut self.address,
            8 => &mut self.phone,
            9 => &mut self.latitude,
            10 => &mut self.longitude,
            11 => &mut self.site_features,
            12 => &mut self.restrictions,
            _ => return None,
        })
    }
}

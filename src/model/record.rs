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

impl SourceRecord {
    /// The slot for a known item element name, or `None` for an element we do not read.
    pub fn field_mut(&mut self, element: &[u8]) -> Option<&mut Option<String>> {
        Some(match element {
            b"title" => &mut self.title,
            b"description" => &mut self.description,
            b"brand" => &mut self.brand,
            b"date" => &mut self.date,
            b"price" => &mut self.price,
            b"trading-name" => &mut self.trading_name,
            b"location" => &mut self.location,
            b"address" => &mut self.address,
            b"phone" => &mut self.phone,
            b"latitude" => &mut self.latitude,
            b"longitude" => &mut self.longitude,
            b"site-features" => &mut self.site_features,
            b"restrictions" => &mut self.restrictions,
            _ => return None,
        })
    }
}

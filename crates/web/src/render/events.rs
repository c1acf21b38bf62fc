//! The `data` of a `price` event on the event stream: what one alert reports for one publish
//! (docs/api.md "Alerts"). The other events' `data` is the store's record of the publish, sent
//! as stored so every replica sends the same bytes.

use serde::Serialize;

use super::RenderError;
use wafuel_domain::documents::PriceAlert;

#[derive(Serialize)]
struct PriceData<'a> {
    date: String,
    product: u8,
    stations: Vec<Reported<'a>>,
}

#[derive(Serialize)]
struct Reported<'a> {
    id: &'a str,
    name: &'a str,
    price: f64,
    previous: Option<f64>,
}

/// One line of JSON (an event's `data` is one line).
pub fn price_alert(alert: &PriceAlert) -> Result<String, RenderError> {
    let stations = alert
        .stations
        .iter()
        .map(|s| Reported { id: &s.id, name: &s.name, price: s.price, previous: s.previous })
        .collect();
    let data = PriceData { date: alert.date.to_string(), product: alert.product.get(), stations };
    Ok(serde_json::to_string(&data)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wafuel_domain::codes::ProductCode;
    use wafuel_domain::documents::AlertedStation;

    #[test]
    fn a_price_alert_is_one_line_of_the_documented_fields() {
        let station = |id: &str, price: f64, previous: Option<f64>| AlertedStation {
            id: id.into(),
            name: format!("Station \"{id}\""),
            price,
            previous,
        };
        let alert = PriceAlert {
            date: jiff::civil::date(2026, 11, 25),
            product: ProductCode::UNLEADED,
            stations: vec![station("a1", 179.9, Some(185.0)), station("b2", 181.0, None)],
        };
        let json = price_alert(&alert).expect("renders");
        assert!(!json.contains('\n'), "{json}");
        let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        assert_eq!(
            v,
            serde_json::json!({
                "date": "2026-11-25",
                "product": 1,
                "stations": [
                    {"id": "a1", "name": "Station \"a1\"", "price": 179.9, "previous": 185.0},
                    {"id": "b2", "name": "Station \"b2\"", "price": 181.0, "previous": null},
                ],
            })
        );
    }
}

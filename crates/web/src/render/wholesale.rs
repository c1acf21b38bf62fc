//! `/v1/wholesale` documents: one `wholesale` resource per day (JSON:API), or one CSV row per
//! terminal and day. Pure.

use serde::Serialize;

use super::jsonapi::{JSON_API, JsonApi, SOURCE_HOST};
use super::market::Resource;
use super::{RenderError, csv_bytes};
use wafuel_domain::codes::ProductCode;
use wafuel_domain::documents::DocumentMeta;
use wafuel_domain::price::Hundredths;
use wafuel_domain::wholesale::{NO_TGP_NOTE, WholesaleDoc, has_wholesale};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Meta<'a> {
    source: &'static str,
    product: ProductCode,
    centre: &'static str,
    from: String,
    to: String,
    /// What the prices are and include, said once for every reader.
    unit: &'static str,
    /// Why no day is listed: the fuel has no terminal gate price.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'static str>,
    #[serde(flatten)]
    about: super::jsonapi::About<'a>,
}

#[derive(Serialize)]
struct Terminal<'a> {
    name: &'a str,
    price: f64,
}

#[derive(Serialize)]
struct Attributes<'a> {
    date: String,
    centre: &'static str,
    product: ProductCode,
    mean: f64,
    min: f64,
    terminals: Vec<Terminal<'a>>,
    margin: Option<f64>,
}

#[derive(Serialize)]
struct Document<'a> {
    jsonapi: JsonApi,
    meta: Meta<'a>,
    data: Vec<Resource<Attributes<'a>>>,
}

/// The unit of every price and margin of the document.
pub const UNIT: &str = "c/L, GST included";

/// `/v1/wholesale` as JSON:API.
pub fn wholesale_jsonapi(doc: &WholesaleDoc, meta: &DocumentMeta) -> Result<Vec<u8>, RenderError> {
    let centre = doc.centre.slug();
    let data = doc
        .rows
        .iter()
        .map(|row| Resource {
            kind: "wholesale",
            id: format!("{}:{centre}:{}", doc.product, row.day.date),
            attributes: Attributes {
                date: row.day.date.to_string(),
                centre,
                product: doc.product,
                mean: Hundredths(row.day.mean).cents(),
                min: Hundredths(row.day.min).cents(),
                terminals: row
                    .day
                    .terminals
                    .iter()
                    .map(|(name, price)| Terminal { name, price: Hundredths(*price).cents() })
                    .collect(),
                margin: row.margin,
            },
        })
        .collect();
    let document = Document {
        jsonapi: JSON_API,
        meta: Meta {
            source: SOURCE_HOST,
            product: doc.product,
            centre,
            from: doc.from.to_string(),
            to: doc.to.to_string(),
            unit: UNIT,
            note: (!has_wholesale(doc.product)).then_some(NO_TGP_NOTE),
            about: super::jsonapi::About::of(meta),
        },
        data,
    };
    Ok(serde_json::to_vec(&document)?)
}

/// `/v1/wholesale` as RFC 4180 CSV: `date,centre,product,terminal,price,mean,margin`, one row
/// per terminal and day (the day's mean and margin repeated on each of its rows).
pub fn wholesale_csv(doc: &WholesaleDoc) -> Result<Vec<u8>, RenderError> {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    super::safe_record(&mut w, ["date", "centre", "product", "terminal", "price", "mean", "margin"])?;
    for row in &doc.rows {
        let date = row.day.date.to_string();
        let mean = Hundredths(row.day.mean).cents().to_string();
        let margin = row.margin.map(|m| m.to_string()).unwrap_or_default();
        for (terminal, price) in &row.day.terminals {
            super::safe_record(
                &mut w,
                [
                    date.as_str(),
                    doc.centre.slug(),
                    &doc.product.to_string(),
                    terminal,
                    &Hundredths(*price).cents().to_string(),
                    &mean,
                    &margin,
                ],
            )?;
        }
    }
    csv_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use wafuel_domain::wholesale::{Centre, WholesaleDay, WholesaleRow};

    fn doc() -> WholesaleDoc {
        let day = WholesaleDay {
            date: date(2026, 4, 23),
            centre: Centre::Perth,
            product: ProductCode::UNLEADED,
            mean: 17_268,
            min: 17_218,
            terminals: vec![("Ampol Kwinana".into(), 17_218), ("BP Kwinana".into(), 17_318)],
        };
        WholesaleDoc {
            product: ProductCode::UNLEADED,
            centre: Centre::Perth,
            from: date(2026, 4, 23),
            to: date(2026, 4, 23),
            rows: vec![WholesaleRow { day, margin: Some(18.1) }],
        }
    }

    #[test]
    fn a_day_is_one_resource_with_its_terminals_and_margin() {
        let bytes = wholesale_jsonapi(&doc(), &DocumentMeta::default()).expect("renders");
        let v: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
        let day = &v["data"][0];
        assert_eq!(day["type"], "wholesale");
        assert_eq!(day["id"], "1:perth:2026-04-23");
        assert_eq!(day["attributes"]["mean"], 172.68);
        assert_eq!(day["attributes"]["min"], 172.18);
        assert_eq!(day["attributes"]["margin"], 18.1);
        assert_eq!(day["attributes"]["terminals"][1]["name"], "BP Kwinana");
        assert_eq!(day["attributes"]["terminals"][1]["price"], 173.18);
        assert_eq!(v["meta"]["centre"], "perth");
        assert_eq!(v["meta"]["unit"], UNIT);
    }

    #[test]
    fn csv_is_a_row_per_terminal_and_day() {
        let text = String::from_utf8(wholesale_csv(&doc()).expect("renders")).expect("utf-8");
        assert_eq!(
            text,
            "date,centre,product,terminal,price,mean,margin\r\n\
             2026-04-23,perth,1,Ampol Kwinana,172.18,172.68,18.1\r\n\
             2026-04-23,perth,1,BP Kwinana,173.18,172.68,18.1\r\n"
        );
    }
}

//! `/v1/brands` as JSON:API: one `brand` resource per code, with its name, its logo's path and
//! how many of the day's stations carry it. Pure.

use serde::Serialize;

use super::RenderError;
use super::jsonapi::{JSON_API, JsonApi, SOURCE_HOST};
use wafuel_domain::codes::{brand, brand_logo_file};
use wafuel_domain::documents::{BrandsDoc, DocumentMeta};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Meta<'a> {
    source: &'static str,
    source_date: String,
    fetched_at: String,
    #[serde(flatten)]
    about: super::jsonapi::About<'a>,
}

#[derive(Serialize)]
struct Document<'a> {
    jsonapi: JsonApi,
    meta: Meta<'a>,
    data: Vec<Resource>,
}

#[derive(Serialize)]
struct Resource {
    #[serde(rename = "type")]
    kind: &'static str,
    id: String,
    attributes: Attributes,
}

#[derive(Serialize)]
struct Attributes {
    code: u8,
    /// FuelWatch's brand text; null for the unmapped code 0.
    name: Option<&'static str>,
    /// The logo's path on this service; null for the unmapped code 0.
    logo: Option<String>,
    stations: usize,
}

/// The brands document.
pub fn brands_jsonapi(doc: &BrandsDoc, meta: &DocumentMeta) -> Result<Vec<u8>, RenderError> {
    let data = doc
        .brands
        .iter()
        .map(|&(code, stations)| {
            let known = brand(code);
            Resource {
                kind: "brand",
                id: code.to_string(),
                attributes: Attributes {
                    code,
                    name: known.map(|b| b.name),
                    logo: known.map(|_| format!("/static/image/brand/{}", brand_logo_file(code))),
                    stations,
                },
            }
        })
        .collect();
    let out = Document {
        jsonapi: JSON_API,
        meta: Meta {
            source: SOURCE_HOST,
            source_date: doc.date.to_string(),
            fetched_at: wafuel_domain::time::format_perth(
                &doc.fetched_at.to_zoned(wafuel_domain::time::perth()),
            ),
            about: super::jsonapi::About::of(meta),
        },
        data,
    };
    Ok(serde_json::to_vec(&out)?)
}

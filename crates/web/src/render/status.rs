//! `/v1/status` as JSON:API: one `status` resource saying whether the service is updating.
//! Pure; names no store, key or host.

use serde::Serialize;

use super::RenderError;
use super::jsonapi::{JSON_API, JsonApi, SOURCE_HOST};
use wafuel_domain::documents::{PublicationStatus, Published, StatusDoc};
use wafuel_domain::time::{format_perth, perth};

fn at(t: jiff::Timestamp) -> String {
    format_perth(&t.to_zoned(perth()))
}

#[derive(Serialize)]
struct Document<'a> {
    jsonapi: JsonApi,
    meta: Meta,
    data: Resource<'a>,
}

#[derive(Serialize)]
struct Meta {
    source: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct Resource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: &'static str,
    attributes: Attributes<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Attributes<'a> {
    now: String,
    products: Vec<Product>,
    origin: Origin,
    warm: Option<Warm>,
    wholesale: Wholesale,
    history: History<'a>,
    enrichment: Enrichment,
    version: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Day {
    date: String,
    publication_status: &'static str,
    fetched_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected_at: Option<String>,
}

#[derive(Serialize)]
struct Product {
    product: u8,
    today: Day,
    tomorrow: Day,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Origin {
    last_success: Option<String>,
    last_failure: Option<Failure>,
}

#[derive(Serialize)]
struct Failure {
    at: String,
    code: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Warm {
    last_run: String,
    outcome: &'static str,
    refreshed: usize,
    skipped: usize,
    failed: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Wholesale {
    newest_day: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct History<'a> {
    first_day: Option<String>,
    last_day: Option<String>,
    stations: usize,
    /// What the backfill has brought in (`state`, `filesDone`, `filesTotal`, `oldestMonth`,
    /// `lastError`).
    backfill: &'a wafuel_domain::backfill::Backfill,
}

#[derive(Serialize)]
struct Enrichment {
    stations: usize,
    of: usize,
}

/// A day's `publicationStatus`, in `/v1`'s own words for the same day and product
/// (`meta.publicationStatus`), with `not_fetched` for what no request has stored yet.
/// `published`: whether the day's prices are out (always for today; tomorrow's from 14:30).
fn day_status(stored: Option<Published>, published: bool) -> &'static str {
    match (stored, published) {
        (Some(Published { priced: true, .. }), _) => PublicationStatus::Available.as_str(),
        (_, false) => PublicationStatus::NotYetPublished.as_str(),
        (Some(_), true) => PublicationStatus::Empty.as_str(),
        (None, true) => "not_fetched",
    }
}

/// The status document.
pub fn status_jsonapi(doc: &StatusDoc) -> Result<Vec<u8>, RenderError> {
    let published = doc.now >= doc.expected_at;
    let products = doc
        .products
        .iter()
        .map(|(p, today, tomorrow)| Product {
            product: p.get(),
            today: Day {
                date: doc.today.to_string(),
                publication_status: day_status(*today, true),
                fetched_at: today.map(|t| at(t.fetched_at)),
                expected_at: None,
            },
            tomorrow: Day {
                date: doc.tomorrow.to_string(),
                publication_status: day_status(*tomorrow, published),
                fetched_at: tomorrow.map(|t| at(t.fetched_at)),
                expected_at: Some(at(doc.expected_at)),
            },
        })
        .collect();
    let version = env!("CARGO_PKG_VERSION");
    let out = Document {
        jsonapi: JSON_API,
        meta: Meta { source: SOURCE_HOST, version },
        data: Resource {
            kind: "status",
            id: "service",
            attributes: Attributes {
                now: at(doc.now),
                products,
                origin: Origin {
                    last_success: doc.origin_success.map(at),
                    last_failure: doc.origin_failure.map(|(t, code)| Failure { at: at(t), code }),
                },
                warm: doc.warm.map(|(t, refreshed, skipped, failed)| Warm {
                    last_run: at(t),
                    outcome: if failed == 0 { "ok" } else { "failed" },
                    refreshed,
                    skipped,
                    failed,
                }),
                wholesale: Wholesale { newest_day: doc.wholesale_day.map(|d| d.to_string()) },
                history: History {
                    first_day: doc.history.map(|(f, _)| f.to_string()),
                    last_day: doc.history.map(|(_, l)| l.to_string()),
                    stations: doc.history_stations,
                    backfill: &doc.backfill,
                },
                enrichment: Enrichment { stations: doc.enriched, of: doc.history_stations },
                version,
            },
        },
    };
    Ok(serde_json::to_vec(&out)?)
}

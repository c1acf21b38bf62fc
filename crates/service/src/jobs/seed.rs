//! Seed the price history with past days (the demo's offline start): statewide feeds of
//! earlier dates go through the real parser and validator into the history store, exactly
//! as a published catalog extract would.

use std::sync::Arc;

use jiff::civil::Date;

use wafuel_domain::codes::ProductCode;
use wafuel_domain::codes::product_codes;
use wafuel_domain::station::Quote;
use wafuel_source::rss;
use wafuel_source::validate::{Component, validate};
use wafuel_store::history::{DayExtract, HistoryStore, HistoryWrite};

/// Days written per transaction (each commit rewrites the index pages it touched).
const DAYS_PER_WRITE: i32 = 15;

/// Record the `days` days before `today` for every product, from `feed(product, date)`.
/// A feed that does not validate is skipped (and logged), never half-written.
pub async fn seed_history(
    history: &Arc<dyn HistoryStore>,
    today: Date,
    days: i32,
    feed: impl Fn(ProductCode, Date) -> Vec<u8>,
) -> HistoryWrite {
    let mut total = HistoryWrite::default();
    let mut batch: Vec<(ProductCode, Date, Vec<Quote>)> = Vec::new();
    for back in (1..=days).rev() {
        let Ok(date) = today.checked_sub(jiff::Span::new().days(back)) else { continue };
        for product in product_codes() {
            let body = feed(product, date);
            let quotes = std::str::from_utf8(&body).map_err(|e| e.to_string()).and_then(|text| {
                let feed = rss::parse(text).map_err(|e| e.reason.clone())?;
                validate(&[Component { product, feed }], date).map_err(|e| e.reason)
            });
            match quotes {
                Ok(quotes) => batch.push((product, date, quotes)),
                Err(reason) => tracing::warn!(%reason, %date, %product, "history seed feed rejected"),
            }
        }
        if back % DAYS_PER_WRITE == 1 || back == 1 {
            write(history, &mut batch, &mut total).await;
        }
    }
    write(history, &mut batch, &mut total).await;
    total
}

async fn write(
    history: &Arc<dyn HistoryStore>,
    batch: &mut Vec<(ProductCode, Date, Vec<Quote>)>,
    total: &mut HistoryWrite,
) {
    if batch.is_empty() {
        return;
    }
    let extracts: Vec<DayExtract<'_>> = batch
        .iter()
        .map(|(product, date, quotes)| DayExtract { product: *product, date: *date, quotes })
        .collect();
    match history.record(&extracts).await {
        Ok(w) => {
            total.written += w.written;
            total.replaced += w.replaced;
        }
        Err(e) => tracing::warn!(error = %e, "history seed not written"),
    }
    batch.clear();
}

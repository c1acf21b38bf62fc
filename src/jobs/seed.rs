//! Seed the price history with past days (the demo's offline start): statewide feeds of
//! earlier dates go through the real parser and validator into the history store, exactly
//! as a published catalogue extract would.

use std::sync::Arc;

use jiff::civil::Date;

use crate::model::codes::product_codes;
use crate::source::rss;
use crate::source::validate::{Component, validate};
use crate::store::history::{HistoryStore, HistoryWrite};

/// Record the `days` days before `today` for every product, from `feed(product, date)`.
/// A day whose feed does not validate is skipped (and logged), never half-written.
pub async fn seed_history(
    history: &Arc<dyn HistoryStore>,
    today: Date,
    days: i32,
    feed: impl Fn(u8, Date) -> Vec<u8>,
) -> HistoryWrite {
    let mut total = HistoryWrite::default();
    for back in (1..=days).rev() {
        let Ok(date) = today.checked_sub(jiff::Span::new().days(back)) else { continue };
        for product in product_codes() {
            let body = feed(product, date);
            let quotes = std::str::from_utf8(&body).map_err(|e| e.to_string()).and_then(|text| {
                let feed = rss::parse(text).map_err(|e| e.reason.clone())?;
                validate(&[Component { product, feed }], date).map_err(|e| e.reason)
            });
            match quotes {
                Ok(quotes) => match history.record(product, date, &quotes).await {
                    Ok(w) => {
                        total.written += w.written;
                        total.replaced += w.replaced;
                    }
                    Err(e) => tracing::warn!(error = %e, %date, product, "history seed not written"),
                },
                Err(reason) => tracing::warn!(%reason, %date, product, "history seed feed rejected"),
            }
        }
    }
    total
}

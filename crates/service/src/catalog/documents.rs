//! From a parsed query to a document model (`model::documents`): the quotes and stations a
//! document shows (searched by [`super::search`]), their publication status, the provider
//! contributions merged in, and the facts its headers and freshness need ([`Facts`]). `http/`
//! writes the bytes with `render/`, so nothing here knows a media type.

use std::collections::HashMap;

use jiff::Timestamp;
use jiff::civil::Date;

use super::day::RouteCover;
use super::search::{Showing, missing_ids, station_rows};
use super::suburbs;
use super::{
    Catalog, CatalogError, ProfileMap, SelectionPart, merged_profiles, publication_status, selected_quotes,
};
use wafuel_domain::documents::{
    BrandsDoc, Circle, DocumentMeta, LegacyDoc, NextDay, PriceDoc, PublicationStatus, RouteSummary, Scope,
    SnapshotCache, StationsDoc, StatusDoc, price_rows,
};
use wafuel_domain::key::StationId;
use wafuel_domain::price::Tenths;
use wafuel_domain::profile::Merged;
use wafuel_domain::station::{Quote, tenths};
use wafuel_domain::time::{Day, publication_at, tomorrow_published};
use wafuel_query::Selection;
use wafuel_query::stations::{OpenAt, StationsQuery};

/// What a document's headers and freshness are made of, besides its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Facts {
    /// The Perth day the prices are for.
    pub date: Date,
    /// When the oldest snapshot behind the document was fetched.
    pub fetched_at: Timestamp,
    /// When the document stops being true (snapshot expiry, or a profile's deadline).
    pub expires_at: Timestamp,
    pub status: PublicationStatus,
    /// Whether the prices came from the store or had to be fetched.
    pub cache: SnapshotCache,
}

/// The quotes of a price document with what its model needs besides them.
struct Priced<'a> {
    quotes: Vec<&'a Quote>,
    enrichment: HashMap<StationId, Merged>,
    facts: Facts,
}

/// What a selection's document is about.
fn scope(selection: &Selection) -> Scope {
    Scope { date: selection.date, products: selection.products.clone(), expand: selection.expand }
}

impl Catalog {
    /// The `/v1` document of a selection.
    pub async fn v1_document<'m>(
        &self,
        selection: &Selection,
        meta: &'m DocumentMeta,
    ) -> Result<(PriceDoc<'m>, Facts), CatalogError> {
        let data = self.prices().selection(selection).await?;
        let profiles = self.profiles(self.now()).await;
        let priced = self.priced(selection, &data, &profiles);
        let doc = PriceDoc {
            scope: scope(selection),
            rows: price_rows(priced.quotes, &selection.date.to_string()),
            fetched_at: priced.facts.fetched_at,
            status: priced.facts.status,
            meta,
            enrichment: priced.enrichment,
        };
        Ok((doc, priced.facts))
    }

    /// The `/legacy` document of a selection: no profiles merged; items in the source's own
    /// order when one request answers the selection, else by product, price and station.
    pub async fn legacy_document(&self, selection: &Selection) -> Result<(LegacyDoc, Facts), CatalogError> {
        let data = self.prices().selection(selection).await?;
        let mut priced = self.priced(selection, &data, &ProfileMap::default());
        let one_request = data.snapshots.len() == 1 && selection.combinations() == 1;
        if !one_request {
            priced.quotes.sort_by(|a, b| {
                a.product
                    .cmp(&b.product)
                    .then_with(|| a.price.total_cmp(&b.price))
                    .then_with(|| a.station.key.cmp(&b.station.key))
            });
        }
        let doc = LegacyDoc {
            date: selection.date,
            quotes: priced.quotes.into_iter().cloned().collect(),
            multi_product: selection.products.len() > 1,
        };
        Ok((doc, priced.facts))
    }

    /// A price document's quotes, profiles and facts.
    fn priced<'a>(
        &self,
        selection: &Selection,
        data: &'a crate::snapshot::SelectionSnapshots,
        profiles: &ProfileMap,
    ) -> Priced<'a> {
        let now = self.now();
        let quotes = selected_quotes(selection, data);
        let status = publication_status(selection, !quotes.is_empty(), now);
        let (enrichment, expires_at) =
            merged_profiles(quotes.iter().map(|q| &*q.station), profiles, now, data.expires_at);
        let facts = Facts {
            date: selection.date,
            fetched_at: data.fetched_at,
            expires_at,
            status,
            cache: data.cache,
        };
        Priced { quotes, enrichment, facts }
    }

    /// A station document (the list, or `only` that station): one station by its id, nearby
    /// stations by the grid, never a scan of the store. Rows carry the following day's prices
    /// when that day may have any.
    pub async fn stations_document<'m>(
        &self,
        query: &StationsQuery,
        only: Option<&StationId>,
        meta: &'m DocumentMeta,
    ) -> Result<(StationsDoc<'m>, Facts), CatalogError> {
        let base = self.selection(&query.selection).await?;
        let now = self.now();
        // Stations' `open` is evaluated at the query's time, else the answer's own.
        let open_at = match query.open {
            Some(OpenAt::At(at)) => at,
            _ => wafuel_domain::time::perth_now(now).datetime(),
        };
        let next_sel = next_selection(&query.selection, now);
        // The provider's contributions are merged before the search: a station is filtered,
        // timed and shown by the same features and hours.
        let profiles: std::sync::Arc<ProfileMap> = self.profiles(now).await;
        let showing = Showing { open_at, profiles: &profiles, now };
        let next = match &next_sel {
            Some(sel) => Some((sel, self.selection(sel).await?)),
            None => None,
        };
        // The search itself: for a route, CPU-bound and sized by its corridor, so it runs
        // beside the async workers (a nearby or single-station search is a grid lookup).
        let search = || {
            // A route's corridor, boxed once and read against both days' grids.
            let cover = query.route.as_ref().map(|r| RouteCover::new(r.route.clone(), r.detour_m));
            let subset = match (only, query.near, &cover) {
                (Some(id), _, _) => SelectionPart::Station(id),
                (None, Some(point), _) => SelectionPart::Near(point, query.radius_m),
                (None, None, Some(cover)) => SelectionPart::Along(cover),
                (None, None, None) => SelectionPart::All,
            };
            let base_quotes = base.quotes(&query.selection, subset);
            let next_quotes: Option<Vec<_>> = next.as_ref().map(|(sel, data)| data.quotes(sel, subset));
            let rows = station_rows(query, cover.as_ref(), &base_quotes, next_quotes.as_deref(), showing);
            (rows, !base_quotes.is_empty(), next_quotes.map(|q| !q.is_empty()))
        };
        let (mut rows, base_priced, next_priced) = match query.route {
            Some(_) => crate::sync::compute(search).await,
            None => search(),
        };
        // Each fuel's last change, from the runs worked out once per (fuel, day).
        let date = query.selection.date;
        for product in &query.selection.products {
            if !rows.iter().any(|r| r.row.prices.iter().any(|(p, _)| p == product)) {
                continue;
            }
            let runs = self.stations.last_changes.runs(*product, date).await?;
            for row in &mut rows {
                let Some((_, price)) = row.row.prices.iter().find(|(p, _)| p == product) else { continue };
                let change =
                    runs.get(row.row.station.id.as_str()).and_then(|r| r.last_change(date, tenths(*price)));
                row.extra.last_change.push((*product, change.map(|(d, before)| (d, Tenths(before).cents()))));
            }
        }
        if only.is_some() && !base_priced {
            return Err(CatalogError::NotFound);
        }
        let mut expires_at = base.data.expires_at;
        if let Some((_, data)) = &next {
            expires_at = expires_at.min(data.data.expires_at);
        }
        // Today's rows before 14:30 say the next day is not out; at 14:30 the same request
        // names it (prices, change, `meta.next`), so the document is fresh until then only.
        if next_sel.is_none() && query.selection.day == Day::Today {
            expires_at = expires_at.min(publication_at(now));
        }
        // A station's `open` is true until its next closing or opening: the answer is too.
        // `open=now` keeps the stations open now, which changes with any station's hours:
        // the next minute at most.
        match query.open {
            Some(OpenAt::At(_)) => {}
            Some(OpenAt::Now) => expires_at = expires_at.min(next_minute(now)),
            None => {
                let change = rows.iter().filter_map(|r| r.extra.open.next_change()).min();
                if let Some(at) = change {
                    expires_at = expires_at.min(wafuel_domain::time::perth_instant(at));
                }
            }
        }
        // The answer never outlives a profile it shows.
        for row in rows.iter().filter(|r| r.merged.is_some()) {
            if let Some(stored) = profiles.get(&row.row.station.key) {
                expires_at = expires_at.min(stored.next_deadline(now));
            }
        }
        let status = publication_status(&query.selection, base_priced, now);
        let next_date = query.selection.date.tomorrow().unwrap_or(query.selection.date);
        // Without a next selection the following day is tomorrow before 14:30, or the day
        // after tomorrow: not yet published either way.
        let next_status = match (&next_sel, next_priced) {
            (Some(sel), Some(priced)) => publication_status(sel, priced, now),
            _ => PublicationStatus::NotYetPublished,
        };
        let missing = query
            .keep
            .ids
            .as_ref()
            .map(|_| missing_ids(query, &rows).into_iter().map(str::to_string).collect());
        let unknown_suburbs = match &query.selection.suburbs {
            // Named only when some suburb is unknown: absent says every one is known.
            Some(asked) if only.is_none() => {
                let unlisted = suburbs::unlisted(asked, &rows);
                if unlisted.is_empty() {
                    None
                } else {
                    let whole = self.selection(&suburbs::whole_day(&query.selection)).await?;
                    Some(suburbs::unknown(unlisted, &whole)).filter(|u| !u.is_empty())
                }
            }
            _ => None,
        };
        let doc = StationsDoc {
            unknown_suburbs,
            scope: scope(&query.selection),
            near: query.near.map(|centre| Circle { centre, radius_m: query.radius_m }),
            route: query.route.as_ref().map(|r| RouteSummary {
                points: r.route.points().len(),
                length_m: r.route.length_m().round() as i64,
                detour_m: r.detour_m,
            }),
            stop: query.stop.map(|s| (s.fill_tenths, s.consumption_tenths)),
            rows,
            fetched_at: base.data.fetched_at,
            status,
            next: NextDay { date: next_date, status: next_status },
            meta,
            one: only.is_some(),
            missing,
            open_at,
            discounts: query.discounts.as_ref().map(|d| d.iter().map(|(b, t)| (b.get(), *t)).collect()),
        };
        let facts = Facts {
            date: query.selection.date,
            fetched_at: base.data.fetched_at,
            expires_at,
            status,
            cache: base.data.cache,
        };
        Ok((doc, facts))
    }

    /// `/v1/brands`: how many of the day's stations (any product) each brand has.
    pub async fn brands_document(&self, selection: &Selection) -> Result<(BrandsDoc, Facts), CatalogError> {
        let base = self.selection(selection).await?;
        let quotes = base.quotes(selection, SelectionPart::All);
        let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let mut counts: std::collections::BTreeMap<u8, usize> =
            wafuel_domain::codes::BRANDS.iter().map(|b| (b.code, 0)).collect();
        for q in &quotes {
            if seen.insert(q.station.id.as_str()) {
                *counts.entry(q.station.brand.get()).or_default() += 1;
            }
        }
        counts.retain(|code, n| *code != wafuel_domain::codes::UNMAPPED_BRAND || *n > 0);
        let now = self.now();
        let facts = Facts {
            date: selection.date,
            fetched_at: base.data.fetched_at,
            expires_at: base.data.expires_at,
            status: publication_status(selection, !quotes.is_empty(), now),
            cache: base.data.cache,
        };
        let doc = BrandsDoc {
            date: selection.date,
            fetched_at: base.data.fetched_at,
            brands: counts.into_iter().collect(),
        };
        Ok((doc, facts))
    }

    /// `/v1/status`: read from the store (stamps, the history's stations, the newest
    /// wholesale day) and this replica's own record; never a request to the source.
    pub async fn status(&self) -> Result<StatusDoc, CatalogError> {
        use crate::snapshot::catalog_key;
        use wafuel_domain::codes::product_codes;
        let now = self.now();
        let today = wafuel_domain::time::perth_now(now).date();
        let tomorrow = today.tomorrow().unwrap_or(today);
        let mut products = Vec::new();
        for p in product_codes() {
            let today_at = self.prices.published(&catalog_key(p, today)).await?;
            let tomorrow_at = self.prices.published(&catalog_key(p, tomorrow)).await?;
            products.push((p, today_at, tomorrow_at));
        }
        let wholesale_day = self
            .wholesale
            .newest_day(wafuel_domain::codes::ProductCode::UNLEADED, wafuel_domain::wholesale::Centre::Perth)
            .await?;
        let (history, history_stations) = self.history.span().await?;
        let seen = self.prices.seen();
        Ok(StatusDoc {
            now,
            today,
            tomorrow,
            expected_at: publication_at(now),
            products,
            origin_success: seen.origin_success,
            origin_failure: seen.origin_failure,
            warm: seen.warm,
            wholesale_day,
            history,
            history_stations,
            enriched: self.profiles(now).await.len(),
            backfill: self.history.backfill().await,
        })
    }
}

/// The start of the minute after `now`.
fn next_minute(now: Timestamp) -> Timestamp {
    let secs = now.as_second().div_euclid(60) * 60 + 60;
    Timestamp::from_second(secs).unwrap_or(now)
}

/// The selection of the day after the base day, when that day may have prices at `now`.
fn next_selection(selection: &Selection, now: Timestamp) -> Option<Selection> {
    let day = match selection.day {
        Day::Yesterday => Day::Today,
        Day::Today if tomorrow_published(now) => Day::Tomorrow,
        _ => return None,
    };
    Some(Selection { day, date: day.resolve(now), ..selection.clone() })
}

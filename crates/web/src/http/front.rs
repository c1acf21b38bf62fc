//! The fast path of a cached answer: the exact request target (path and raw query) and the
//! negotiated media lead straight to the finished document, without parsing the query
//! again, formatting a cache key or asking the rendered cache.
//!
//! An entry is only a shortcut to a document the rendered cache made: it holds a weak
//! reference (the rendered cache alone decides what stays in memory) and is trusted only
//! while both the document and the query's meaning are unchanged. A query's meaning depends
//! on the clock only through the Perth date and whether tomorrow's prices are published
//! (14:30), so an entry never outlives the next of those boundaries.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, Weak};

use axum::http::request::Parts;
use axum::response::Response;
use jiff::Timestamp;

use super::answer::{PreparedHeads, ServingNow, respond, respond_prepared};
use super::negotiate::Media;
use super::rendered::{Found, Rendered};
use wafuel_domain::time::{PUBLICATION_TIME, at_perth, next_perth_midnight, perth_now};
use wafuel_service::cache_policy::{Freshness, max_age_at};

/// Entries per media before the map is emptied: request targets are client-chosen, so the
/// map is bounded; refilling costs one slow-path request per target.
const MAX_ENTRIES: usize = 4096;
/// Longest target remembered: a route search's target (up to 8 KiB) is answered from the
/// rendered cache instead, so the map's keys stay within a few MiB.
const MAX_TARGET_LEN: usize = 1_280;

/// The constant part of how a route serves its documents.
#[derive(Debug, Clone, Copy)]
pub struct Serving {
    pub media: &'static str,
    pub vary: &'static str,
    pub freshness: Freshness,
}

impl Serving {
    /// How `doc` is served at `now`.
    pub fn at(self, doc: &Rendered, now: Timestamp) -> ServingNow {
        self.fresh(doc, now).at(now)
    }

    /// How `doc` is served from `now` until the next Perth midnight or publication time.
    fn fresh(self, doc: &Rendered, now: Timestamp) -> ServingDoc {
        let (until, cap) = match self.freshness {
            Freshness::Prices => doc.shared_until(now),
            Freshness::Stored => (doc.expires_at, i64::MAX),
        };
        ServingDoc { served: self, until, cap }
    }
}

/// A route's way of serving one document, with its shared freshness worked out.
#[derive(Debug, Clone, Copy)]
struct ServingDoc {
    served: Serving,
    until: Timestamp,
    cap: i64,
}

impl ServingDoc {
    fn at(self, now: Timestamp) -> ServingNow {
        ServingNow {
            media: self.served.media,
            vary: self.served.vary,
            max_age: max_age_at(now, self.until, self.cap),
            fuel_headers: self.served.freshness == Freshness::Prices,
        }
    }
}

#[derive(Debug)]
struct Entry {
    doc: Weak<Rendered>,
    fresh: ServingDoc,
    valid_until: Timestamp,
    /// The answers' headers, prepared when the entry is made.
    heads: PreparedHeads,
}

/// Request target → finished document, one map per representation.
#[derive(Debug, Default)]
pub struct FrontCache {
    maps: [RwLock<HashMap<Box<str>, Entry>>; 3],
}

fn slot(media: Media) -> usize {
    match media {
        Media::JsonApi => 0,
        Media::GeoJson => 1,
        Media::Csv => 2,
    }
}

impl FrontCache {
    /// The document last served for `target` in `media`, while it is still valid at `now`.
    #[cfg(test)]
    fn get(&self, media: Media, target: &str, now: Timestamp) -> Option<(Arc<Rendered>, ServingNow)> {
        self.answer(media, target, now, |doc, served, _| (Arc::clone(doc), served))
    }

    /// `answer` given the document last served for `target` in `media`, how it is served at
    /// `now` and its prepared headers, while the entry is still valid; run under the map's
    /// read lock, so the headers are used where they lie.
    pub fn answer<R>(
        &self,
        media: Media,
        target: &str,
        now: Timestamp,
        answer: impl FnOnce(&Arc<Rendered>, ServingNow, &PreparedHeads) -> R,
    ) -> Option<R> {
        self.answer_if(media, target, now, |_| true, answer)
    }

    /// [`answer`](Self::answer) when `current` accepts the document (a stored document's
    /// counters, say); else `None`, and the slow path decides.
    pub fn answer_if<R>(
        &self,
        media: Media,
        target: &str,
        now: Timestamp,
        current: impl FnOnce(&Rendered) -> bool,
        answer: impl FnOnce(&Arc<Rendered>, ServingNow, &PreparedHeads) -> R,
    ) -> Option<R> {
        let map = wafuel_service::sync::read(&self.maps[slot(media)]);
        let entry = map.get(target)?;
        if now >= entry.valid_until {
            return None;
        }
        let doc = entry.doc.upgrade()?;
        if !current(&doc) {
            return None;
        }
        Some(answer(&doc, entry.fresh.at(now), &entry.heads))
    }

    /// Remember that `target` in `media` is answered by `doc` (a document the rendered cache
    /// holds, fresh at `now`).
    pub fn put(&self, media: Media, target: &str, doc: &Arc<Rendered>, served: Serving, now: Timestamp) {
        let valid_until = doc.expires_at.min(doc.rebuild_at).min(meaning_stable_until(now));
        if now >= valid_until || target.len() > MAX_TARGET_LEN {
            return;
        }
        let fresh = served.fresh(doc, now);
        let heads = PreparedHeads::new(fresh.at(now));
        let mut map = wafuel_service::sync::write(&self.maps[slot(media)]);
        if map.len() >= MAX_ENTRIES && !map.contains_key(target) {
            map.clear();
        }
        map.insert(target.into(), Entry { doc: Arc::downgrade(doc), fresh, valid_until, heads });
    }
}

/// The request target a front-cache entry is keyed on: path and raw query, as sent.
fn target(request: &Parts) -> &str {
    request.uri.path_and_query().map_or("", |pq| pq.as_str())
}

/// The answer straight from the front cache, when it knows this request target: the entry's
/// prepared headers with the Cache-Control of this second.
pub fn from_front(
    front: &FrontCache,
    request: &Parts,
    media: Media,
    now: Timestamp,
    current: impl FnOnce(&Rendered) -> bool,
) -> Option<Response> {
    front.answer_if(media, target(request), now, current, |doc, served, heads| {
        respond_prepared(&request.method, &request.headers, doc, heads, served.max_age)
    })
}

/// Serve a document the slow path found (its query parsed at `parsed`), remembering it for
/// its target when the rendered cache keeps it; its `Cache-Control` is counted from `now`,
/// after the build.
pub fn remember_and_respond(
    front: &FrontCache,
    request: &Parts,
    media: Media,
    (doc, found): (&Arc<Rendered>, Found),
    served: Serving,
    (parsed, now): (Timestamp, Timestamp),
) -> Response {
    if found != Found::BuiltOnce {
        front.put(media, target(request), doc, served, parsed);
    }
    let served = served.at(doc, now);
    respond(&request.method, &request.headers, doc, found == Found::Hit, served)
}

/// The next instant at which the same query text may mean something else: Perth midnight
/// (day words and date windows move) or, before it, today's publication time (tomorrow's
/// prices become visible).
pub fn meaning_stable_until(now: Timestamp) -> Timestamp {
    let publication = at_perth(perth_now(now).date(), PUBLICATION_TIME).timestamp();
    if now < publication { publication } else { next_perth_midnight(now) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::representation::Representation;
    use jiff::civil::date;
    use wafuel_domain::documents::PublicationStatus;
    use wafuel_domain::documents::SnapshotCache;
    use wafuel_domain::time::perth_instant;

    const SERVED: Serving =
        Serving { media: "application/json", vary: "Accept", freshness: Freshness::Prices };

    fn doc(now: Timestamp, expires_at: Timestamp) -> Arc<Rendered> {
        let facts = wafuel_service::catalog::Facts {
            date: date(2026, 11, 23),
            fetched_at: now,
            expires_at,
            status: PublicationStatus::Available,
            cache: SnapshotCache::Miss,
        };
        Arc::new(super::super::rendered::rendered_from(Representation::build(b"{}".to_vec()), &facts, now))
    }

    #[test]
    fn entries_last_while_the_document_and_the_query_meaning_do() {
        let front = FrontCache::default();
        let now = perth_instant(date(2026, 11, 23).at(15, 0, 0, 0));
        let minute = jiff::SignedDuration::from_mins(1);
        let kept = doc(now, now + jiff::SignedDuration::from_hours(6));
        front.put(Media::JsonApi, "/v1?product=1", &kept, SERVED, now);
        assert!(front.get(Media::JsonApi, "/v1?product=1", now).is_some());
        // Another representation, or another spelling of the query, is another target.
        assert!(front.get(Media::Csv, "/v1?product=1", now).is_none());
        assert!(front.get(Media::JsonApi, "/v1?product=01", now).is_none());
        // The rendered cache rebuilds after 15 minutes: so does the fast path.
        assert!(front.get(Media::JsonApi, "/v1?product=1", now + 14 * minute).is_some());
        assert!(front.get(Media::JsonApi, "/v1?product=1", now + 15 * minute).is_none());
        // A document that expires sooner ends its entry sooner.
        let short = doc(now, now + 2 * minute);
        front.put(Media::JsonApi, "/v1?product=4", &short, SERVED, now);
        assert!(front.get(Media::JsonApi, "/v1?product=4", now + 2 * minute).is_none());
        // Once the rendered cache lets a document go, the entry leads nowhere.
        drop(short);
        assert!(front.get(Media::JsonApi, "/v1?product=4", now).is_none());
        // An expired document is never remembered.
        front.put(Media::JsonApi, "/v1?product=5", &doc(now, now), SERVED, now);
        assert!(front.get(Media::JsonApi, "/v1?product=5", now).is_none());
    }

    #[test]
    fn the_map_is_bounded() {
        let front = FrontCache::default();
        let now = perth_instant(date(2026, 11, 23).at(15, 0, 0, 0));
        let kept = doc(now, now + jiff::SignedDuration::from_hours(6));
        for i in 0..MAX_ENTRIES {
            front.put(Media::JsonApi, &format!("/v1?n={i}"), &kept, SERVED, now);
        }
        assert!(front.get(Media::JsonApi, "/v1?n=0", now).is_some());
        front.put(Media::JsonApi, "/v1?n=last", &kept, SERVED, now);
        assert!(front.get(Media::JsonApi, "/v1?n=0", now).is_none(), "emptied when full");
        assert!(front.get(Media::JsonApi, "/v1?n=last", now).is_some());
        assert_eq!(wafuel_service::sync::read(&front.maps[0]).len(), 1);
    }

    #[test]
    fn query_meaning_changes_at_publication_and_midnight() {
        let day = date(2026, 11, 23);
        let morning = perth_instant(day.at(9, 0, 0, 0));
        assert_eq!(meaning_stable_until(morning), perth_instant(day.at(14, 30, 0, 0)));
        let evening = perth_instant(day.at(14, 30, 0, 0));
        assert_eq!(meaning_stable_until(evening), perth_instant(date(2026, 11, 24).at(0, 0, 0, 0)));
    }
}

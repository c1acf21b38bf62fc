//! `GET /v1/events`: Server-Sent Events (docs/api.md "Push: `GET /v1/events` (Server-Sent Events)"). The query is checked first
//! (400), then `Accept` (406), then the stream limit (503); a stream then replays what a
//! resuming client missed, or a `reset`, and follows this replica's fan-out. A heartbeat
//! comment every 15 s keeps proxies from closing an idle stream; on shutdown each stream ends
//! with a comment so the client reconnects (to another replica) with its `Last-Event-ID`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use futures::stream::{self, Stream, StreamExt};
use jiff::civil::Date;
use tokio::sync::broadcast::error::RecvError;

use super::answer::apply_cors;
use super::errors::{ApiError, Flavor};
use super::negotiate::accepts_event_stream;
use super::state::AppState;
use wafuel_domain::codes::ProductCode;
use wafuel_domain::error_code::{ErrorCode, detail};
use wafuel_query::events::{EventsQuery, event_id, parse_events};
use wafuel_service::cache_policy::CachePolicy;
use wafuel_service::catalog::events::{AlertPrice, AlertSlot, Event, EventHub, Resume, StreamSlot};

/// How often an idle stream sends a comment.
pub const HEARTBEAT: Duration = Duration::from_secs(15);
/// What a client should wait before reconnecting (the `retry:` field), in milliseconds.
const RECONNECT_MS: u64 = 3_000;

pub fn methods() -> MethodRouter<Arc<AppState>> {
    get(events)
        .options(|request: Request| async move { super::cors::preflight(request.headers()) })
        .fallback(|| async { ApiError::method_not_allowed().respond(Flavor::JsonApi) })
}

async fn events(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let request = request.into_parts().0;
    match open(&state, &request).await {
        Ok(response) => response,
        Err(e) => e.respond(Flavor::JsonApi),
    }
}

async fn open(state: &AppState, request: &Parts) -> Result<Response, ApiError> {
    let query = parse_events(request.uri.query().unwrap_or(""))?;
    let accept = request.headers.get(header::ACCEPT).map(|v| v.to_str().unwrap_or("\u{0}"));
    if !accepts_event_stream(accept) {
        return Err(ApiError::refused(ErrorCode::NotAcceptable, detail::NOT_ACCEPTABLE_EVENTS));
    }
    // A browser reconnecting sends the id it saw last; it wins over the `since` it began with.
    let since = match request.headers.get("last-event-id") {
        Some(v) => Some(event_id(v.to_str().unwrap_or("")).map_err(ApiError::from)?),
        None => query.since,
    };
    let slot = state.events.open().ok_or_else(ApiError::overloaded)?;
    state.events.start().await.map_err(unavailable)?;
    // The alert is known to the reader before the stream subscribes.
    let alert = query.alert.clone().map(|a| state.events.watch(a));
    let resume = state.events.resume(since).await.map_err(unavailable)?;
    let closing = state.events.closing();
    // What a resuming client missed, each event with its `price` event first when it has one
    // (computed once per catalog: a publish and its updates read the same stored prices).
    let mut missed = Vec::new();
    let mut computed: HashMap<(ProductCode, Date), Option<Arc<AlertPrice>>> = HashMap::new();
    for event in resume.missed.iter().filter(|e| wanted(&query, e)) {
        if let Some(alert) = &alert {
            let data = match computed.get(&(event.product, event.date)) {
                Some(data) => data.clone(),
                None => {
                    let data = state.events.price_for(&alert.alert, event).await;
                    computed.insert((event.product, event.date), data.clone());
                    data
                }
            };
            if let Some(price) = data.and_then(|data| price_sse(event.id, &data)) {
                missed.push(price);
            }
        }
        missed.push(sse(event));
    }
    let hub = state.events.clone();
    let stream = event_stream(query, resume, missed, closing, Watching { _slot: slot, alert, hub });
    let mut response =
        Sse::new(stream).keep_alive(KeepAlive::new().interval(HEARTBEAT).text("heartbeat")).into_response();
    let h = response.headers_mut();
    CachePolicy::NoStore.write_over_library(h);
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // Proxies such as nginx would otherwise hold events back in their buffers.
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    apply_cors(h);
    Ok(response)
}

/// The store cannot say where a stream starts: 503, retry in a few seconds.
fn unavailable(e: wafuel_service::catalog::CatalogError) -> ApiError {
    tracing::warn!(error = %e, "event stream refused: the store is unavailable");
    ApiError::Refused {
        code: ErrorCode::UpstreamUnavailable,
        detail: detail::EVENTS_UNAVAILABLE.into(),
        retry_after: Some(5),
    }
}

/// What a stream holds of the hub while it lives: its place, and its alert if it has one.
struct Watching {
    _slot: StreamSlot,
    alert: Option<AlertSlot>,
    hub: Arc<EventHub>,
}

/// One stream's state as it unfolds.
struct Follow {
    query: EventsQuery,
    /// Highest id sent: an event that arrives both by replay and live goes out once.
    sent: i64,
    pending: std::vec::IntoIter<SseEvent>,
    /// An event to send after the `price` event just sent.
    then: Option<SseEvent>,
    live: tokio::sync::broadcast::Receiver<Arc<wafuel_service::catalog::events::Fanned>>,
    closing: tokio::sync::watch::Receiver<bool>,
    done: bool,
    watching: Watching,
}

fn event_stream(
    query: EventsQuery,
    resume: Resume,
    missed: Vec<SseEvent>,
    closing: tokio::sync::watch::Receiver<bool>,
    watching: Watching,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    let mut first = vec![SseEvent::default().retry(Duration::from_millis(RECONNECT_MS))];
    if let Some(newest) = resume.reset_to {
        first.push(
            SseEvent::default()
                .id(newest.to_string())
                .event("reset")
                .data(format!("{{\"lastEventId\":{newest}}}")),
        );
    }
    first.extend(missed);
    let follow = Follow {
        query,
        sent: resume.after,
        pending: first.into_iter(),
        then: None,
        live: resume.live,
        closing,
        done: false,
        watching,
    };
    stream::unfold(follow, next).map(Ok)
}

async fn next(mut f: Follow) -> Option<(SseEvent, Follow)> {
    if let Some(event) = f.pending.next() {
        return Some((event, f));
    }
    if let Some(event) = f.then.take() {
        return Some((event, f));
    }
    if f.done {
        return None;
    }
    // Opened while the server was already shutting down: no change will come to wake it.
    if *f.closing.borrow() {
        f.done = true;
        return Some((goodbye(), f));
    }
    loop {
        tokio::select! {
            received = f.live.recv() => match received {
                Ok(fanned) => {
                    let event = &fanned.event;
                    if event.id <= f.sent {
                        continue;
                    }
                    f.sent = event.id;
                    if !wanted(&f.query, event) {
                        continue;
                    }
                    let price = match &f.watching.alert {
                        None => None,
                        Some(slot) => match fanned.prices.get(&*slot.alert) {
                            Some(data) => data.clone(),
                            // Read before this stream's alert was known: read it now.
                            None => f.watching.hub.price_for(&slot.alert, event).await,
                        },
                    };
                    return Some(match price.and_then(|data| price_sse(event.id, &data)) {
                        Some(price) => {
                            f.then = Some(sse(event));
                            (price, f)
                        }
                        None => (sse(event), f),
                    });
                }
                // Fell too far behind (the client does not read): end the stream rather than
                // buffer without bound; the client resumes with its Last-Event-ID.
                Err(RecvError::Lagged(_)) => {
                    metrics::counter!("wafuel_event_streams_dropped_total").increment(1);
                    return None;
                }
                Err(RecvError::Closed) => return None,
            },
            changed = f.closing.changed() => {
                if changed.is_err() || *f.closing.borrow() {
                    f.done = true;
                    return Some((goodbye(), f));
                }
            }
        }
    }
}

/// The last thing a stream says when the server stops.
fn goodbye() -> SseEvent {
    SseEvent::default().comment("server shutting down; reconnect with Last-Event-ID")
}

fn wanted(query: &EventsQuery, event: &Event) -> bool {
    query.products.contains(&event.product)
}

/// The `price` event of an alert, with the id of the event it comes before; its `data` is
/// written once for every stream with the alert (none if it could not be written, which is a
/// bug, logged: the event itself is still sent).
fn price_sse(id: i64, price: &AlertPrice) -> Option<SseEvent> {
    let data = price.written.get_or_init(|| match crate::render::events::price_alert(&price.report) {
        Ok(data) => Some(Arc::from(data)),
        Err(e) => {
            tracing::error!(error = %e, "price event not written");
            None
        }
    });
    data.as_deref().map(|data| SseEvent::default().id(id.to_string()).event("price").data(data))
}

fn sse(event: &Event) -> SseEvent {
    SseEvent::default().id(event.id.to_string()).event(event.kind.as_str()).data(event.data.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wafuel_domain::documents::{AlertedStation, PriceAlert};

    #[test]
    fn a_price_is_written_once_for_every_stream_with_its_alert() {
        let station = AlertedStation { id: "a1".into(), name: "A".into(), price: 179.9, previous: None };
        let report = PriceAlert {
            date: jiff::civil::date(2026, 11, 25),
            product: ProductCode::UNLEADED,
            stations: vec![station],
        };
        let price = AlertPrice::new(report);
        assert!(price.written.get().is_none(), "nothing is written before a stream sends it");
        assert!(price_sse(7, &price).is_some());
        let first = price.written.get().cloned().flatten().expect("written by the first stream");
        assert!(first.contains("\"a1\""), "{first}");
        assert!(price_sse(8, &price).is_some());
        let again = price.written.get().cloned().flatten().expect("still written");
        assert!(Arc::ptr_eq(&first, &again), "the second stream sends the same text");
    }
}

// Pushed news: the API's event stream (/v1/events), and what the page says when tomorrow's
// prices or an alert arrive.
import { $, ApiError, api, fmtDate, fuelName, recovered, state, trouble, writeHash } from "./core.js";
import { loadStations, stationsPath } from "./map.js";
import { alertHeard } from "./card.js";
import { loadAdvice } from "./market.js";

// ---- pushed news: the API's event stream (/v1/events) ------------------------------------
// One stream, every fuel, held only while someone looks at the page. Browsers give a host six
// HTTP/1.1 connections and a stream keeps one, so pages left in the back/forward cache or
// sitting in other tabs with their streams open starve the page being looked at: its
// requests queue forever. The stream is closed when the page is hidden, left (pagehide, which
// also covers browsers that do not report a navigation as hidden) or frozen, and opened
// again when the page is shown, resuming after the last event id it saw so nothing published
// meanwhile is missed; a page that never saw an id asks again for what it shows. The close
// is immediate: a hidden tab's timers may be held back for many seconds, and reopening costs
// one request. A lost stream is one more task behind the banner (the browser reconnects by
// itself, sending the last event id).

const stream = {
  source: null,
  wanted: false, // the page has prices to keep fresh
  lastId: null, // the newest event id seen, for resuming
  missed: false, // closed by the page without an id to resume from
};
// The page's one stream, readable from a console (and by the browser test), as a module's
// own names are not.
window.wafuelStream = stream;

export function listen() {
  stream.wanted = true;
  openStream();
}

/// The page's one stream: every product, or with an alert that alert's product, station and
/// price (one connection either way: a browser has six per host).
function streamPath() {
  const params = new URLSearchParams();
  if (state.alert) {
    params.set("product", state.alert.fuel);
    params.set("station", state.alert.id);
    params.set("below", state.alert.below.toFixed(1));
  }
  if (stream.lastId) params.set("since", stream.lastId);
  const query = params.toString();
  return query ? `/v1/events?${query}` : "/v1/events";
}

export function openStream() {
  if (stream.source || !stream.wanted || !window.EventSource || document.visibilityState === "hidden") return;
  const source = new EventSource(streamPath());
  stream.source = source;
  source.addEventListener("open", () => {
    recovered("events");
    // Once the server answers again, what a page without an id may have missed.
    if (stream.missed) {
      stream.missed = false;
      catchUp();
    }
  });
  source.addEventListener("error", () => {
    if (source.readyState === EventSource.OPEN || stream.source !== source) return;
    trouble("events", new ApiError(0, "The price service cannot be reached."), () => {
      // Refused outright (the browser gave up): open a new one.
      if (source.readyState === EventSource.CLOSED && stream.source === source) {
        stream.source = null;
        openStream();
      }
      if (!stream.source) recovered("events");
    });
  });
  const seen = (e) => {
    if (e.lastEventId) stream.lastId = e.lastEventId;
  };
  for (const kind of ["published", "updated"]) {
    source.addEventListener(kind, (e) => {
      seen(e);
      news(JSON.parse(e.data));
    });
  }
  source.addEventListener("price", (e) => {
    seen(e);
    alertHeard(JSON.parse(e.data));
  });
  source.addEventListener("reset", (e) => {
    seen(e);
    loadStations();
  });
}

/// What the stream would have said while it was closed, for a page that has no event id to
/// resume from: ask for the prices shown again (one request, usually answered from the
/// server's cache) and redraw only if they changed, so a glance at another tab does not
/// reload the list and the card.
async function catchUp() {
  const shown = state.shown;
  if (!shown) return;
  const stamp = (meta) => JSON.stringify([meta.sourceDate, meta.fetchedAt, meta.publicationStatus, meta.next]);
  try {
    const doc = await api(stationsPath(shown.fuel, state.day));
    if (state.shown === shown && stamp(doc.meta) !== stamp(shown.waiting || shown.doc.meta)) loadStations();
  } catch (error) {
    // Not a task of its own: the stream's next open tries again, and a failure of the
    // server is the banner's.
    if (!(error instanceof ApiError)) throw error;
    stream.missed = true;
  }
}

/// Give the connection back; `openStream` resumes where this one stopped.
export function closeStream() {
  if (!stream.source) return;
  stream.source.close();
  stream.source = null;
  if (!stream.lastId) stream.missed = true;
  // A stream closed on purpose is not a failure to show.
  recovered("events");
}

export function wireStream() {
  window.addEventListener("pagehide", closeStream);
  window.addEventListener("pageshow", openStream);
  document.addEventListener("freeze", closeStream);
  document.addEventListener("resume", openStream);
  document.addEventListener("visibilitychange", () => (document.visibilityState === "hidden" ? closeStream() : openStream()));
}

/// A catalogue was published or changed: the day shown is reloaded; tomorrow, once out, is
/// announced and offered. Which date is tomorrow comes from the API's meta.
function news(data) {
  // Tomorrow published (or today corrected) changes the forecast: tomorrow becomes known.
  if (String(data.product) === state.fuel && state.forecastable) loadAdvice();
  const shown = state.shown;
  if (!shown || String(data.product) !== shown.fuel) return;
  const meta = shown.doc.meta;
  if (data.date === meta.sourceDate && !shown.waiting) {
    loadStations();
  } else if (data.date === tomorrowOf(shown)) {
    announce(data.date, shown.fuel);
    if (state.day === "tomorrow") loadStations();
  }
}

/// The date of the day after the one shown, as the API named it.
export const tomorrowOf = (shown) => (shown.waiting ? shown.waiting.sourceDate : shown.doc.meta.next && shown.doc.meta.next.sourceDate);
/// Tomorrow is out (today is shown, and its `next` says so).
export const published = (shown) => !shown.waiting && !!shown.doc.meta.next && shown.doc.meta.next.publicationStatus === "available";
/// Tomorrow was asked for and is not out: today's prices stand in for it.
export const standingIn = (shown) => !!shown && !!shown.waiting && state.day === "tomorrow";

export function announce(date, fuel) {
  $("news-text").textContent = `${fmtDate(date)}'s ${fuelName(fuel)} prices are out.`;
  $("news-show").hidden = state.day === "tomorrow";
  $("news").hidden = false;
}

export function showTomorrow() {
  $("news").hidden = true;
  state.day = "tomorrow";
  for (const radio of document.querySelectorAll("input[name=day]")) radio.checked = radio.value === "tomorrow";
  writeHash();
  loadStations();
}

// wafuel explorer. Reads only the public API (/v1/stations, /v1/stations/{id}[/history],
// /v1/stats, the brand logos), like any other client, and takes every fact about days from
// it: which day is shown, whether tomorrow is published, when prices are valid. No framework
// and no HTML strings: every node is built with createElement, so the page runs under
// `default-src 'self'`.
"use strict";

const JSONAPI = "application/vnd.api+json";
const FUELS = { 1: "Unleaded", 2: "Premium 95", 4: "Diesel", 5: "LPG", 6: "Premium 98", 10: "E85", 11: "Brand diesel" };
// The API's bounds for `near`: Western Australia.
const WA = { south: -36, north: -13, west: 112, east: 130 };
// Radii tried, widening, when the chosen one holds no station with the fuel.
const RADII = [5, 10, 25, 50, 100];
const PAGE_SIZE = 25;
// How long the banner waits before asking the server again when it cannot be reached.
const RETRY_SECONDS = 5;
// No request waits longer than this: a server that accepts and never answers (or a browser
// that queues the request behind its connection limit) reaches the banner like a refusal.
const DEADLINE_SECONDS = 15;
// While tomorrow is not yet published, ask again this often (the page never guesses from
// its own clock; the API's meta says when the day is there).
const RECHECK_MS = 5 * 60 * 1000;
// FuelWatch's rule, not a fact of this browser's clock: tomorrow's prices appear at about
// 14:30 Perth time.
const PUBLISHED_AT = "2:30 pm";
const ARCHIVE_START = "2001-01-01";
const SVG = "http://www.w3.org/2000/svg";

// An approximate outline of Western Australia (longitude, latitude), enough to place the dots.
const OUTLINE = [
  [129, -14.88], [128.35, -14.9], [128.1, -15.3], [127.75, -14.6], [127.25, -14.1], [126.9, -13.75],
  [126.25, -14.15], [125.6, -14.5], [125.1, -15.2], [124.5, -15.5], [124.4, -16.3], [123.7, -16.3],
  [123.6, -17.2], [122.95, -16.4], [122.2, -17.2], [122.23, -17.96], [121.6, -18.6], [121, -19.5],
  [120, -19.9], [119.1, -20], [118.6, -20.31], [117.8, -20.6], [116.7, -20.62], [115.9, -21],
  [115.1, -21.64], [114.65, -21.85], [114.15, -21.8], [113.9, -22.4], [113.75, -23.1], [113.8, -23.6],
  [113.4, -24.2], [113.66, -24.88], [113.4, -25.6], [113.15, -26.15], [113.8, -26.6], [113.9, -27.2],
  [114.16, -27.71], [114.6, -28.77], [114.95, -29.4], [115.04, -30.3], [115.33, -31.02], [115.68, -31.65],
  [115.74, -32.05], [115.72, -32.53], [115.64, -33.33], [115.35, -33.6], [115, -33.53], [115.14, -34.37],
  [116, -34.85], [116.7, -35.05], [117.9, -35.05], [118.6, -34.6], [119.38, -34.4], [120.1, -33.95],
  [121, -33.85], [121.9, -33.86], [123, -33.9], [123.9, -33.6], [124.7, -32.9], [125.9, -32.3],
  [127.2, -32], [128, -31.75], [129, -31.69],
];
// Towns named at state zoom, placed where their own stations are (no outside map data).
const TOWNS = [
  "PERTH", "MANDURAH", "BUNBURY", "BUSSELTON", "ALBANY", "ESPERANCE", "KALGOORLIE", "GERALDTON",
  "CARNARVON", "EXMOUTH", "KARRATHA", "PORT HEDLAND", "NEWMAN", "BROOME", "DERBY", "KUNUNURRA",
  "NORTHAM", "MERREDIN", "KATANNING", "NARROGIN",
];

// Map projection: equirectangular, longitudes shortened by cos(25°) so the state keeps its shape;
// over a street map (tiles.js, loaded first when the deployment names one) its Web Mercator,
// so every dot sits on its street, and a view as narrow as a few streets.
const MAP_W = 1700;
const MAP_H = 2400;
const TILED = window.wafuelTiles || null;
const project = TILED ? TILED.project : (lng, lat) => [(lng - WA.west) * 90 + 40, (WA.north - lat) * 100 + 40];
const MIN_W = TILED ? TILED.minWidth : 12;
const around = (lng, lat, w) => {
  const [x, y] = project(lng, lat);
  return { x: x - w / 2, y: y - (w * MAP_H) / MAP_W / 2, w, h: (w * MAP_H) / MAP_W };
};
const VIEWS = { wa: { x: 0, y: 0, w: MAP_W, h: MAP_H }, perth: around(116, -32.1, 78) };
// Viridis: readable with every common colour-vision deficiency and in greyscale.
const VIRIDIS = ["#440154", "#482878", "#3e4a89", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b", "#fde725"];

const $ = (id) => document.getElementById(id);

const state = {
  fuel: "1",
  day: "today",
  near: null, // { lat, lng, label }
  station: null,
  sort: "price",
  radius: 10,
  count: PAGE_SIZE,
  view: { ...VIEWS.wa },
  stationRange: "90",
  marketRange: "90",
  // The last good answers, kept whatever fails later: what the page shows.
  shown: null, // { fuel, day, doc, waiting, stations: [{ s, x, y, price }], scale }
  list: null, // { rows, radius, widened, sourceDate, near }
  market: null, // the stats document drawn
  generation: 0,
  listGeneration: 0,
  marketGeneration: 0,
  adviceGeneration: 0,
  forecastable: false, // the market forecast answered: enough history for station forecasts too
  stop: null, // { fill, consumption } in litres and L/100 km, kept in this browser, or null
  favourites: [], // station ids, kept in this browser, in the order added
  favouritesOnly: false, // the list shows the favourites (the API's `id=`) instead of a place
  docket: null, // { brand, cents }: a docket discount at one brand, kept in this browser
  alert: null, // { id, name, fuel, below }: said on this page while it is open
  stationGeneration: 0,
  opener: null,
  listNote: null, // what the list is doing now: "Finding your location…"
  roving: null, // key of the map item holding the map's one tab stop
};

// ---- what a stop costs: the driver's fill and consumption, kept in this browser ---------------

const STOP_KEY = "wafuel.stop";

/// A number with at most one decimal within [low, high], or null.
function oneDecimal(text, low, high) {
  const t = String(text).trim();
  if (!/^[0-9]{1,3}(\.[0-9])?$/.test(t)) return null;
  const v = Number(t);
  return v >= low && v <= high ? v : null;
}

function readStop() {
  try {
    const stop = kept(STOP_KEY);
    const fill = stop && oneDecimal(stop.fill, 1, 200);
    const consumption = stop && oneDecimal(stop.consumption, 1, 30);
    return fill && consumption ? { fill, consumption } : null;
  } catch {
    return null; // storage refused (private mode) or unreadable: ask again
  }
}

function keep(key, value) {
  try {
    if (value) localStorage.setItem(key, JSON.stringify(value));
    else localStorage.removeItem(key);
  } catch {
    // Kept for this visit only.
  }
}

function kept(key) {
  try {
    return JSON.parse(localStorage.getItem(key) || "null");
  } catch {
    return null;
  }
}

// ---- favourites and a docket discount, kept in this browser too --------------------------

const FAVOURITES_KEY = "wafuel.favourites";
const DOCKET_KEY = "wafuel.docket";
// The API's own bound for `id=`.
const MAX_FAVOURITES = 50;

function readFavourites() {
  const ids = kept(FAVOURITES_KEY);
  return Array.isArray(ids) ? [...new Set(ids.filter((id) => /^[0-9a-f]{64}$/.test(id)))].slice(0, MAX_FAVOURITES) : [];
}

function readDocket() {
  const d = kept(DOCKET_KEY);
  const brand = d && Number.isInteger(d.brand) && d.brand > 0 && d.brand < 256 ? d.brand : null;
  const cents = d && oneDecimal(d.cents, 0.1, 50);
  return brand && cents ? { brand, cents } : null;
}

/// The API's `discount=`: sorting, ranks and costs then use the price less the docket.
const docketQuery = () => (state.docket ? `&discount=${state.docket.brand}:${state.docket.cents}` : "");

/// What the driver pays: the API's effective price where a docket applies, else the price.
const paid = (a, fuel) => (a.price.effective && typeof a.price.effective[fuel] === "number" ? a.price.effective[fuel] : a.price.products[fuel]);

/// Cents as dollars: 8512 → "$85.12".
const dollars = (c) => `$${(c / 100).toFixed(2)}`;

// ---- small DOM helpers ---------------------------------------------------------------------

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  return fill(node, props, children);
}

function svgEl(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  return fill(node, { attrs }, children);
}

function fill(node, props, children) {
  if (props.class) node.setAttribute("class", props.class);
  if (props.text !== undefined) node.textContent = props.text;
  for (const [k, v] of Object.entries(props.attrs || {})) {
    if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const [event, handler] of Object.entries(props.on || {})) node.addEventListener(event, handler);
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
const narrow = () => window.matchMedia("(max-width: 899px)").matches;
const reducedMotion = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

// ---- formatting ----------------------------------------------------------------------------

const cents = (v) => (typeof v === "number" ? v.toFixed(1) : "–");
const fuelName = (code) => FUELS[code] || `Fuel ${code}`;
const asDate = (iso) => new Date(`${iso}T00:00:00Z`);
const isoDate = (time) => new Date(time).toISOString().slice(0, 10);
const addDays = (iso, days) => isoDate(asDate(iso).getTime() + days * 86400000);
const dateFormat = new Intl.DateTimeFormat("en-AU", { weekday: "long", day: "numeric", month: "short", timeZone: "UTC" });
const shortDate = new Intl.DateTimeFormat("en-AU", { day: "numeric", month: "short", timeZone: "UTC" });
const monthYear = new Intl.DateTimeFormat("en-AU", { month: "short", year: "numeric", timeZone: "UTC" });
const perthTime = new Intl.DateTimeFormat("en-AU", { hour: "numeric", minute: "2-digit", timeZone: "Australia/Perth" });
const perthDay = new Intl.DateTimeFormat("en-AU", { weekday: "short", timeZone: "Australia/Perth" });
const weekdayOf = (iso) => asDate(iso).toLocaleDateString("en-AU", { weekday: "long", timeZone: "UTC" });
const fmtDate = (iso) => dateFormat.format(asDate(iso));
// Times read the way people write them ("6:00 am"), whatever space the browser's ICU puts
// before the day period.
const clock = (time) => perthTime.format(new Date(time)).replace(/\s/g, " ").toLowerCase();
const titleCase = (s) => s.toLowerCase().replace(/\b[a-z]/g, (c) => c.toUpperCase());

function distance(metres) {
  return metres < 1000 ? `${metres} m` : `${(metres / 1000).toFixed(metres < 10000 ? 1 : 0)} km`;
}

function minutesWords(minutes) {
  if (minutes < 1) return "less than a minute";
  if (minutes < 90) return `${Math.round(minutes)} min`;
  const hours = minutes / 60;
  return hours < 36 ? `${Math.round(hours)} h` : `${Math.round(hours / 24)} days`;
}

/// ▲ or ▼ with the cents tomorrow differs by, or "no change".
function change(delta) {
  if (typeof delta !== "number") return null;
  if (delta > 0) return el("span", { class: "change up", text: `▲ ${delta.toFixed(1)}`, attrs: { title: `${delta.toFixed(1)} c/L dearer tomorrow` } });
  if (delta < 0) return el("span", { class: "change down", text: `▼ ${Math.abs(delta).toFixed(1)}`, attrs: { title: `${Math.abs(delta).toFixed(1)} c/L cheaper tomorrow` } });
  return el("span", { class: "change same", text: "= 0.0", attrs: { title: "Same price tomorrow" } });
}

function hoursToday(attrs, iso) {
  if (attrs.is24Hours) return "Open 24 hours";
  const day = iso ? weekdayOf(iso) : null;
  const hours = attrs.openHours && day ? attrs.openHours[day] : null;
  if (!hours) return "Hours not listed";
  return hours === "Closed" ? `Closed ${day}` : `${day} ${hours.replaceAll(",", ", ")}`;
}

const brandOf = (attrs) => (typeof attrs.brand === "object" && attrs.brand ? attrs.brand : { name: "", logo: "/static/image/brand/generic.svg" });

// ---- the API -------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message, code, retryAfter) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
  /// The server is unreachable or cannot answer now: the banner's business, not a fact
  /// about the data.
  get connection() {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

/// GET a JSON:API document; the server's `Date` rides along as `served` (milliseconds), so
/// the age of a price is measured on the server's clock, not the browser's. Every request,
/// body included, ends within DEADLINE_SECONDS: one that misses it is a connection failure
/// (status 0) and goes to the banner with its retry.
async function api(path) {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), DEADLINE_SECONDS * 1000);
  try {
    return await answer(await fetch(path, { headers: { Accept: JSONAPI }, signal: deadline.signal }));
  } catch (error) {
    if (error instanceof ApiError) throw error;
    if (deadline.signal.aborted) {
      throw new ApiError(0, `The price service did not answer within ${DEADLINE_SECONDS} s.`);
    }
    throw new ApiError(0, "The price service cannot be reached.");
  } finally {
    clearTimeout(timer);
  }
}

async function answer(response) {
  if (response.ok) {
    const doc = await response.json();
    doc.served = Date.parse(response.headers.get("date") || "") || null;
    return doc;
  }
  const body = await response.json().catch(() => null);
  const error = body && Array.isArray(body.errors) ? body.errors[0] : null;
  const detail = (error && error.detail) || `The price service answered ${response.status}.`;
  const retryAfter = Number.parseInt(response.headers.get("retry-after") || "", 10);
  throw new ApiError(response.status, detail, error && error.code, Number.isFinite(retryAfter) ? retryAfter : null);
}

// ---- the one connection banner -------------------------------------------------------------
// Every request that fails for want of the server lands here: its task is kept, the banner
// says so once (never one message per request) and counts down to the next attempt, and the
// tasks run again on their own until they succeed. What was drawn before stays drawn.

const failing = new Map(); // task name → function that runs it again
const retry = { what: "", at: 0, timer: null };

function trouble(name, error, again) {
  failing.set(name, again);
  const seconds = clamp(error.retryAfter || RETRY_SECONDS, 1, 60);
  retry.what = error.message;
  retry.at = Date.now() + seconds * 1000;
  $("banner").hidden = false;
  countdown();
}

/// The banner's words: what failed, that the page keeps what it had, and when it tries again.
function bannerSays(when) {
  const kept = state.shown ? " The prices on the page are the last ones loaded." : "";
  $("banner-text").textContent = `${retry.what}${kept} ${when}`;
}

/// Rewrites the banner once a second ("Retrying in 4 s…"), then runs the failed tasks.
function countdown() {
  clearTimeout(retry.timer);
  const left = retry.at - Date.now();
  if (left <= 0) {
    retryAll();
    return;
  }
  const seconds = Math.ceil(left / 1000);
  bannerSays(`Retrying in ${seconds} s…`);
  // Wake at the next whole second left, so the number shown is never a second off.
  retry.timer = setTimeout(countdown, left - (seconds - 1) * 1000);
}

function recovered(name) {
  failing.delete(name);
  if (failing.size === 0) {
    clearTimeout(retry.timer);
    $("banner").hidden = true;
  }
}

function retryAll() {
  clearTimeout(retry.timer);
  if (failing.size === 0) return;
  bannerSays("Retrying now…");
  for (const again of [...failing.values()]) again();
}

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

function listen() {
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

function openStream() {
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
function closeStream() {
  if (!stream.source) return;
  stream.source.close();
  stream.source = null;
  if (!stream.lastId) stream.missed = true;
  // A stream closed on purpose is not a failure to show.
  recovered("events");
}

function wireStream() {
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
const tomorrowOf = (shown) => (shown.waiting ? shown.waiting.sourceDate : shown.doc.meta.next && shown.doc.meta.next.sourceDate);
/// Tomorrow is out (today is shown, and its `next` says so).
const published = (shown) => !shown.waiting && !!shown.doc.meta.next && shown.doc.meta.next.publicationStatus === "available";
/// Tomorrow was asked for and is not out: today's prices stand in for it.
const standingIn = (shown) => !!shown && !!shown.waiting && state.day === "tomorrow";

function announce(date, fuel) {
  $("news-text").textContent = `${fmtDate(date)}'s ${fuelName(fuel)} prices are out.`;
  $("news-show").hidden = state.day === "tomorrow";
  $("news").hidden = false;
}

function showTomorrow() {
  $("news").hidden = true;
  state.day = "tomorrow";
  for (const radio of document.querySelectorAll("input[name=day]")) radio.checked = radio.value === "tomorrow";
  writeHash();
  loadStations();
}

// ---- page state in the address, so a view can be shared ------------------------------------

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (FUELS[params.get("fuel")]) state.fuel = params.get("fuel");
  if (["today", "tomorrow"].includes(params.get("day"))) state.day = params.get("day");
  const near = (params.get("near") || "").split(",").map(Number);
  // The same point as now (the address this page wrote) keeps its name ("your location").
  const same = state.near && state.near.lat.toFixed(5) === near[0].toFixed(5) && state.near.lng.toFixed(5) === near[1]?.toFixed(5);
  // A point from a shared address is named by the suburb it is in, once the stations are
  // known (`nearName`).
  if (near.length === 2 && insideWa(near[0], near[1]) && !same) state.near = { lat: near[0], lng: near[1], label: null };
  if (/^[0-9a-f]{64}$/.test(params.get("station") || "")) state.station = params.get("station");
  if (["price", "distance", "name", "cost"].includes(params.get("sort"))) state.sort = params.get("sort");
  if (RADII.includes(Number(params.get("radius")))) state.radius = Number(params.get("radius"));
}

function writeHash() {
  const params = new URLSearchParams({ fuel: state.fuel, day: state.day });
  if (state.near) params.set("near", `${state.near.lat.toFixed(5)},${state.near.lng.toFixed(5)}`);
  if (state.station) params.set("station", state.station);
  if (state.sort !== "price") params.set("sort", state.sort);
  if (state.radius !== 10) params.set("radius", state.radius);
  history.replaceState(null, "", `#${params.toString().replaceAll("%2C", ",")}`);
}

const insideWa = (lat, lng) => lat >= WA.south && lat <= WA.north && lng >= WA.west && lng <= WA.east;

// ---- where suburbs are: learnt from every station the API has listed ------------------------

const places = new Map(); // stationId → { suburb, lat, lng }
let suburbIndex = new Map(); // SUBURB → { name, lat, lng, stations }

/// Up to three known suburbs a few edits from `name` (one in four letters; a letter dropped,
/// added, changed or two swapped), or that begin with it, the closest first: the station
/// API's `didYouMean` rule, so the page and the API suggest alike.
function closeSuburbs(name) {
  const asked = name.toUpperCase();
  const allowed = Math.max(1, Math.floor(asked.length / 4));
  const edits = (a, b) => {
    const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
    for (let i = 1; i <= a.length; i += 1) {
      for (let j = 1; j <= b.length; j += 1) {
        const cost = a[i - 1] === b[j - 1] ? 0 : 1;
        d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
        if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
    return d[a.length][b.length];
  };
  const close = [];
  for (const known of suburbIndex.keys()) {
    const distance = edits(asked, known);
    const prefix = asked.length >= 3 && known.startsWith(asked);
    if (distance <= allowed || prefix) close.push([prefix ? Math.min(distance, allowed) : distance, known]);
  }
  close.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return close.slice(0, 3).map(([, known]) => suburbIndex.get(known).name);
}

/// What a point is called: its own label ("your location", a suburb chosen), else the
/// suburb whose stations' centre is nearest it within 3 km, else its coordinates.
function nearName(near) {
  if (near.label) return near.label;
  let best = null;
  let bestKm = 3;
  for (const entry of suburbIndex.values()) {
    const km = Math.hypot((entry.lat - near.lat) * 111.2, (entry.lng - near.lng) * 111.2 * Math.cos((near.lat * Math.PI) / 180));
    if (km < bestKm) {
      best = entry;
      bestKm = km;
    }
  }
  return best ? best.name : `${near.lat.toFixed(3)}, ${near.lng.toFixed(3)}`;
}

function learnPlaces(doc) {
  let learnt = false;
  for (const s of doc.data) {
    if (places.has(s.id)) continue;
    const a = s.attributes;
    places.set(s.id, { suburb: a.address.suburb.toUpperCase(), lat: a.latitude, lng: a.longitude });
    learnt = true;
  }
  if (!learnt) return;
  const index = new Map();
  for (const p of places.values()) {
    const entry = index.get(p.suburb) || { name: titleCase(p.suburb), lat: 0, lng: 0, stations: 0 };
    entry.lat += p.lat;
    entry.lng += p.lng;
    entry.stations += 1;
    index.set(p.suburb, entry);
  }
  for (const entry of index.values()) {
    entry.lat /= entry.stations;
    entry.lng /= entry.stations;
    [entry.x, entry.y] = project(entry.lng, entry.lat);
  }
  suburbIndex = index;
  const names = [...index.values()].map((e) => e.name).sort();
  $("suburbs").replaceChildren(...names.map((n) => el("option", { attrs: { value: n } })));
}

// ---- loading -------------------------------------------------------------------------------

const stationsPath = (fuel, day) => `/v1/stations?product=${fuel}&day=${day}&expand=brand${docketQuery()}`;

let recheckTimer = null;

/// Every station with the chosen fuel on the chosen day: the map, and the list when no place
/// is chosen. Tomorrow before it is published shows today's, saying when tomorrow's come.
async function loadStations() {
  const generation = ++state.generation;
  const { fuel, day } = state;
  describe(`Loading ${fuelName(fuel)} prices…`);
  try {
    let doc = await api(stationsPath(fuel, day));
    let waiting = null;
    if (doc.meta.publicationStatus === "not_yet_published") {
      waiting = doc.meta;
      doc = await api(stationsPath(fuel, "today"));
    }
    if (generation !== state.generation) return;
    recovered("stations");
    learnPlaces(doc);
    fillDocketBrands(doc);
    const before = state.shown;
    showStations(fuel, waiting ? "today" : day, doc, waiting);
    // Tomorrow came out while the page held no stream (hidden, or in the back/forward cache):
    // the same news the stream would have brought.
    const now = state.shown;
    if (before && before.fuel === now.fuel && before.day === "today" && now.day === "today" && !published(before) && published(now)) {
      announce(tomorrowOf(now), now.fuel);
    }
    listen();
    loadList();
    if (state.station) openStation(state.station, { focus: false });
    clearTimeout(recheckTimer);
    if (waiting) recheckTimer = setTimeout(loadStations, RECHECK_MS);
  } catch (error) {
    if (generation !== state.generation) return;
    if (!(error instanceof ApiError)) throw error;
    trouble("stations", error, loadStations);
    describe();
  }
}

function showStations(fuel, day, doc, waiting) {
  const stations = [];
  for (const s of doc.data) {
    const price = s.attributes.price.products[fuel];
    if (typeof price !== "number") continue;
    const [x, y] = project(s.attributes.longitude, s.attributes.latitude);
    stations.push({ s, x, y, price });
  }
  state.shown = { fuel, day, doc, waiting, stations, scale: colourScale(stations.map((p) => p.price)) };
  drawLegend();
  renderMap();
  describe();
}

/// The header's two lines: what is shown (and why, when it is not what was asked), and when
/// those prices are valid and how old they are.
function describe(loading) {
  const shown = state.shown;
  const status = $("status");
  const validity = $("validity");
  if (!shown) {
    status.textContent = loading || "No prices loaded yet.";
    validity.textContent = "";
    return;
  }
  const meta = shown.doc.meta;
  const fuel = fuelName(shown.fuel);
  let what;
  if (standingIn(shown)) {
    // When tomorrow comes and what is on screen instead; no count, which would read as
    // tomorrow's.
    what = `${fmtDate(shown.waiting.sourceDate)}'s prices are not published yet: FuelWatch publishes tomorrow's prices at about ${PUBLISHED_AT} (Perth time). Showing today's ${fuel} prices, ${fmtDate(meta.sourceDate)}.`;
  } else if (shown.stations.length === 0) {
    what = `No station lists ${fuel} for ${fmtDate(meta.sourceDate)}.`;
  } else {
    const next = published(shown) && shown.day === "today" ? " Arrows show tomorrow's change." : "";
    what = `${shown.stations.length} stations with ${fuel} on ${fmtDate(meta.sourceDate)}.${next}`;
  }
  const parts = shown.fuel !== state.fuel ? [`Showing ${fuel}: ${fuelName(state.fuel)} is not loaded yet.`] : [];
  parts.push(what);
  if (loading) parts.push(loading);
  status.textContent = parts.join(" ");
  const from = new Date(meta.validFrom);
  const until = new Date(meta.validUntil);
  const age = meta.fetchedAt && shown.doc.served ? ` (${minutesWords((shown.doc.served - Date.parse(meta.fetchedAt)) / 60000)} old when loaded)` : "";
  validity.textContent = `Prices valid ${perthDay.format(from)} ${clock(from)} to ${perthDay.format(until)} ${clock(until)}, Perth time · fetched from FuelWatch at ${clock(meta.fetchedAt)}${age}`;
}

// ---- the map -------------------------------------------------------------------------------

function drawOutline() {
  const points = OUTLINE.map(([lng, lat]) => project(lng, lat).map((v) => v.toFixed(1)).join(",")).join(" ");
  const view = $("map-view");
  view.append(
    svgEl("polygon", { class: "land", points }),
    svgEl("g", { id: "labels", "aria-hidden": "true" }),
    svgEl("g", { id: "here" }),
    svgEl("g", { id: "dots" }),
  );
}

/// Price → colour along viridis, by rank so one outlier does not wash the rest out.
function colourScale(prices) {
  const sorted = [...prices].sort((a, b) => a - b);
  const rank = (p) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid] < p) lo = mid + 1;
      else hi = mid;
    }
    return sorted.length > 1 ? lo / (sorted.length - 1) : 0;
  };
  return { sorted, colour: (p) => viridis(rank(p)), dark: (p) => rank(p) < 0.55 };
}

function viridis(t) {
  const at = clamp(t, 0, 1) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(at));
  const mix = at - i;
  const rgb = (hex) => [1, 3, 5].map((k) => Number.parseInt(hex.slice(k, k + 2), 16));
  const a = rgb(VIRIDIS[i]);
  const b = rgb(VIRIDIS[i + 1]);
  return `rgb(${a.map((v, k) => Math.round(v + (b[k] - v) * mix)).join(",")})`;
}

function drawLegend() {
  const legend = $("legend");
  legend.replaceChildren();
  const shown = state.shown;
  if (!shown || shown.stations.length === 0) {
    legend.append(svgEl("title", { id: "legend-text" }, "No prices to colour"));
    return;
  }
  const sorted = shown.scale.sorted;
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))];
  const words = `${fuelName(shown.fuel)} price colours: dark purple ${cents(at(0))} cheapest, teal ${cents(at(0.5))} median, yellow ${cents(at(1))} dearest`;
  legend.append(svgEl("title", { id: "legend-text" }, words));
  const steps = 12;
  for (let i = 0; i < steps; i += 1) {
    legend.append(svgEl("rect", { x: 10 + i * 25, y: 2, width: 25, height: 12, fill: viridis(i / (steps - 1)) }));
  }
  legend.append(
    svgEl("text", { x: 10, y: 30 }, `${cents(at(0))} cheapest`),
    svgEl("text", { x: 160, y: 30, "text-anchor": "middle" }, `${cents(at(0.5))} median`),
    svgEl("text", { x: 310, y: 30, "text-anchor": "end" }, `${cents(at(1))} dearest`),
  );
}

/// Map units per CSS pixel of the map as drawn now.
const unit = () => state.view.w / Math.max(1, $("map").clientWidth || 600);

/// Stations in view, grouped by a grid in map units (so panning never regroups them): a
/// cell with one station is that station's dot, a fuller cell is one numbered group. The
/// open station always keeps its own dot.
function mapItems() {
  const shown = state.shown;
  if (!shown) return [];
  const v = state.view;
  const u = unit();
  const cell = (window.matchMedia("(pointer: coarse)").matches ? 44 : 34) * u;
  const margin = 0.5;
  const cells = new Map();
  const items = [];
  for (const p of shown.stations) {
    if (p.x < v.x - v.w * margin || p.x > v.x + v.w * (1 + margin) || p.y < v.y - v.h * margin || p.y > v.y + v.h * (1 + margin)) continue;
    if (p.s.id === state.station) {
      items.push({ key: p.s.id, x: p.x, y: p.y, members: [p] });
      continue;
    }
    const key = `${Math.floor(p.x / cell)}:${Math.floor(p.y / cell)}`;
    const members = cells.get(key);
    if (members) members.push(p);
    else cells.set(key, [p]);
  }
  for (const [key, members] of cells) {
    const x = members.reduce((sum, p) => sum + p.x, 0) / members.length;
    const y = members.reduce((sum, p) => sum + p.y, 0) / members.length;
    items.push({ key: members.length === 1 ? members[0].s.id : `group:${key}`, x, y, members });
  }
  // Reading order (top to bottom, then left to right) for screen readers.
  items.sort((a, b) => a.y - b.y || a.x - b.x);
  return items;
}

let renderQueued = false;
function renderSoon() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    renderMap();
  });
}

function renderMap() {
  const dots = $("dots");
  if (!dots) return;
  const focused = document.activeElement && dots.contains(document.activeElement) ? document.activeElement : null;
  const focusAt = focused ? { key: focused.dataset.key, x: Number(focused.getAttribute("cx")), y: Number(focused.getAttribute("cy")) } : null;
  const shown = state.shown;
  const items = mapItems();
  const u = unit();
  const coarse = window.matchMedia("(pointer: coarse)").matches;
  const r = (coarse ? 12 : 7) * u;
  // Prices are written beside the dots (a group's cheapest beside its count) once the view
  // is a region's, where each label can find room; none at the state's zoom.
  const priceLabels = state.view.w < 300;
  const nodes = [];
  const counts = [];
  const placedDots = [];
  for (const item of items) {
    const prices = item.members.map((p) => p.price);
    const low = Math.min(...prices);
    const group = item.members.length > 1;
    const words = group ? groupWords(item, low, Math.max(...prices)) : stationWords(item.members[0]);
    const chosen = !group && item.key === state.station;
    const circle = svgEl(
      "circle",
      {
        class: `${group ? "group" : "station"}${chosen ? " chosen" : ""}`,
        cx: item.x.toFixed(2),
        cy: item.y.toFixed(2),
        r: ((group ? (coarse ? 1 : 1.45) + Math.min(0.45, Math.log10(item.members.length) * 0.3) : 1) * r * (chosen ? 1.35 : 1)).toFixed(3),
        fill: shown.scale.colour(low),
        role: "button",
        tabindex: "-1",
        "aria-label": words,
        "data-key": item.key,
        "data-id": group ? undefined : item.key,
        "data-count": item.members.length,
      },
      svgEl("title", {}, words),
    );
    nodes.push(circle);
    placedDots.push({ x: item.x, y: item.y, r: Number(circle.getAttribute("r")), key: item.key, low });
    if (group) {
      counts.push(svgEl("text", { class: `count${shown.scale.dark(low) ? " on-dark" : ""}`, x: item.x.toFixed(2), y: (item.y + 4 * u).toFixed(2), "font-size": (11 * u).toFixed(3), "text-anchor": "middle", "aria-hidden": "true" }, String(item.members.length)));
    }
  }
  const layout = new LabelLayout(placedDots, u);
  const prices = priceLabels ? priceLabelNodes(layout, placedDots, u) : [];
  dots.replaceChildren(...nodes, ...counts, ...prices);
  drawPlaceLabels(layout);
  // One tab stop for the whole map: the open station, the item focused before, or the first.
  let stop = nodes.find((n) => n.dataset.key === (focusAt ? focusAt.key : state.roving)) || nodes.find((n) => n.dataset.key === state.station);
  if (!stop && focusAt) stop = nearestNode(nodes, focusAt.x, focusAt.y);
  stop = stop || nodes[0];
  if (stop) {
    stop.setAttribute("tabindex", "0");
    state.roving = stop.dataset.key;
    if (focused) stop.focus({ preventScroll: true });
  } else if (focused) {
    // The view moved past every dot: the focus goes to the map itself, whose keys still
    // move and zoom it, never to the page's body.
    $("map").focus({ preventScroll: true });
  }
  drawHere();
}

function stationWords(p) {
  const a = p.s.attributes;
  return `${a.name}, ${titleCase(a.address.suburb)}: ${cents(p.price)}`;
}

function groupWords(item, low, high) {
  const counts = new Map();
  for (const p of item.members) {
    const suburb = titleCase(p.s.attributes.address.suburb);
    counts.set(suburb, (counts.get(suburb) || 0) + 1);
  }
  const around = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
  return `${item.members.length} stations around ${around}: ${cents(low)} to ${cents(high)}. Zoom in`;
}

function nearestNode(nodes, x, y) {
  let best = null;
  let bestD = Infinity;
  for (const n of nodes) {
    const d = Math.hypot(Number(n.getAttribute("cx")) - x, Number(n.getAttribute("cy")) - y);
    if (d < bestD) {
      best = n;
      bestD = d;
    }
  }
  return best;
}

/// Suburb names placed at the mean position of their own stations, the busiest first,
/// skipping any that would overlap one already placed. At state zoom, only towns.
/// Where the map's words may go: a label is placed only where it covers no dot but its own
/// and no label placed before it, so prices and place names never hide each other or sit
/// under another station (on a phone's big dots as on a desktop's). Boxes are in map units,
/// text measured in the page's own font.
class LabelLayout {
  constructor(dots, u) {
    this.dots = dots;
    this.u = u;
    this.boxes = [];
    this.context = document.createElement("canvas").getContext("2d");
    this.family = getComputedStyle($("map")).fontFamily;
  }

  /// The width in map units of `text` at `px` CSS pixels.
  width(text, px) {
    this.context.font = `600 ${px}px ${this.family}`;
    return this.context.measureText(text).width * this.u;
  }

  /// The first free spot of `text` around a point (a dot of radius `r`, or a bare place) as
  /// `{x, y, anchor}`, or null; `own` is the key of the dot it belongs to.
  place(text, px, at, r, own) {
    const u = this.u;
    const size = px * u;
    const w = this.width(text, px);
    // A label's box: its glyphs' full height and the halo drawn around them.
    const pad = 2 * u;
    const box = (x0, baseline) => ({ x0: x0 - pad, x1: x0 + w + pad, y0: baseline - 0.95 * size - pad, y1: baseline + 0.3 * size + pad });
    const gap = r + 3 * u;
    // Right, left, above, below, then the four corners (a corner's box clears the circle
    // diagonally: 0.71 of the gap each way).
    const above = at.y - gap - 0.3 * size;
    const below = at.y + gap + 0.95 * size;
    const side = gap * 0.71;
    const spots = [
      { x: at.x + gap, y: at.y + 0.33 * size, anchor: "start", box: box(at.x + gap, at.y + 0.33 * size) },
      { x: at.x - gap, y: at.y + 0.33 * size, anchor: "end", box: box(at.x - gap - w, at.y + 0.33 * size) },
      { x: at.x, y: above, anchor: "middle", box: box(at.x - w / 2, above) },
      { x: at.x, y: below, anchor: "middle", box: box(at.x - w / 2, below) },
      { x: at.x + side, y: at.y - side - 0.3 * size, anchor: "start", box: box(at.x + side, at.y - side - 0.3 * size) },
      { x: at.x + side, y: at.y + side + 0.95 * size, anchor: "start", box: box(at.x + side, at.y + side + 0.95 * size) },
      { x: at.x - side, y: at.y - side - 0.3 * size, anchor: "end", box: box(at.x - side - w, at.y - side - 0.3 * size) },
      { x: at.x - side, y: at.y + side + 0.95 * size, anchor: "end", box: box(at.x - side - w, at.y + side + 0.95 * size) },
    ];
    const overlaps = (a, b) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
    // The box already holds the halo's pad: a dot whose rim it reaches is covered.
    const covers = (b, d) => Math.hypot(d.x - clamp(d.x, b.x0, b.x1), d.y - clamp(d.y, b.y0, b.y1)) < d.r;
    for (const spot of spots) {
      if (this.boxes.some((b) => overlaps(b, spot.box))) continue;
      if (this.dots.some((d) => d.key !== own && covers(spot.box, d))) continue;
      this.boxes.push(spot.box);
      return spot;
    }
    return null;
  }
}

/// The price beside each dot that has room for it, the cheapest placed first.
function priceLabelNodes(layout, dots, u) {
  const nodes = [];
  for (const d of [...dots].sort((a, b) => a.low - b.low)) {
    const text = cents(d.low);
    const spot = layout.place(text, 12, d, d.r, d.key);
    if (!spot) continue;
    nodes.push(svgEl("text", { class: "price-label", x: spot.x.toFixed(2), y: spot.y.toFixed(2), "font-size": (12 * u).toFixed(3), "text-anchor": spot.anchor, "data-key": d.key, "aria-hidden": "true" }, text));
  }
  return nodes;
}

/// Town names at the state's zoom, suburbs (the busiest first) closer in: each where it has
/// room beside the dots and prices already placed.
function drawPlaceLabels(layout) {
  const labels = $("labels");
  const v = state.view;
  const inView = (e) => e.x > v.x && e.x < v.x + v.w && e.y > v.y && e.y < v.y + v.h;
  let candidates;
  if (v.w > 500) candidates = TOWNS.map((t) => suburbIndex.get(t)).filter(Boolean);
  else candidates = [...suburbIndex.values()].sort((a, b) => b.stations - a.stations);
  const nodes = [];
  for (const entry of candidates) {
    if (!inView(entry) || nodes.length >= 24) continue;
    // Beside the dot it lies under (its own stations' group, as a rule), else beside the
    // place itself or the dots next to it, the nearest first: the first with room. A place
    // under a dot never borrows a neighbour's room (the neighbour's own town needs it).
    const near = layout.dots
      .map((d) => [Math.hypot(d.x - entry.x, d.y - entry.y) - d.r, d])
      .filter(([gap]) => gap < 30 * layout.u)
      .sort((a, b) => a[0] - b[0])
      .map(([, d]) => d);
    const under = near.length && Math.hypot(near[0].x - entry.x, near[0].y - entry.y) < near[0].r;
    const anchors = under ? [near[0]] : [{ x: entry.x, y: entry.y, r: 0 }, ...near];
    let spot = null;
    for (const at of anchors) {
      spot = layout.place(entry.name, 13, at, at.r, null);
      if (spot) break;
    }
    if (!spot) continue;
    nodes.push(svgEl("text", { class: "place", x: spot.x.toFixed(2), y: spot.y.toFixed(2), "font-size": (13 * layout.u).toFixed(3), "text-anchor": spot.anchor }, entry.name));
  }
  labels.replaceChildren(...nodes);
}

function setView(view) {
  const w = clamp(view.w, MIN_W, MAP_W);
  const h = (w * MAP_H) / MAP_W;
  // The whole state in view is one fixed frame: zooming out at "All WA" never drifts.
  const x = w >= MAP_W ? 0 : clamp(view.x, -w * 0.5, MAP_W - w * 0.5);
  const y = w >= MAP_W ? 0 : clamp(view.y, -h * 0.5, MAP_H - h * 0.5);
  const changedScale = Math.abs(w - state.view.w) > 1e-9;
  state.view = { x, y, w, h };
  $("map").setAttribute("viewBox", `${x.toFixed(3)} ${y.toFixed(3)} ${w.toFixed(3)} ${h.toFixed(3)}`);
  if (TILED) TILED.follow(state.view);
  if (changedScale) renderSoon();
}

/// Zoom by `factor` about a point of the map (its centre by default); the point stays put.
function zoom(factor, about) {
  const v = state.view;
  const [ax, ay] = about || [v.x + v.w / 2, v.y + v.h / 2];
  const w = clamp(v.w * factor, MIN_W, MAP_W);
  const f = w / v.w;
  setView({ x: ax - (ax - v.x) * f, y: ay - (ay - v.y) * f, w });
  renderSoon();
}

function viewAround(lat, lng, widthKm) {
  // About 0.95 map units per km east-west at Perth's latitude, in either projection.
  setView(around(lng, lat, widthKm * 0.95));
  renderSoon();
}

/// Fit a group's stations in view (or zoom in three times about it).
function zoomInto(item) {
  const xs = item.members.map((p) => p.x);
  const ys = item.members.map((p) => p.y);
  const spanW = Math.max(...xs) - Math.min(...xs);
  const spanH = ((Math.max(...ys) - Math.min(...ys)) * MAP_W) / MAP_H;
  const w = clamp(Math.max(spanW, spanH) * 1.8, MIN_W, state.view.w / 3);
  setView({ x: item.x - w / 2, y: item.y - (w * MAP_H) / MAP_W / 2, w });
  renderSoon();
}

function drawHere() {
  const here = $("here");
  if (!here) return;
  here.replaceChildren();
  if (!state.near) return;
  const [cx, cy] = project(state.near.lng, state.near.lat);
  here.append(svgEl("circle", { class: "here", cx, cy, r: (14 * unit()).toFixed(3) }, svgEl("title", {}, `Near ${nearName(state.near)}`)));
}

function mapPoint(clientX, clientY) {
  const svg = $("map");
  const point = svg.createSVGPoint();
  point.x = clientX;
  point.y = clientY;
  const p = point.matrixTransform(svg.getScreenCTM().inverse());
  return [p.x, p.y];
}

function activate(node) {
  const key = node.dataset.key;
  state.roving = key;
  if (node.classList.contains("group")) {
    const item = mapItems().find((i) => i.key === key);
    if (item) zoomInto(item);
    // Keep the keyboard on the map: the nearest dot after the regroup gets the focus.
    requestAnimationFrame(() => requestAnimationFrame(() => {
      const nodes = [...$("dots").querySelectorAll("circle")];
      const next = nearestNode(nodes, Number(node.getAttribute("cx")), Number(node.getAttribute("cy")));
      if (next && document.activeElement === document.body) next.focus({ preventScroll: true });
    }));
  } else {
    openStation(key, { opener: node });
  }
}

function wireMap() {
  const svg = $("map");
  const pointers = new Map();
  let drag = null;
  let pinch = null;
  let suppressClick = false;
  svg.addEventListener("pointerdown", (e) => {
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (e.pointerType === "mouse" && e.button === 0) drag = { x: e.clientX, y: e.clientY, view: { ...state.view }, moved: false };
    if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      pinch = { distance: Math.hypot(a.x - b.x, a.y - b.y), view: { ...state.view }, mid: mapPoint((a.x + b.x) / 2, (a.y + b.y) / 2) };
    }
  });
  svg.addEventListener("pointermove", (e) => {
    if (pointers.has(e.pointerId)) pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pinch && pointers.size === 2) {
      // Two fingers: zoom about the point first held between them, which follows the fingers.
      const [a, b] = [...pointers.values()];
      const now = Math.hypot(a.x - b.x, a.y - b.y);
      const w = clamp((pinch.view.w * pinch.distance) / Math.max(1, now), MIN_W, MAP_W);
      const rect = svg.getBoundingClientRect();
      const per = w / rect.width;
      const mx = (a.x + b.x) / 2 - rect.left;
      const my = (a.y + b.y) / 2 - rect.top;
      setView({ x: pinch.mid[0] - mx * per, y: pinch.mid[1] - my * per, w });
      suppressClick = true;
      return;
    }
    // One finger scrolls the page (touch-action: pan-y); only a mouse drags the map.
    if (!drag) return;
    const scale = state.view.w / svg.clientWidth;
    const dx = e.clientX - drag.x;
    const dy = e.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 5) return;
    if (!drag.moved) svg.setPointerCapture(e.pointerId);
    drag.moved = true;
    svg.classList.add("dragging");
    setView({ x: drag.view.x - dx * scale, y: drag.view.y - dy * scale, w: drag.view.w });
  });
  const end = (e) => {
    pointers.delete(e.pointerId);
    if (pointers.size < 2 && pinch) {
      pinch = null;
      renderSoon();
    }
    if (drag && drag.moved) {
      suppressClick = true;
      svg.classList.remove("dragging");
      if (svg.hasPointerCapture(e.pointerId)) svg.releasePointerCapture(e.pointerId);
      renderSoon();
    }
    drag = null;
  };
  svg.addEventListener("pointerup", end);
  svg.addEventListener("pointercancel", end);
  svg.addEventListener("click", (e) => {
    if (suppressClick) {
      suppressClick = false;
      return;
    }
    const node = e.target.closest && e.target.closest("#dots circle");
    if (node) activate(node);
  });
  // A plain wheel scrolls the page; Ctrl + wheel (and a trackpad's pinch) zooms the map.
  svg.addEventListener("wheel", (e) => {
    if (!e.ctrlKey && !e.metaKey) return;
    e.preventDefault();
    zoom(e.deltaY > 0 ? 1.25 : 0.8, mapPoint(e.clientX, e.clientY));
  }, { passive: false });
  // The map itself is a tab stop: with it focused, arrows pan a quarter of the view and
  // + and − zoom about its centre (the dots' own keys below act on a focused dot).
  svg.addEventListener("keydown", (e) => {
    if (e.target !== svg) return;
    const directions = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const v = state.view;
    if (directions[e.key]) {
      const [dx, dy] = directions[e.key];
      setView({ x: v.x + dx * 0.25 * v.w, y: v.y + dy * 0.25 * v.h, w: v.w });
      renderSoon();
    } else if (e.key === "+" || e.key === "=") zoom(0.67);
    else if (e.key === "-" || e.key === "−") zoom(1.5);
    else return;
    e.preventDefault();
  });
  // The dots share one tab stop: arrows move to the nearest dot that way, Enter opens it,
  // + and − zoom about it.
  $("dots").addEventListener("keydown", (e) => {
    const node = e.target.closest("circle");
    if (!node) return;
    const directions = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const x = Number(node.getAttribute("cx"));
    const y = Number(node.getAttribute("cy"));
    if (e.key === "Enter" || e.key === " ") activate(node);
    else if (directions[e.key]) moveFocus(node, directions[e.key]);
    else if (e.key === "+" || e.key === "=") zoom(0.67, [x, y]);
    else if (e.key === "-" || e.key === "−") zoom(1.5, [x, y]);
    else return;
    e.preventDefault();
  });
  $("dots").addEventListener("focusin", (e) => {
    const node = e.target.closest("circle");
    if (!node) return;
    for (const other of $("dots").querySelectorAll("circle[tabindex='0']")) if (other !== node) other.setAttribute("tabindex", "-1");
    node.setAttribute("tabindex", "0");
    state.roving = node.dataset.key;
  });
  for (const button of document.querySelectorAll(".zoom button")) {
    button.addEventListener("click", () => {
      const view = button.getAttribute("data-view");
      const direction = button.getAttribute("data-zoom");
      if (view === "near" && state.near) viewAround(state.near.lat, state.near.lng, 30);
      else if (VIEWS[view]) {
        setView({ ...VIEWS[view] });
        renderSoon();
      } else if (direction) zoom(direction === "in" ? 0.67 : 1.5);
    });
  }
  new ResizeObserver(() => renderSoon()).observe(svg);
}

function moveFocus(node, [dx, dy]) {
  const x = Number(node.getAttribute("cx"));
  const y = Number(node.getAttribute("cy"));
  let best = null;
  let bestScore = Infinity;
  for (const other of $("dots").querySelectorAll("circle")) {
    if (other === node) continue;
    const ox = Number(other.getAttribute("cx")) - x;
    const oy = Number(other.getAttribute("cy")) - y;
    const along = ox * dx + oy * dy;
    if (along <= 0) continue;
    const across = Math.abs(ox * dy - oy * dx);
    const score = along + across * 2;
    if (score < bestScore) {
      best = other;
      bestScore = score;
    }
  }
  if (best) {
    best.focus();
    const bx = Number(best.getAttribute("cx"));
    const by = Number(best.getAttribute("cy"));
    const v = state.view;
    if (bx < v.x || bx > v.x + v.w || by < v.y || by > v.y + v.h) setView({ x: bx - v.w / 2, y: by - v.h / 2, w: v.w });
  } else {
    const v = state.view;
    setView({ x: v.x + dx * 0.25 * v.w, y: v.y + dy * 0.25 * v.h, w: v.w });
    renderSoon();
  }
}

// ---- the station list ----------------------------------------------------------------------

function locate() {
  if (!navigator.geolocation) {
    listNote("This browser cannot share a location; type a suburb instead.");
    return;
  }
  listNote("Finding your location…");
  navigator.geolocation.getCurrentPosition(
    (position) => {
      const { latitude, longitude } = position.coords;
      if (!insideWa(latitude, longitude)) {
        listNote("You seem to be outside Western Australia; type a WA suburb instead.");
        return;
      }
      setNear(latitude, longitude, "your location");
    },
    (error) => {
      listNote(error.code === error.PERMISSION_DENIED
        ? "No location allowed; type a suburb instead."
        : "Your location could not be found; type a suburb instead.");
      $("suburb").focus();
    },
    { timeout: 10000, maximumAge: 600000 },
  );
}

function setNear(lat, lng, label) {
  state.near = { lat, lng, label };
  $("view-near").disabled = false;
  writeHash();
  viewAround(lat, lng, 30);
  loadList();
}

/// The day the list and card ask for: the one shown (today while tomorrow is not published).
const shownDay = () => (state.shown ? state.shown.day : state.day);

/// The same query any client would send for stations near a point.
function nearQuery(near, radius, sort) {
  const stop = state.stop ? `&fill=${state.stop.fill}&consumption=${state.stop.consumption}` : "";
  return `/v1/stations?near=${near.lat.toFixed(5)},${near.lng.toFixed(5)}&radius=${radius}&sort=${sort}&product=${state.fuel}&day=${shownDay()}&limit=5000&expand=brand${stop}${openQuery()}${docketQuery()}`;
}

const openQuery = () => (state.openNow ? "&open=now" : "");

/// The favourites, in one request (the API's `id=`): cheapest first, or by name.
const favouritesQuery = () =>
  `/v1/stations?id=${state.favourites.join(",")}&product=${state.fuel}&day=${shownDay()}&sort=${state.sort === "name" ? "name" : "price"}&expand=brand${openQuery()}${docketQuery()}`;

/// Near a point: the API's own order within the radius, widening when nothing is that close.
/// Without a point: every station shown on the map, cheapest (or by name) first.
async function loadList() {
  const shown = state.shown;
  $("sort").querySelector("option[value=distance]").disabled = !state.near;
  $("sort").querySelector("option[value=cost]").disabled = !state.near || !state.stop;
  $("radius").disabled = !state.near;
  // The cost of a stop needs a place to drive from and the driver's fill and consumption.
  if (state.sort === "cost" && (!state.near || !state.stop)) {
    state.sort = "price";
    $("sort").value = state.sort;
  }
  if (!shown) return;
  if (state.favouritesOnly) return loadFavourites();
  if (!state.near) {
    if (state.sort === "distance") state.sort = "price";
    $("sort").value = state.sort;
    const rows = shown.stations.map((p) => p.s).filter((s) => !state.openNow || s.attributes.open === true);
    const price = (s) => paid(s.attributes, shown.fuel);
    rows.sort(state.sort === "name"
      ? (a, b) => a.attributes.name.localeCompare(b.attributes.name)
      : (a, b) => price(a) - price(b) || a.attributes.name.localeCompare(b.attributes.name));
    state.list = { rows, near: null, fuel: shown.fuel, sourceDate: shown.doc.meta.sourceDate };
    state.count = PAGE_SIZE;
    renderList();
    return;
  }
  const generation = ++state.listGeneration;
  const near = state.near;
  listNote(`Finding ${fuelName(state.fuel)} near ${nearName(near)}…`);
  try {
    let doc = null;
    let radius = state.radius;
    for (radius of RADII.filter((r) => r >= state.radius)) {
      doc = await api(nearQuery(near, radius, state.sort));
      if (doc.data.length > 0) break;
    }
    if (generation !== state.listGeneration || near !== state.near) return;
    recovered("list");
    learnPlaces(doc);
    state.list = { rows: doc.data, near, radius, widened: radius !== state.radius, fuel: state.fuel, sourceDate: doc.meta.sourceDate, stop: doc.meta.stop || null };
    state.count = PAGE_SIZE;
    state.listNote = null;
    renderList();
  } catch (error) {
    if (generation !== state.listGeneration) return;
    if (!(error instanceof ApiError)) throw error;
    // The note stays "Finding …": the banner alone speaks of the failure, and retries.
    trouble("list", error, loadList);
  }
}

async function loadFavourites() {
  const generation = ++state.listGeneration;
  const base = { near: state.near, favourites: true, fuel: state.fuel, missing: [] };
  if (!state.favourites.length) {
    state.list = { ...base, rows: [], sourceDate: state.shown.doc.meta.sourceDate };
    return renderList();
  }
  listNote("Finding your favourites…");
  try {
    const doc = await api(favouritesQuery());
    if (generation !== state.listGeneration) return;
    recovered("list");
    state.list = { ...base, rows: doc.data, sourceDate: doc.meta.sourceDate, missing: doc.meta.missing || [] };
    state.count = PAGE_SIZE;
    state.listNote = null;
    renderList();
  } catch (error) {
    if (generation !== state.listGeneration) return;
    if (!(error instanceof ApiError)) throw error;
    trouble("list", error, loadList);
  }
}

/// What the list is doing now ("Finding your location…"), said before what it shows.
function listNote(text) {
  state.listNote = text;
  renderList();
}

/// The list, its title and its status line, all saying what the rows on screen are: their
/// fuel, their day and their place. Rows of another place than the one asked for are never
/// shown under its name: until the new place's answer arrives the list is empty.
function renderList() {
  const list = state.list && state.list.near === state.near ? state.list : null;
  const rows = list ? list.rows.slice(0, state.count) : [];
  $("station-list").replaceChildren(...rows.map((s, i) => el("li", { attrs: { "data-id": s.id } }, stationRow(s, list, i))));
  const more = $("more");
  const left = list ? list.rows.length - rows.length : 0;
  more.hidden = left <= 0;
  more.textContent = `Show ${Math.min(PAGE_SIZE, left)} more of ${left}`;
  const lead = { price: "Cheapest", distance: "Nearest", name: "Stations", cost: "Cheapest stops" }[state.sort];
  $("list-title").textContent = state.favouritesOnly ? "Your favourites" : state.near ? `${lead} near ${nearName(state.near)}` : `${lead} in all of WA`;
  $("list-status").textContent = [state.listNote, list ? listWords(list) : null].filter(Boolean).join(" ");
}

function listWords(list) {
  const order = { price: "cheapest first", distance: "nearest first", name: "by name", cost: "cheapest stop first (the fill and the drive there and back)" }[state.sort];
  const when = fmtDate(list.sourceDate);
  const fuel = fuelName(list.fuel);
  if (list.favourites) return favouriteWords(list, fuel, when);
  const where = list.near ? `within ${list.radius} km of ${nearName(list.near)}` : "in all of WA";
  const widened = list.widened ? ` (none within ${state.radius} km)` : "";
  if (standingIn(state.shown) && list.sourceDate === state.shown.doc.meta.sourceDate) {
    // Before publication: when tomorrow comes, and whose prices these are; no count.
    return `Today's ${fuel} prices ${where}${widened} (${when}), ${order}; tomorrow's come at about ${PUBLISHED_AT}.`;
  }
  if (list.rows.length === 0) {
    // Only a successful answer for a published day can say this.
    return `No station sells ${fuel} ${where} on ${when}.`;
  }
  const invite = list.near || state.listNote ? "" : " Allow your location or type a suburb for the ones near you.";
  return `${list.rows.length} ${fuel} prices ${where}${widened}, ${order}, ${when}.${invite}${stopWords(list)}`;
}

function favouriteWords(list, fuel, when) {
  if (!state.favourites.length) return "No favourites yet: open a station and choose “Add to favourites”.";
  const missing = list.missing.length ? ` ${list.missing.length} of your ${state.favourites.length} favourites have no ${fuel} price${state.openNow ? " or are closed" : ""} on ${when}.` : "";
  return `${list.rows.length} of your favourites with ${fuel}, ${state.sort === "name" ? "by name" : "cheapest first"}, ${when}.${missing}`;
}

/// The cheapest stop against the cheapest price: "The cheapest stop, Caltex Ellenbrook
/// (2.1 km), costs $85.12 for 50 L with the drive: $1.40 less than filling at the cheapest
/// price, Costco Perth Airport (14.2 km away)."
function stopWords(list) {
  if (!list.stop || !list.rows.length || typeof list.rows[0].attributes.cost !== "number") return "";
  const price = (s) => s.attributes.price.products[list.fuel];
  const by = (key) => list.rows.reduce((best, s) => (key(s) < key(best) ? s : best));
  const cheapestStop = by((s) => s.attributes.cost * 1e6 + s.attributes.distance);
  const cheapestPrice = by((s) => price(s) * 1e7 + s.attributes.distance);
  const litres = `${list.stop.fill} L`;
  const stop = cheapestStop.attributes;
  if (cheapestStop === cheapestPrice || stop.cost === cheapestPrice.attributes.cost) {
    return ` The cheapest price is also the cheapest stop: ${stop.name} (${distance(stop.distance)}), ${dollars(stop.cost)} for ${litres} with the drive.`;
  }
  const saving = cheapestPrice.attributes.cost - stop.cost;
  return ` The cheapest stop, ${stop.name} (${distance(stop.distance)}), costs ${dollars(stop.cost)} for ${litres} with the drive: ${dollars(saving)} less than filling at the cheapest price, ${cheapestPrice.attributes.name} (${distance(cheapestPrice.attributes.distance)} away).`;
}

function stationRow(s, list, index) {
  const a = s.attributes;
  const brand = brandOf(a);
  const price = paid(a, list.fuel);
  const pump = a.price.products[list.fuel];
  const docket = price !== pump ? `${cents(pump)} less your docket` : null;
  const delta = shownDay() === "today" && a.price.change ? a.price.change[list.fuel] : undefined;
  const stop = typeof a.cost === "number" && list.stop ? `${dollars(a.cost)} for ${list.stop.fill} L with the drive` : null;
  const facts = [titleCase(a.address.suburb), typeof a.distance === "number" ? distance(a.distance) : null, docket, stop, hoursToday(a, list.sourceDate)].filter(Boolean).join(" · ");
  const rank = typeof a.rank === "number" ? a.rank : state.sort === "price" ? localRank(list, index) : index + 1;
  return el(
    "button",
    { class: s.id === state.station ? "row chosen" : "row", attrs: { type: "button" }, on: { click: (e) => openStation(s.id, { opener: e.currentTarget }) } },
    el("img", { attrs: { src: brand.logo, alt: "", width: 32, height: 32 } }),
    el("span", { class: "name" }, el("span", { class: "rank", text: `${rank}.` }), a.name),
    el("span", { class: "price", text: cents(price) }),
    el("span", { class: "sub", text: facts }),
    change(delta) || el("span", { class: "change same", text: "" }),
  );
}

/// Equal prices share a rank (1, 2, 2, 4), as the API ranks them near a point.
function localRank(list, index) {
  const price = (s) => paid(s.attributes, list.fuel);
  let i = index;
  while (i > 0 && price(list.rows[i - 1]) === price(list.rows[index])) i -= 1;
  return i + 1;
}

function showMore() {
  const first = state.count;
  state.count += PAGE_SIZE;
  renderList();
  const next = $("station-list").children[first];
  if (next) next.querySelector("button").focus();
}

// ---- the station card ----------------------------------------------------------------------

function openCardPanel(opener) {
  const panel = $("card-panel");
  if (opener) state.opener = opener;
  panel.classList.add("open");
  document.body.classList.add("sheet-open");
}

function closeCard() {
  $("card-panel").classList.remove("open");
  document.body.classList.remove("sheet-open");
  state.station = null;
  writeHash();
  renderSoon();
  for (const row of document.querySelectorAll("#station-list .row.chosen")) row.classList.remove("chosen");
  const opener = state.opener;
  state.opener = null;
  if (opener && opener.isConnected) opener.focus();
}

/// Show the card now and move there: scrolled into view (a bottom sheet on a phone) with the
/// focus on its heading, so the next Tab is inside the card.
function bringCardIntoView(heading) {
  const panel = $("card-panel");
  if (!narrow()) panel.scrollIntoView({ block: "start", behavior: reducedMotion() ? "auto" : "instant" });
  heading.focus({ preventScroll: true });
}

async function openStation(id, { focus = true, opener = null } = {}) {
  const generation = ++state.stationGeneration;
  state.station = id;
  writeHash();
  for (const row of document.querySelectorAll("#station-list li")) row.firstChild.classList.toggle("chosen", row.dataset.id === id);
  renderSoon();
  openCardPanel(opener);
  const card = $("card");
  const fuel = state.fuel;
  const day = shownDay();
  card.setAttribute("aria-busy", "true");
  // The card shown until the new one comes is the last station's: its favourite button
  // would keep that one, not the station just chosen.
  const stale = $("card-favourite");
  if (stale) stale.disabled = true;
  let doc;
  try {
    doc = await api(`/v1/stations/${id}?day=${day}&expand=all`);
  } catch (error) {
    if (generation !== state.stationGeneration) return;
    card.removeAttribute("aria-busy");
    if (error instanceof ApiError && error.connection) {
      trouble("card", error, () => openStation(id, { focus: false }));
      return;
    }
    const heading = el("h3", { attrs: { tabindex: "-1" }, text: "Station not listed" });
    card.replaceChildren(heading, el("p", { class: "hint", text: error.status === 404 ? `This station has no prices on ${day === "today" ? "today's" : "tomorrow's"} list.` : error.message }));
    if (focus) bringCardIntoView(heading);
    return;
  }
  if (generation !== state.stationGeneration) return;
  recovered("card");
  drawCard(doc, fuel, focus);
}

// FuelWatch's feature code of "Open 24 hours".
const OPEN_24_HOURS = 21;

/// An Australian number as people write it: +61893114700 → (08) 9311 4700, +61412345678 →
/// 0412 345 678, +611300123456 → 1300 123 456; anything else as the API gave it.
function phoneText(e164) {
  const forms = [
    [/^\+61([2378])(\d{4})(\d{4})$/, (m) => `(0${m[1]}) ${m[2]} ${m[3]}`],
    [/^\+61(4\d{2})(\d{3})(\d{3})$/, (m) => `0${m[1]} ${m[2]} ${m[3]}`],
    [/^\+61(1[38]00)(\d{3})(\d{3})$/, (m) => `${m[1]} ${m[2]} ${m[3]}`],
  ];
  for (const [form, write] of forms) {
    const m = form.exec(e164);
    if (m) return write(m);
  }
  return e164;
}

function drawCard(doc, fuel, focus) {
  const card = $("card");
  const s = doc.data;
  const a = s.attributes;
  const brand = brandOf(a);
  const hours = a.is24Hours
    ? "Open 24 hours"
    : a.openHours
      ? Object.entries(a.openHours).map(([day, h]) => `${day.slice(0, 3)} ${h.replaceAll(",", ", ")}`).join("; ")
      : "Not listed";
  const named = (list) => (Array.isArray(list) && list.length ? list.map((f) => f.name || f.description || f.code).join(", ") : "None listed");
  // "Open 24 hours" is said under Hours already: not again as a feature.
  const features = (a.siteFeatures || []).filter((f) => !(a.is24Hours && f.code === OPEN_24_HOURS));
  const products = Object.entries(a.price.products).map(([code, price]) =>
    el(
      "li",
      { class: code === fuel ? "chosen" : "" },
      `${fuelName(code)} `,
      el("strong", { text: cents(price) }),
      " ",
      a.price.change ? change(a.price.change[code]) : null,
      docketed(a, code, price),
    ),
  );
  const address = [a.address.street, `${titleCase(a.address.suburb)} ${a.address.postcode || ""}`.trim()].join(", ");
  const last = a.price.lastChange[fuel];
  const at = (t) => (t ? `, ${a.open ? "closes" : "opens"} ${weekdayOf(t.slice(0, 10)).slice(0, 3)} ${clock(t)}` : "");
  const openWords = a.open == null ? null : (a.open ? "Open" : "Closed") + at(a.open ? a.closesAt : a.opensAt);
  const heading = el("h3", { attrs: { tabindex: "-1", id: "station-name" }, text: a.name });
  const range = el(
    "fieldset",
    { class: "range" },
    el("legend", { text: "History" }),
    ...[["90", "90 days"], ["365", "1 year"], ["all", "All"]].map(([value, label]) =>
      el(
        "label",
        {},
        el("input", {
          attrs: { type: "radio", name: "station-range", value, checked: value === state.stationRange },
          on: { change: () => {
            state.stationRange = value;
            stationChart(s.id, a.price.products, fuel);
          } },
        }),
        ` ${label}`,
      ),
    ),
  );
  card.replaceChildren(
    el(
      "div",
      { class: "card-head" },
      el("img", { attrs: { src: brand.logo, alt: brand.name ? `${brand.name} logo` : "", width: 48, height: 48 } }),
      el("div", {}, heading, el("span", { class: "hint", text: brand.name || "" })),
      favouriteButton(s.id),
    ),
    el("ul", { class: "prices", attrs: { "aria-label": `Prices on ${fmtDate(doc.meta.sourceDate)}` } }, products),
    el(
      "dl",
      {},
      el("dt", { text: "Address" }),
      el("dd", { text: address }),
      el("dt", { text: "Phone" }),
      el("dd", {}, a.phone ? el("a", { attrs: { href: `tel:${a.phone}` }, text: phoneText(a.phone) }) : "Not listed"),
      el("dt", { text: "Hours" }),
      el("dd", { text: hours }),
      openWords ? el("dt", { text: "Now" }) : null,
      openWords ? el("dd", { attrs: { id: "card-open" }, text: openWords }) : null,
      el("dt", { text: `${fuelName(fuel)} last changed` }),
      el("dd", { attrs: { id: "card-last-change" }, text: last ? `${fmtDate(last.date)}, from ${cents(last.previous)}` : "Not in the stored history" }),
      el("dt", { text: "Features" }),
      el("dd", { text: named(features) }),
      a.restrictions ? el("dt", { text: "Restrictions" }) : null,
      a.restrictions ? el("dd", { text: named(a.restrictions) }) : null,
    ),
    ...[attribution(a.enrichment)].filter(Boolean),
    alertForm(s.id, a.name, fuel, a.price.products[fuel]),
    range,
    svgEl("svg", { class: "chart", id: "station-chart", viewBox: "0 0 640 220", role: "img", "aria-label": `${fuelName(fuel)} at ${a.name} against the WA median` }),
    el("p", { class: "chart-key", attrs: { id: "station-key" } }, "Loading price history…"),
    el("details", { class: "numbers", attrs: { id: "station-numbers" } }, el("summary", { text: "The numbers behind this chart" })),
  );
  card.removeAttribute("aria-busy");
  if (focus) bringCardIntoView(heading);
  stationChart(s.id, a.price.products, fuel);
}

/// The card's chart of `fuel`, where the station sells it on the list shown: a station
/// without that fuel has no history or forecast of it to ask for (each would be a 404).
function stationChart(id, products, fuel) {
  if (Object.hasOwn(products, fuel)) {
    loadHistory(id, fuel);
    return;
  }
  $("station-key").textContent = `This station lists no ${fuelName(fuel)} price.`;
}

/// " 191.9 with your docket" after a price at the docket's brand.
function docketed(a, code, price) {
  const d = state.docket;
  if (!d || brandOf(a).code !== d.brand || typeof price !== "number") return null;
  return el("span", { class: "hint", text: ` ${cents(Math.round(price * 10 - d.cents * 10) / 10)} with your docket` });
}

/// Add or remove the station from the favourites kept in this browser.
function favouriteButton(id) {
  const mine = () => state.favourites.includes(id);
  const button = el("button", { class: "favourite", attrs: { type: "button", id: "card-favourite" } });
  const say = () => {
    button.setAttribute("aria-pressed", String(mine()));
    button.textContent = mine() ? "★ Favourite" : "☆ Add to favourites";
  };
  button.addEventListener("click", () => {
    if (mine()) state.favourites = state.favourites.filter((f) => f !== id);
    else if (state.favourites.length < MAX_FAVOURITES) state.favourites = [...state.favourites, id];
    else return listNote(`At most ${MAX_FAVOURITES} favourites: remove one first.`);
    keep(FAVOURITES_KEY, state.favourites.length ? state.favourites : null);
    say();
    if (state.favouritesOnly) loadList();
  });
  say();
  return button;
}

/// The docket's brand choices: the brands of the stations shown, by name.
function fillDocketBrands(doc) {
  const select = $("docket-brand");
  const brands = new Map();
  for (const s of doc.data) {
    const b = brandOf(s.attributes);
    if (b.code) brands.set(b.code, b.name);
  }
  if (state.docket && !brands.has(state.docket.brand)) brands.set(state.docket.brand, `Brand ${state.docket.brand}`);
  const known = [...select.options].slice(1).map((o) => o.value).join();
  const sorted = [...brands].sort((x, y) => x[1].localeCompare(y[1]));
  if (known === sorted.map(([code]) => String(code)).join()) return;
  select.replaceChildren(el("option", { attrs: { value: "" }, text: "None" }), ...sorted.map(([code, name]) => el("option", { attrs: { value: code }, text: name })));
  select.value = state.docket ? String(state.docket.brand) : "";
}

/// "Alert me below …": the page's stream carries the alert while the page is open; the
/// server says when a publish brings this station's price to or below it.
function alertForm(id, name, fuel, price) {
  const mine = state.alert && state.alert.id === id && state.alert.fuel === fuel ? state.alert : null;
  const input = el("input", {
    attrs: { id: "alert-below", type: "number", inputmode: "decimal", min: "0.1", max: "999.9", step: "0.1", value: mine ? mine.below.toFixed(1) : typeof price === "number" ? (price - 5).toFixed(1) : "" },
  });
  const said = el("p", { class: "alert-said", attrs: { id: "alert-said", "aria-live": "polite" }, text: mine ? alertWords(mine) : "" });
  const stop = el("button", { attrs: { type: "button", id: "alert-stop", hidden: !mine }, text: "Stop the alert", on: { click: () => {
    setAlert(null);
    said.textContent = "Alert stopped.";
    stop.hidden = true;
  } } });
  const form = el(
    "form",
    { class: "alert-form", attrs: { id: "alert-form" }, on: { submit: (e) => {
      e.preventDefault();
      const below = oneDecimal(input.value, 0.1, 999.9);
      if (below === null) {
        said.textContent = "Give a price in c/L with at most one decimal, such as 179.9.";
        return;
      }
      setAlert({ id, name, fuel, below });
      said.textContent = alertWords(state.alert);
      stop.hidden = false;
    } } },
    el("label", { class: "field" }, `Alert me when ${fuelName(fuel)} here is at or below`, el("span", { class: "unit" }, input, " c/L")),
    el("button", { attrs: { type: "submit" }, text: "Alert me" }),
    stop,
  );
  return el("div", { class: "alert" }, form, said);
}

function alertWords(alert) {
  return `Listening while this page is open: you will see it here when ${alert.name}'s ${fuelName(alert.fuel)} is published at or below ${alert.below.toFixed(1)} c/L.`;
}

/// Set or clear the page's alert and reopen its one stream with it, from the last event seen.
function setAlert(alert) {
  state.alert = alert;
  closeStream();
  openStream();
}

/// A `price` event: the alert's station is at or below the price asked for.
function alertHeard(data) {
  const alert = state.alert;
  if (!alert || String(data.product) !== alert.fuel) return;
  const hit = data.stations.find((s) => s.id === alert.id);
  if (!hit) return;
  const words = `${hit.name}: ${fuelName(alert.fuel)} ${cents(hit.price)} c/L on ${fmtDate(data.date)}, at or below your ${alert.below.toFixed(1)}.`;
  $("alert-news").textContent = words;
  $("alert-news").hidden = false;
  const said = $("alert-said");
  if (said) said.textContent = words;
}

/// `from` for a range, counted back from the day shown (a fact from the API, not the clock).
function rangeFrom(range) {
  if (range === "all") return ARCHIVE_START;
  const last = state.shown ? state.shown.doc.meta.sourceDate : null;
  return last && range !== "90" ? addDays(last, -Number(range) + 1) : null;
}

async function loadHistory(id, fuel) {
  const generation = state.stationGeneration;
  const range = state.stationRange;
  const from = rangeFrom(range);
  const key = $("station-key");
  key.textContent = "Loading price history…";
  const history = api(`/v1/stations/${id}/history?product=${fuel}${from ? `&from=${from}` : ""}`).catch((error) => error);
  // The WA median beside it: daily for 90 days, monthly (or weekly) over longer ranges.
  const market = range === "90" ? Promise.resolve(state.market && state.market.range === "90" ? state.market.doc : null) : api(statsPath(fuel, range)).catch(() => null);
  // The next days as a band after the history: the station's own forecast, when it has one.
  const coming = state.forecastable ? api(`/v1/stations/${id}/forecast?product=${fuel}`).catch(() => null) : Promise.resolve(null);
  const [result, stats, forecast] = await Promise.all([history, market, coming]);
  if (generation !== state.stationGeneration || state.station !== id || !$("station-chart")) return;
  if (result instanceof Error) {
    if (result instanceof ApiError && result.connection) {
      trouble("history", result, () => loadHistory(id, fuel));
      key.textContent = "Loading price history…";
    } else {
      key.textContent = result.status === 404 ? `No ${fuelName(fuel)} price history for this station.` : result.message;
    }
    return;
  }
  recovered("history");
  const points = result.data.attributes.points;
  const first = points.length ? points[0].date : null;
  const median = stats && stats.data.attributes.product === Number(fuel)
    ? stats.data.attributes.days.filter((d) => !first || d.date >= first).map((d) => [d.date, d.median])
    : [];
  const next = forecast && forecast.data.attributes.product === Number(fuel) ? forecast.data.attributes.days : [];
  const last = points.length ? points[points.length - 1] : null;
  // The forecast line starts at the last known price, so the two lines meet.
  const ahead = next.length && last ? [[last.date, last.price], ...next.map((d) => [d.date, d.median])] : [];
  drawChart($("station-chart"), {
    band: next.map((d) => [d.date, d.low, d.high]),
    bandCls: "forecast-band",
    lines: [
      { cls: "median-line", points: median },
      { cls: "series", points: points.map((p) => [p.date, p.price]) },
      { cls: "forecast-line", points: ahead },
    ],
  });
  const period = stats && stats.data.attributes.interval ? ` (${stats.data.attributes.interval}ly mean)` : "";
  key.replaceChildren(
    el("span", { class: "key station" }), " this station ",
    el("span", { class: "key dashed" }), ` WA median${period}`,
    ...(next.length ? [el("span", { class: "key forecast" }), ` the next ${next.length} days, forecast (8 in 10 fall in the band)`] : []),
  );
  const medians = new Map(median);
  numbers($("station-numbers"), `${fuelName(fuel)} at this station, ${points.length} days with a price${next.length ? ", then the forecast" : ""}`, ["Date", "Price", "WA median"],
    [
      ...points.map((p) => [p.date, cents(p.price), medians.has(p.date) ? cents(medians.get(p.date)) : ""]),
      ...next.map((d) => [d.date, d.known ? `${cents(d.median)} (published)` : `${cents(d.median)} forecast (${cents(d.low)}–${cents(d.high)})`, ""]),
    ]);
}

function attribution(enrichment) {
  if (!enrichment) return null;
  const credits = (enrichment.attributions || []).map((a) => el("a", { attrs: { href: a.uri, rel: "noopener noreferrer" }, text: a.displayName }));
  return el(
    "p",
    { class: "attribution" },
    `${enrichment.fields.length ? enrichment.fields.join(", ") : "Details"} from ${enrichment.provider}${enrichment.stale ? " (may be out of date)" : ""}: `,
    el("a", { attrs: { href: enrichment.providerMapsUri, rel: "noopener noreferrer" }, text: "view the place" }),
    credits.length ? ". " : "",
    ...credits.flatMap((c, i) => (i ? [", ", c] : [c])),
  );
}

// ---- charts --------------------------------------------------------------------------------
// Drawn in CSS pixels of the chart as laid out (the viewBox is its own size), so the text is
// 12 px on a phone as on a desktop; redrawn when the chart's width changes.

const charts = new Map(); // svg → its last spec
const chartSizes = new ResizeObserver((entries) => {
  for (const entry of entries) {
    const spec = charts.get(entry.target);
    if (spec) drawChart(entry.target, spec);
  }
});

/// A date axis and a price axis, lines of [date, price] and an optional band of [date, lo, hi].
function drawChart(svg, spec) {
  if (!charts.has(svg)) chartSizes.observe(svg);
  charts.set(svg, spec);
  const { lines = [], band = null } = spec;
  const width = Math.max(240, Math.round(svg.clientWidth || 640));
  const height = Math.max(160, Math.round(svg.clientHeight || 220));
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.replaceChildren();
  const all = [...lines.flatMap((l) => l.points), ...(band || []).flatMap(([d, lo, hi]) => [[d, lo], [d, hi]])];
  if (all.length === 0) {
    svg.append(svgEl("text", { x: width / 2, y: height / 2, "text-anchor": "middle" }, "No data for this range."));
    return;
  }
  const left = 44;
  const right = width - 14;
  const top = 10;
  const bottom = height - 28;
  const times = all.map(([d]) => asDate(d).getTime());
  const t0 = Math.min(...times);
  const t1 = Math.max(...times);
  let lo = Math.min(...all.map(([, v]) => v));
  let hi = Math.max(...all.map(([, v]) => v));
  const pad = Math.max(1, (hi - lo) * 0.08);
  lo -= pad;
  hi += pad;
  // One day (a store that has just started): its point in the middle, one date under it.
  const single = t1 === t0;
  const x = (d) => (single ? (left + right) / 2 : left + ((asDate(d).getTime() - t0) / (t1 - t0)) * (right - left));
  const y = (v) => bottom - ((v - lo) / (hi - lo)) * (bottom - top);
  const step = niceStep((hi - lo) / 4);
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) {
    svg.append(svgEl("line", { class: "axis", x1: left, x2: right, y1: y(v).toFixed(1), y2: y(v).toFixed(1) }));
    svg.append(svgEl("text", { x: left - 6, y: (y(v) + 4).toFixed(1), "text-anchor": "end" }, step < 1 ? v.toFixed(1) : v.toFixed(0)));
  }
  // The price axis's unit, under its numbers, beside the first date.
  svg.append(svgEl("text", { x: 4, y: height - 8, class: "unit-label" }, "c/L"));
  const long = t1 - t0 > 400 * 86400000;
  const label = (d) => (long ? monthYear : shortDate).format(asDate(d));
  const ticks = single ? [[t0, "middle"]] : width < 420 ? [[t0, "start"], [t1, "end"]] : [[t0, "start"], [(t0 + t1) / 2, "middle"], [t1, "end"]];
  for (const [t, anchor] of ticks) {
    const d = isoDate(t);
    svg.append(svgEl("text", { x: x(d).toFixed(1), y: height - 8, "text-anchor": anchor }, label(d)));
  }
  if (band && band.length) {
    const upper = band.map(([d, , h]) => `${x(d).toFixed(1)},${y(h).toFixed(1)}`);
    const lower = band.map(([d, l]) => `${x(d).toFixed(1)},${y(l).toFixed(1)}`).reverse();
    svg.append(svgEl("polygon", { class: spec.bandCls || "band", points: [...upper, ...lower].join(" ") }));
  }
  for (const line of lines) {
    if (line.points.length === 0) continue;
    const points = line.points.map(([d, v]) => `${x(d).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    svg.append(svgEl("polyline", { class: line.cls, points }));
    // A line of one day draws no stroke: its point is a dot.
    if (line.points.length === 1) {
      const [[d, v]] = line.points;
      svg.append(svgEl("circle", { class: `${line.cls} point`, cx: x(d).toFixed(1), cy: y(v).toFixed(1), r: 4 }));
    }
  }
}

function niceStep(raw) {
  const power = 10 ** Math.floor(Math.log10(raw));
  const unitStep = raw / power;
  return (unitStep <= 1 ? 1 : unitStep <= 2 ? 2 : unitStep <= 5 ? 5 : 10) * power;
}

/// The table behind a chart, inside its `<details>`: the same numbers as text.
function numbers(details, caption, head, rows) {
  const summary = details.querySelector("summary");
  const table = el(
    "table",
    {},
    el("caption", { text: caption }),
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { attrs: { scope: "col" }, text: h })))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, el("th", { attrs: { scope: "row" }, text: r[0] }), ...r.slice(1).map((c) => el("td", { text: c }))))),
  );
  details.replaceChildren(summary, el("div", { class: "table-wrap", attrs: { tabindex: "0", role: "region", "aria-label": caption } }, table));
}

// ---- the market panel ----------------------------------------------------------------------

/// Daily rows for 90 days, weekly for a year, monthly back to 2001.
function statsPath(fuel, range) {
  if (range === "all") return `/v1/stats?product=${fuel}&interval=month&from=${ARCHIVE_START}`;
  if (range === "365") return `/v1/stats?product=${fuel}&interval=week&from=${rangeFrom("365")}`;
  return `/v1/stats?product=${fuel}`;
}

async function loadMarket() {
  const generation = ++state.marketGeneration;
  const fuel = state.fuel;
  const range = state.marketRange;
  try {
    const doc = await api(statsPath(fuel, range));
    if (generation !== state.marketGeneration) return;
    recovered("market");
    state.market = { doc, range };
    drawMarket(doc, range);
    // A forecast needs 56 days of history: a younger store is told from the daily market
    // alone, without asking for a forecast that can only be 404.
    const { days, interval } = doc.data.attributes;
    if (interval || days.length > 56) loadAdvice();
    else {
      state.forecastable = false;
      $("advice").hidden = true;
    }
  } catch (error) {
    if (generation !== state.marketGeneration) return;
    if (!(error instanceof ApiError)) throw error;
    if (error.connection) trouble("market", error, loadMarket);
    else $("cycle").textContent = error.message;
  }
}

function drawMarket(doc, range) {
  const { days, cycle, product, interval } = doc.data.attributes;
  const fuel = String(product);
  const span = { 90: "last 90 days", 365: "last year, weekly", all: "since 2001, monthly" }[range];
  // Every label comes from the document drawn, so a failed switch never mislabels it.
  $("market-title").textContent = `The market: ${fuelName(fuel)}, ${span}`;
  // The wholesale line (the terminal gate price) under the retail band, where the store has it.
  const wholesale = days.filter((d) => d.wholesale != null).map((d) => [d.date, d.wholesale]);
  const under = wholesale.length ? ", and the wholesale price as a dashed line" : "";
  $("market-chart").setAttribute("aria-label", `Statewide ${fuelName(fuel)} price, ${span}: lowest to highest band and median line${under}; the numbers are in the table below.`);
  drawChart($("market-chart"), {
    band: days.map((d) => [d.date, d.min, d.max]),
    lines: [{ cls: "market-median", points: days.map((d) => [d.date, d.median]) }, { cls: "market-wholesale", points: wholesale }],
  });
  // While the history is still loading, the market says so and how far (the API's words).
  const loading = doc.meta.history ? ` ${doc.meta.history}` : "";
  $("cycle").textContent = cycleWords(fuel, days, cycle, interval) + loading;
  const margin = marginWords(fuel, days, doc.data.attributes.wholesaleCentre, interval);
  $("margin").textContent = margin;
  $("margin").hidden = !margin;
  $("wholesale-key").hidden = wholesale.length === 0;
  const first = interval ? { week: "Week of", month: "Month of" }[interval] : "Date";
  const head = [first, "Lowest", "Median", "Highest", "Stations"];
  const wide = wholesale.length > 0;
  numbers($("market-numbers"), `${fuelName(fuel)} across WA, ${span}`, wide ? [...head, "Wholesale", "Margin"] : head,
    days.map((d) => {
      const row = [d.date, cents(d.min), cents(d.median), cents(d.max), String(d.stations)];
      return wide ? [...row, d.wholesale == null ? "–" : d.wholesale.toFixed(2), d.margin == null ? "–" : d.margin.toFixed(1)] : row;
    }));
}

/// The latest margin in words, e.g. "Wholesale (Perth's terminal gate price): 195.29 c/L on
/// Wednesday 2 December; the median pump price is 27.3 c/L above it (both include GST)." Empty
/// when the store has no terminal gate price for the fuel.
function marginWords(fuel, days, centre, interval) {
  const latest = [...days].reverse().find((d) => d.margin != null);
  if (!latest || !centre) return "";
  const place = centre.split("-").map((w) => w[0].toUpperCase() + w.slice(1)).join(" ");
  const when = interval ? `in the ${interval} of ${fmtDate(latest.date)} (mean)` : `on ${fmtDate(latest.date)}`;
  const side = latest.margin >= 0 ? `${latest.margin.toFixed(1)} c/L above it` : `${(-latest.margin).toFixed(1)} c/L below it`;
  return `What retailers pay for ${fuelName(fuel)} (${place}'s terminal gate price): ${latest.wholesale.toFixed(2)} c/L ${when}; the median pump price is ${side}, GST included in both.`;
}

/// The detected cycle in words, e.g. "Unleaded prices rise about every 14 days; the last
/// rise from Tuesday 17 Nov to its peak on Wednesday 18 Nov; cheapest day usually Tuesday."
function cycleWords(fuel, days, cycle, interval) {
  const name = fuelName(fuel);
  const latest = days.length ? days[days.length - 1] : null;
  const what = interval ? `the ${interval} of ${fmtDate(latest ? latest.date : "2001-01-01")}` : latest ? fmtDate(latest.date) : "";
  const today = latest ? ` In ${interval ? what : `WA on ${what}`} the median was ${cents(latest.median)} c/L (lowest ${cents(latest.min)}).` : "";
  if (!cycle) {
    const n = days.length;
    const why = !interval && n < 28 ? ` (${n} ${n === 1 ? "day of data is" : "days of data are"} too few to tell)` : "";
    return `${name} shows no regular price cycle${why}.${today}`;
  }
  const cheapest = cycle.cheapestWeekday ? `; cheapest day usually ${cycle.cheapestWeekday}` : "";
  // A rise runs from the cycle's low to its peak: dated by both, not by its peak alone.
  const rise = cycle.lastTrough && cycle.lastTrough < cycle.lastPeak ? `the last rise from ${fmtDate(cycle.lastTrough)} to its peak on ${fmtDate(cycle.lastPeak)}` : `the last rise peaked ${fmtDate(cycle.lastPeak)}`;
  return `${name} prices rise about every ${cycle.periodDays} days; ${rise}${cheapest}.${today}`;
}

// ---- fill now or wait ---------------------------------------------------------------------

/// The forecast's advice for the chosen fuel, statewide, at the top of the near-me panel. A
/// forecast is a help, not the page's purpose: when it cannot be had the line is hidden, with
/// no banner and no retry.
async function loadAdvice() {
  const generation = ++state.adviceGeneration;
  const fuel = state.fuel;
  try {
    const doc = await api(`/v1/forecast?product=${fuel}`);
    if (generation !== state.adviceGeneration) return;
    const [advice, accuracy] = adviceWords(doc);
    $("advice-text").textContent = advice;
    $("advice-accuracy").textContent = accuracy;
    $("advice").hidden = false;
    state.forecastable = true;
  } catch (error) {
    if (generation !== state.adviceGeneration) return;
    if (!(error instanceof ApiError)) throw error;
    state.forecastable = false;
    $("advice").hidden = true;
  }
}

/// "Fill today: Unleaded prices are likely to rise about 14 c/L on Wednesday." or "Wait:
/// Unleaded is about 6 c/L cheaper by Monday.", and the accuracy in words: "Last year,
/// tomorrow's forecast was within 2 c/L on 8 days out of 10."
function adviceWords(doc) {
  const { advice, accuracy, product, days } = doc.data.attributes;
  const fuel = fuelName(String(product));
  const about = Math.max(1, Math.round(Math.abs(advice.saving || 0)));
  const day = advice.until ? weekdayOf(advice.until) : "";
  // After 14:30 tomorrow's prices are out: a rise they show is said as a fact, to the cent.
  const published = (days || []).some((d) => d.date === advice.until && d.known);
  const rise = published
    ? `Fill today: ${fuel} prices rise ${Math.abs(advice.saving).toFixed(1)} c/L on ${day} (the median of tomorrow's published prices).`
    : `Fill today: ${fuel} prices are likely to rise about ${about} c/L on ${day}.`;
  const words = {
    "fill-now": rise,
    wait: `Wait: ${fuel} is likely to be about ${about} c/L cheaper by ${day}.`,
    either: `Fill when it suits you: ${fuel} prices are not expected to move by 1 c/L or more this week.`,
  }[advice.action] || advice.reason;
  const within = accuracy.within2c && typeof accuracy.within2c[0] === "number" ? Math.floor(accuracy.within2c[0] * 10 + 1e-9) : null;
  const when = accuracy.days >= 300 ? "Last year" : `Over the last ${accuracy.days} days`;
  const told = within === null ? "This forecast has no track record yet." : `${when}, tomorrow's forecast was within 2 c/L on ${within} days out of 10.`;
  return [words, `${told} WA median; a guide, not a promise.`];
}

// ---- start ---------------------------------------------------------------------------------

function start() {
  state.stop = readStop();
  state.favourites = readFavourites();
  state.docket = readDocket();
  if (state.docket) $("docket").value = String(state.docket.cents);
  // Folded until used, so a phone's first screen reaches the list's prices; open when this
  // browser keeps a fill or a docket.
  $("stop-settings").open = !!(state.stop || state.docket);
  readHash();
  $("fuel").value = state.fuel;
  $("sort").value = state.sort;
  $("radius").value = String(state.radius);
  for (const radio of document.querySelectorAll("input[name=day]")) radio.checked = radio.value === state.day;
  drawOutline();
  wireMap();
  if (state.near) {
    $("view-near").disabled = false;
    viewAround(state.near.lat, state.near.lng, 30);
  }
  $("fuel").addEventListener("change", () => {
    state.fuel = $("fuel").value;
    // The page's stream carries one product with an alert: another fuel ends the alert.
    if (state.alert && state.alert.fuel !== state.fuel) setAlert(null);
    writeHash();
    loadStations();
    loadMarket();
  });
  for (const radio of document.querySelectorAll("input[name=day]")) {
    radio.addEventListener("change", () => {
      state.day = radio.value;
      if (state.day === "tomorrow") $("news").hidden = true;
      writeHash();
      loadStations();
    });
  }
  for (const radio of document.querySelectorAll("input[name=market-range]")) {
    radio.addEventListener("change", () => {
      state.marketRange = radio.value;
      loadMarket();
    });
  }
  $("sort").addEventListener("change", () => {
    state.sort = $("sort").value;
    writeHash();
    loadList();
  });
  $("open-now").addEventListener("change", () => {
    state.openNow = $("open-now").checked;
    loadList();
  });
  $("favourites-only").addEventListener("change", () => {
    state.favouritesOnly = $("favourites-only").checked;
    loadList();
  });
  for (const id of ["docket-brand", "docket"]) {
    $(id).addEventListener("change", () => {
      const brand = Number($("docket-brand").value);
      const c = oneDecimal($("docket").value, 0.1, 50);
      const docket = brand && c ? { brand, cents: c } : null;
      if (JSON.stringify(docket) === JSON.stringify(state.docket)) return;
      state.docket = docket;
      keep(DOCKET_KEY, docket);
      // The map's answer carries the effective prices: ask again, and the list and card with it.
      loadStations();
    });
  }
  $("radius").addEventListener("change", () => {
    state.radius = Number($("radius").value);
    writeHash();
    loadList();
  });
  $("more").addEventListener("click", showMore);
  if (state.stop) {
    $("fill").value = String(state.stop.fill);
    $("consumption").value = String(state.stop.consumption);
  }
  for (const id of ["fill", "consumption"]) {
    $(id).addEventListener("change", () => {
      const fill = oneDecimal($("fill").value, 1, 200);
      const consumption = oneDecimal($("consumption").value, 1, 30);
      const stop = fill && consumption ? { fill, consumption } : null;
      if (JSON.stringify(stop) === JSON.stringify(state.stop)) return;
      state.stop = stop;
      keep(STOP_KEY, stop);
      // Both given: the list becomes the cost of the stop; either gone: back to the price.
      if (stop && state.near) state.sort = "cost";
      else if (!stop && state.sort === "cost") state.sort = "price";
      $("sort").value = state.sort;
      writeHash();
      loadList();
    });
  }
  $("card-close").addEventListener("click", closeCard);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && $("card-panel").classList.contains("open") && narrow()) closeCard();
  });
  $("retry").addEventListener("click", retryAll);
  // The address edited (or a shared link pasted) in an open tab: show what it now says.
  window.addEventListener("hashchange", () => {
    const was = JSON.stringify([state.fuel, state.day, state.near, state.station, state.sort, state.radius]);
    readHash();
    if (JSON.stringify([state.fuel, state.day, state.near, state.station, state.sort, state.radius]) === was) return;
    $("fuel").value = state.fuel;
    $("sort").value = state.sort;
    $("radius").value = String(state.radius);
    for (const radio of document.querySelectorAll("input[name=day]")) radio.checked = radio.value === state.day;
    if (state.near) {
      $("view-near").disabled = false;
      viewAround(state.near.lat, state.near.lng, 30);
    }
    loadStations();
    loadMarket();
  });
  wireStream();
  $("news-show").addEventListener("click", showTomorrow);
  window.addEventListener("online", retryAll);
  $("controls").addEventListener("submit", (e) => e.preventDefault());
  $("locate").addEventListener("click", locate);
  $("near-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const name = $("suburb").value.trim().replace(/\s+/g, " ");
    if (!name) return;
    const place = suburbIndex.get(name.toUpperCase());
    if (!place) {
      const meant = closeSuburbs(name);
      const hint = meant.length ? `Did you mean ${meant.join(" or ")}?` : "Pick one from the suggestions.";
      listNote(state.shown
        ? `“${name}” is not a suburb with a fuel station that we know of. ${hint}`
        : "Suburbs are known once prices have loaded.");
      return;
    }
    setNear(place.lat, place.lng, place.name);
  });
  loadStations();
  loadMarket();
  // Use the location without asking only when the visitor has already allowed it.
  if (!state.near && navigator.permissions) {
    navigator.permissions.query({ name: "geolocation" }).then(
      (p) => p.state === "granted" && locate(),
      () => {},
    );
  }
}

document.addEventListener("DOMContentLoaded", start);

// The explorer's shared parts: the constants, the page's one state and its address (so a
// view can be shared), what this browser keeps (a fill, favourites, a docket), DOM building,
// formatting, the API client and the one connection banner. No HTML strings: every node is
// built with createElement, so the page runs under `default-src 'self'`.

const JSONAPI = "application/vnd.api+json";
const FUELS = { 1: "Unleaded", 2: "Premium 95", 4: "Diesel", 5: "LPG", 6: "Premium 98", 10: "E85", 11: "Brand diesel" };
// The API's bounds for `near`: Western Australia.
const WA = { south: -36, north: -13, west: 112, east: 130 };
// Radii tried, widening, when the chosen one holds no station with the fuel.
export const RADII = [5, 10, 25, 50, 100];
export const PAGE_SIZE = 25;
// How long the banner waits before asking the server again when it cannot be reached.
const RETRY_SECONDS = 5;
// No request waits longer than this: a server that accepts and never answers (or a browser
// that queues the request behind its connection limit) reaches the banner like a refusal.
const DEADLINE_SECONDS = 15;
// While tomorrow is not yet published, ask again this often (the page never guesses from
// its own clock; the API's meta says when the day is there).
export const RECHECK_MS = 5 * 60 * 1000;
// FuelWatch's rule, not a fact of this browser's clock: tomorrow's prices appear at about
// 14:30 Perth time.
export const PUBLISHED_AT = "2:30 pm";
export const ARCHIVE_START = "2001-01-01";
const SVG = "http://www.w3.org/2000/svg";

// An approximate outline of Western Australia (longitude, latitude), enough to place the dots.
export const OUTLINE = [
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
export const TOWNS = [
  "PERTH", "MANDURAH", "BUNBURY", "BUSSELTON", "ALBANY", "ESPERANCE", "KALGOORLIE", "GERALDTON",
  "CARNARVON", "EXMOUTH", "KARRATHA", "PORT HEDLAND", "NEWMAN", "BROOME", "DERBY", "KUNUNURRA",
  "NORTHAM", "MERREDIN", "KATANNING", "NARROGIN",
];

// Map projection: equirectangular, longitudes shortened by cos(25°) so the state keeps its shape;
// over a street map (tiles.js, loaded first when the deployment names one) its Web Mercator,
// so every dot sits on its street, and a view as narrow as a few streets.
export const MAP_W = 1700;
export const MAP_H = 2400;
export const TILED = window.wafuelTiles || null;
export const project = TILED ? TILED.project : (lng, lat) => [(lng - WA.west) * 90 + 40, (WA.north - lat) * 100 + 40];
export const MIN_W = TILED ? TILED.minWidth : 12;
export const around = (lng, lat, w) => {
  const [x, y] = project(lng, lat);
  return { x: x - w / 2, y: y - (w * MAP_H) / MAP_W / 2, w, h: (w * MAP_H) / MAP_W };
};
export const VIEWS = { wa: { x: 0, y: 0, w: MAP_W, h: MAP_H }, perth: around(116, -32.1, 78) };
// Viridis: readable with every common colour-vision deficiency and in greyscale.
export const VIRIDIS = ["#440154", "#482878", "#3e4a89", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b", "#fde725"];

export const $ = (id) => document.getElementById(id);

export const state = {
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
// The page's state, readable from a console (and by the browser tests), as a module's own
// names are not.
window.wafuelState = state;

// ---- what a stop costs: the driver's fill and consumption, kept in this browser ---------------

export const STOP_KEY = "wafuel.stop";

/// A number with at most one decimal within [low, high], or null.
export function oneDecimal(text, low, high) {
  const t = String(text).trim();
  if (!/^[0-9]{1,3}(\.[0-9])?$/.test(t)) return null;
  const v = Number(t);
  return v >= low && v <= high ? v : null;
}

export function readStop() {
  try {
    const stop = kept(STOP_KEY);
    const fill = stop && oneDecimal(stop.fill, 1, 200);
    const consumption = stop && oneDecimal(stop.consumption, 1, 30);
    return fill && consumption ? { fill, consumption } : null;
  } catch {
    return null; // storage refused (private mode) or unreadable: ask again
  }
}

export function keep(key, value) {
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

export const FAVOURITES_KEY = "wafuel.favourites";
export const DOCKET_KEY = "wafuel.docket";
// The API's own bound for `id=`.
export const MAX_FAVOURITES = 50;

export function readFavourites() {
  const ids = kept(FAVOURITES_KEY);
  return Array.isArray(ids) ? [...new Set(ids.filter((id) => /^[0-9a-f]{64}$/.test(id)))].slice(0, MAX_FAVOURITES) : [];
}

export function readDocket() {
  const d = kept(DOCKET_KEY);
  const brand = d && Number.isInteger(d.brand) && d.brand > 0 && d.brand < 256 ? d.brand : null;
  const cents = d && oneDecimal(d.cents, 0.1, 50);
  return brand && cents ? { brand, cents } : null;
}

/// The API's `discount=`: sorting, ranks and costs then use the price less the docket.
export const docketQuery = () => (state.docket ? `&discount=${state.docket.brand}:${state.docket.cents}` : "");

/// What the driver pays: the API's effective price where a docket applies, else the price.
export const paid = (a, fuel) => (a.price.effective && typeof a.price.effective[fuel] === "number" ? a.price.effective[fuel] : a.price.products[fuel]);

/// Cents as dollars: 8512 → "$85.12".
export const dollars = (c) => `$${(c / 100).toFixed(2)}`;

// ---- small DOM helpers ---------------------------------------------------------------------

export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  return fill(node, props, children);
}

export function svgEl(tag, attrs = {}, ...children) {
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

export const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
export const narrow = () => window.matchMedia("(max-width: 899px)").matches;
export const reducedMotion = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

// ---- formatting ----------------------------------------------------------------------------

export const cents = (v) => (typeof v === "number" ? v.toFixed(1) : "–");
export const fuelName = (code) => FUELS[code] || `Fuel ${code}`;
export const asDate = (iso) => new Date(`${iso}T00:00:00Z`);
export const isoDate = (time) => new Date(time).toISOString().slice(0, 10);
export const addDays = (iso, days) => isoDate(asDate(iso).getTime() + days * 86400000);
const dateFormat = new Intl.DateTimeFormat("en-AU", { weekday: "long", day: "numeric", month: "short", timeZone: "UTC" });
export const shortDate = new Intl.DateTimeFormat("en-AU", { day: "numeric", month: "short", timeZone: "UTC" });
export const monthYear = new Intl.DateTimeFormat("en-AU", { month: "short", year: "numeric", timeZone: "UTC" });
const perthTime = new Intl.DateTimeFormat("en-AU", { hour: "numeric", minute: "2-digit", timeZone: "Australia/Perth" });
export const perthDay = new Intl.DateTimeFormat("en-AU", { weekday: "short", timeZone: "Australia/Perth" });
export const weekdayOf = (iso) => asDate(iso).toLocaleDateString("en-AU", { weekday: "long", timeZone: "UTC" });
export const fmtDate = (iso) => dateFormat.format(asDate(iso));
// Times read the way people write them ("6:00 am"), whatever space the browser's ICU puts
// before the day period.
export const clock = (time) => perthTime.format(new Date(time)).replace(/\s/g, " ").toLowerCase();
export const titleCase = (s) => s.toLowerCase().replace(/\b[a-z]/g, (c) => c.toUpperCase());

export function distance(metres) {
  return metres < 1000 ? `${metres} m` : `${(metres / 1000).toFixed(metres < 10000 ? 1 : 0)} km`;
}

export function minutesWords(minutes) {
  if (minutes < 1) return "less than a minute";
  if (minutes < 90) return `${Math.round(minutes)} min`;
  const hours = minutes / 60;
  return hours < 36 ? `${Math.round(hours)} h` : `${Math.round(hours / 24)} days`;
}

/// ▲ or ▼ with the cents tomorrow differs by, or "no change".
export function change(delta) {
  if (typeof delta !== "number") return null;
  if (delta > 0) return el("span", { class: "change up", text: `▲ ${delta.toFixed(1)}`, attrs: { title: `${delta.toFixed(1)} c/L dearer tomorrow` } });
  if (delta < 0) return el("span", { class: "change down", text: `▼ ${Math.abs(delta).toFixed(1)}`, attrs: { title: `${Math.abs(delta).toFixed(1)} c/L cheaper tomorrow` } });
  return el("span", { class: "change same", text: "= 0.0", attrs: { title: "Same price tomorrow" } });
}

export function hoursToday(attrs, iso) {
  if (attrs.is24Hours) return "Open 24 hours";
  const day = iso ? weekdayOf(iso) : null;
  const hours = attrs.openHours && day ? attrs.openHours[day] : null;
  if (!hours) return "Hours not listed";
  return hours === "Closed" ? `Closed ${day}` : `${day} ${hours.replaceAll(",", ", ")}`;
}

export const brandOf = (attrs) => (typeof attrs.brand === "object" && attrs.brand ? attrs.brand : { name: "", logo: "/static/image/brand/generic.svg" });

// ---- the API -------------------------------------------------------------------------------

export class ApiError extends Error {
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
export async function api(path) {
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

export function trouble(name, error, again) {
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

export function recovered(name) {
  failing.delete(name);
  if (failing.size === 0) {
    clearTimeout(retry.timer);
    $("banner").hidden = true;
  }
}

export function retryAll() {
  clearTimeout(retry.timer);
  if (failing.size === 0) return;
  bannerSays("Retrying now…");
  for (const again of [...failing.values()]) again();
}


// ---- page state in the address, so a view can be shared ------------------------------------

export function readHash() {
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

export function writeHash() {
  const params = new URLSearchParams({ fuel: state.fuel, day: state.day });
  if (state.near) params.set("near", `${state.near.lat.toFixed(5)},${state.near.lng.toFixed(5)}`);
  if (state.station) params.set("station", state.station);
  if (state.sort !== "price") params.set("sort", state.sort);
  if (state.radius !== 10) params.set("radius", state.radius);
  history.replaceState(null, "", `#${params.toString().replaceAll("%2C", ",")}`);
}

export const insideWa = (lat, lng) => lat >= WA.south && lat <= WA.north && lng >= WA.west && lng <= WA.east;

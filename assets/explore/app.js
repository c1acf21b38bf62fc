// wafuel explorer. Reads only the public API (/v1/stations, /v1/stations/{id}[/history],
// /v1/stats, the brand logos), like any other client. No framework and no HTML strings: every
// node is built with createElement, so the page runs under `default-src 'self'`.
"use strict";

const JSONAPI = "application/vnd.api+json";
const FUELS = { 1: "Unleaded", 2: "Premium 95", 4: "Diesel", 5: "LPG", 6: "Premium 98", 10: "E85", 11: "Brand diesel" };
// The API's bounds for `near`: Western Australia.
const WA = { south: -36, north: -13, west: 112, east: 130 };
// Radii tried for "cheapest near me", widening when nothing sells the fuel close by.
const RADII = [10, 50, 100];
const NEAR_LIMIT = 10;
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

// Map projection: equirectangular, longitudes shortened by cos(25°) so the state keeps its shape.
const project = (lng, lat) => [(lng - WA.west) * 90 + 40, (WA.north - lat) * 100 + 40];
const VIEWS = { wa: { x: 0, y: 0, w: 1700, h: 2400 }, perth: { x: 361, y: 1895, w: 78, h: 110 } };

const $ = (id) => document.getElementById(id);

const state = {
  fuel: "1",
  day: "today",
  near: null, // { lat, lng, label }
  station: null,
  stations: [], // the chosen fuel and day, all of WA
  stats: null,
  statsPromise: Promise.resolve(null),
  view: { ...VIEWS.wa },
  generation: 0,
};

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

function say(text, kind = "") {
  const status = $("status");
  status.textContent = text;
  status.className = kind ? `status ${kind}` : "status";
}

// ---- formatting ----------------------------------------------------------------------------

const cents = (v) => (typeof v === "number" ? v.toFixed(1) : "–");
const fuelName = (code) => FUELS[code] || `Fuel ${code}`;
const asDate = (iso) => new Date(`${iso}T00:00:00Z`);
const dateFormat = new Intl.DateTimeFormat("en-AU", { weekday: "long", day: "numeric", month: "short", timeZone: "UTC" });
const shortDate = new Intl.DateTimeFormat("en-AU", { day: "numeric", month: "short", timeZone: "UTC" });
const weekdayOf = (iso) => asDate(iso).toLocaleDateString("en-AU", { weekday: "long", timeZone: "UTC" });
const fmtDate = (iso) => dateFormat.format(asDate(iso));

function distance(metres) {
  return metres < 1000 ? `${metres} m` : `${(metres / 1000).toFixed(metres < 10000 ? 1 : 0)} km`;
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
  constructor(status, message, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/// GET a JSON:API document. 503 and 504 are retried after `Retry-After` (twice), saying so.
async function api(path) {
  for (let attempt = 0; ; attempt += 1) {
    let response;
    try {
      response = await fetch(path, { headers: { Accept: JSONAPI } });
    } catch {
      throw new ApiError(0, "The price service could not be reached. Check the connection and reload.");
    }
    if (response.ok) return response.json();
    const body = await response.json().catch(() => null);
    const error = body && Array.isArray(body.errors) ? body.errors[0] : null;
    const detail = (error && error.detail) || `The price service answered ${response.status}.`;
    if ((response.status === 503 || response.status === 504) && attempt < 2) {
      const seconds = Math.min(60, Number.parseInt(response.headers.get("retry-after") || "", 10) || (response.status === 503 ? 5 : 10));
      say(`${detail} Retrying in ${seconds} s…`, "error");
      await sleep(seconds * 1000);
      continue;
    }
    throw new ApiError(response.status, detail, error && error.code);
  }
}

// ---- page state in the address, so a view can be shared ------------------------------------

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (FUELS[params.get("fuel")]) state.fuel = params.get("fuel");
  if (["today", "tomorrow"].includes(params.get("day"))) state.day = params.get("day");
  const near = (params.get("near") || "").split(",").map(Number);
  if (near.length === 2 && insideWa(near[0], near[1])) state.near = { lat: near[0], lng: near[1], label: "the chosen point" };
  if (/^[0-9a-f]{64}$/.test(params.get("station") || "")) state.station = params.get("station");
}

function writeHash() {
  const params = new URLSearchParams({ fuel: state.fuel, day: state.day });
  if (state.near) params.set("near", `${state.near.lat.toFixed(5)},${state.near.lng.toFixed(5)}`);
  if (state.station) params.set("station", state.station);
  history.replaceState(null, "", `#${params.toString().replaceAll("%2C", ",")}`);
}

const insideWa = (lat, lng) => lat >= WA.south && lat <= WA.north && lng >= WA.west && lng <= WA.east;

// ---- loading -------------------------------------------------------------------------------

/// The first paint needs two requests: every station with the chosen fuel, and the market.
async function loadAll() {
  const generation = ++state.generation;
  const fuel = state.fuel;
  say(`Loading ${fuelName(fuel)} prices…`);
  const stations = api(`/v1/stations?product=${fuel}&day=${state.day}&expand=brand`);
  const stats = api(`/v1/stats?product=${fuel}`);
  state.statsPromise = stats.catch(() => null);
  try {
    const doc = await stations;
    if (generation !== state.generation) return;
    state.stations = doc.data;
    drawStations(doc);
    describe(doc);
  } catch (error) {
    if (generation !== state.generation) return;
    state.stations = [];
    drawStations(null);
    say(error.message, "error");
  }
  stats.then(
    (doc) => generation === state.generation && drawMarket(doc),
    (error) => generation === state.generation && ($("cycle").textContent = error.message),
  );
  if (state.near) loadNear();
  if (state.station) openStation(state.station);
}

function describe(doc) {
  const meta = doc.meta;
  const when = fmtDate(meta.sourceDate);
  if (meta.publicationStatus === "not_yet_published") {
    say(`${when}'s prices are not published yet: FuelWatch publishes tomorrow's prices at about 2:30 pm.`);
  } else if (doc.data.length === 0) {
    say(`No station lists ${fuelName(state.fuel)} for ${when}.`);
  } else {
    const next = meta.next && meta.next.publicationStatus === "available" && state.day === "today" ? " Arrows show tomorrow's change." : "";
    say(`${doc.data.length} stations with ${fuelName(state.fuel)} on ${when}.${next}`);
  }
}

// ---- the map -------------------------------------------------------------------------------

function drawOutline() {
  const points = OUTLINE.map(([lng, lat]) => project(lng, lat).map((v) => v.toFixed(1)).join(",")).join(" ");
  const view = $("map-view");
  view.append(svgEl("polygon", { class: "land", points }));
  const [px, py] = project(115.86, -31.95);
  view.append(svgEl("text", { class: "label", x: px + 30, y: py + 14, "font-size": 42 }, "Perth"));
  view.append(svgEl("g", { id: "dots" }), svgEl("g", { id: "here" }));
}

/// Price → colour: green for the cheapest, red for the dearest, by rank so one outlier does
/// not wash the rest out.
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
  return { sorted, colour: (p) => `hsl(${Math.round(130 * (1 - rank(p)))}, 75%, 42%)` };
}

function drawStations(doc) {
  const dots = $("dots");
  dots.replaceChildren();
  const legend = $("legend");
  legend.replaceChildren();
  const suburbs = $("suburbs");
  suburbs.replaceChildren();
  if (!doc || doc.data.length === 0) return;
  const fuel = state.fuel;
  const prices = doc.data.map((s) => s.attributes.price.products[fuel]).filter((p) => typeof p === "number");
  const scale = colourScale(prices);
  const r = dotRadius();
  for (const s of doc.data) {
    const a = s.attributes;
    const price = a.price.products[fuel];
    const [cx, cy] = project(a.longitude, a.latitude);
    dots.append(
      svgEl(
        "circle",
        { class: s.id === state.station ? "station chosen" : "station", cx: cx.toFixed(2), cy: cy.toFixed(2), r, fill: scale.colour(price), "data-id": s.id },
        svgEl("title", {}, `${a.name}, ${a.address.suburb}: ${cents(price)}`),
      ),
    );
  }
  drawLegend(scale.sorted);
  const names = [...new Set(doc.data.map((s) => titleCase(s.attributes.address.suburb)))].sort();
  suburbs.append(...names.map((n) => el("option", { attrs: { value: n } })));
}

function drawLegend(sorted) {
  const legend = $("legend");
  const steps = 12;
  for (let i = 0; i < steps; i += 1) {
    legend.append(svgEl("rect", { x: 10 + i * 25, y: 2, width: 25, height: 12, fill: `hsl(${Math.round(130 * (1 - i / (steps - 1)))}, 75%, 42%)` }));
  }
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))];
  legend.append(
    svgEl("text", { x: 10, y: 30 }, `${cents(at(0))} cheapest`),
    svgEl("text", { x: 160, y: 30, "text-anchor": "middle" }, `${cents(at(0.5))} median`),
    svgEl("text", { x: 310, y: 30, "text-anchor": "end" }, `${cents(at(1))} dearest`),
  );
}

const titleCase = (s) => s.toLowerCase().replace(/\b[a-z]/g, (c) => c.toUpperCase());
const dotRadius = () => (state.view.w / 130).toFixed(2);

function setView(view) {
  const w = Math.min(1700, Math.max(12, view.w));
  const h = (w * 2400) / 1700;
  const x = Math.min(1700 - w * 0.2, Math.max(-w * 0.8, view.x));
  const y = Math.min(2400 - h * 0.2, Math.max(-h * 0.8, view.y));
  state.view = { x, y, w, h };
  $("map").setAttribute("viewBox", `${x.toFixed(2)} ${y.toFixed(2)} ${w.toFixed(2)} ${h.toFixed(2)}`);
  const r = dotRadius();
  for (const dot of $("dots").children) dot.setAttribute("r", r);
  for (const label of $("map-view").querySelectorAll(".label")) label.setAttribute("font-size", (w / 40).toFixed(2));
  drawHere();
}

/// Zoom by `factor` about a point of the map (its centre by default).
function zoom(factor, about) {
  const v = state.view;
  const [ax, ay] = about || [v.x + v.w / 2, v.y + v.h / 2];
  setView({ x: ax - (ax - v.x) * factor, y: ay - (ay - v.y) * factor, w: v.w * factor });
}

function viewAround(lat, lng, widthKm) {
  const [cx, cy] = project(lng, lat);
  const w = widthKm * 0.95; // about 0.95 map units per km east-west at Perth's latitude
  setView({ x: cx - w / 2, y: cy - (w * 1.41) / 2, w });
}

function drawHere() {
  const here = $("here");
  if (!here) return;
  here.replaceChildren();
  if (!state.near) return;
  const [cx, cy] = project(state.near.lng, state.near.lat);
  here.append(svgEl("circle", { class: "here", cx, cy, r: (state.view.w / 60).toFixed(2) }, svgEl("title", {}, "You are here")));
}

function mapPoint(event) {
  const svg = $("map");
  const point = svg.createSVGPoint();
  point.x = event.clientX;
  point.y = event.clientY;
  const p = point.matrixTransform(svg.getScreenCTM().inverse());
  return [p.x, p.y];
}

function wireMap() {
  const svg = $("map");
  let drag = null;
  svg.addEventListener("pointerdown", (e) => {
    drag = { x: e.clientX, y: e.clientY, view: { ...state.view }, moved: false };
  });
  svg.addEventListener("pointermove", (e) => {
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
    if (drag && drag.moved) {
      svg.classList.remove("dragging");
      if (svg.hasPointerCapture(e.pointerId)) svg.releasePointerCapture(e.pointerId);
    } else {
      const dot = e.target.closest && e.target.closest("circle.station");
      if (dot) openStation(dot.getAttribute("data-id"));
    }
    drag = null;
  };
  svg.addEventListener("pointerup", end);
  svg.addEventListener("pointercancel", () => {
    drag = null;
    svg.classList.remove("dragging");
  });
  svg.addEventListener("wheel", (e) => {
    e.preventDefault();
    zoom(e.deltaY > 0 ? 1.25 : 0.8, mapPoint(e));
  }, { passive: false });
  // Keyboard: arrows pan, + and − zoom.
  svg.setAttribute("tabindex", "0");
  svg.addEventListener("keydown", (e) => {
    const v = state.view;
    const step = { ArrowLeft: [-0.15, 0], ArrowRight: [0.15, 0], ArrowUp: [0, -0.15], ArrowDown: [0, 0.15] }[e.key];
    if (step) setView({ x: v.x + step[0] * v.w, y: v.y + step[1] * v.h, w: v.w });
    else if (e.key === "+" || e.key === "=") zoom(0.8);
    else if (e.key === "-") zoom(1.25);
    else return;
    e.preventDefault();
  });
  for (const button of document.querySelectorAll(".zoom button")) {
    button.addEventListener("click", () => {
      const view = button.getAttribute("data-view");
      const direction = button.getAttribute("data-zoom");
      if (view === "near" && state.near) viewAround(state.near.lat, state.near.lng, 30);
      else if (VIEWS[view]) setView({ ...VIEWS[view] });
      else if (direction) zoom(direction === "in" ? 0.67 : 1.5);
    });
  }
}

// ---- cheapest near me ----------------------------------------------------------------------

function locate() {
  if (!navigator.geolocation) {
    $("near-status").textContent = "This browser cannot share a location; type a suburb instead.";
    return;
  }
  $("near-status").textContent = "Finding your location…";
  navigator.geolocation.getCurrentPosition(
    (position) => {
      const { latitude, longitude } = position.coords;
      if (!insideWa(latitude, longitude)) {
        $("near-status").textContent = "You seem to be outside Western Australia; type a WA suburb instead.";
        return;
      }
      setNear(latitude, longitude, "your location");
    },
    () => {
      $("near-status").textContent = "No location allowed; type a suburb instead.";
      $("suburb").focus();
    },
    { timeout: 10000, maximumAge: 600000 },
  );
}

/// A suburb's centre: the mean position of its stations in the loaded data.
function findSuburb(name) {
  const wanted = name.trim().replace(/\s+/g, " ").toUpperCase();
  const inside = state.stations.filter((s) => s.attributes.address.suburb.toUpperCase() === wanted);
  if (inside.length === 0) return null;
  const lat = inside.reduce((sum, s) => sum + s.attributes.latitude, 0) / inside.length;
  const lng = inside.reduce((sum, s) => sum + s.attributes.longitude, 0) / inside.length;
  return { lat, lng };
}

function setNear(lat, lng, label) {
  state.near = { lat, lng, label };
  $("view-near").disabled = false;
  writeHash();
  viewAround(lat, lng, 30);
  loadNear();
}

async function loadNear() {
  const near = state.near;
  const generation = state.generation;
  $("view-near").disabled = false;
  drawHere();
  const list = $("near-list");
  $("near-status").textContent = `Finding the cheapest ${fuelName(state.fuel)} near ${near.label}…`;
  try {
    let doc = null;
    let radius = RADII[0];
    for (radius of RADII) {
      doc = await api(nearQuery(near, radius));
      if (doc.data.length > 0) break;
    }
    if (generation !== state.generation || near !== state.near) return;
    list.replaceChildren(...doc.data.map((s) => el("li", { attrs: { "data-id": s.id } }, stationRow(s, doc.meta.sourceDate))));
    $("near-status").textContent = doc.data.length
      ? `The ${doc.data.length} cheapest within ${radius} km of ${near.label}, ${fmtDate(doc.meta.sourceDate)}.`
      : `No station sells ${fuelName(state.fuel)} within ${radius} km of ${near.label}.`;
  } catch (error) {
    if (generation !== state.generation) return;
    list.replaceChildren();
    $("near-status").textContent = error.message;
  }
}

/// The same query any client would send; the browser test asks the API the same.
function nearQuery(near, radius) {
  return `/v1/stations?near=${near.lat.toFixed(5)},${near.lng.toFixed(5)}&radius=${radius}&sort=price&product=${state.fuel}&day=${state.day}&limit=${NEAR_LIMIT}&expand=brand`;
}

function stationRow(s, sourceDate) {
  const a = s.attributes;
  const brand = brandOf(a);
  const price = a.price.products[state.fuel];
  const delta = state.day === "today" && a.price.change ? a.price.change[state.fuel] : undefined;
  const facts = [titleCase(a.address.suburb), distance(a.distance), hoursToday(a, sourceDate)].join(" · ");
  return el(
    "button",
    { class: "row", attrs: { type: "button" }, on: { click: () => openStation(s.id) } },
    el("img", { attrs: { src: brand.logo, alt: "", width: 32, height: 32 } }),
    el("span", { class: "name" }, el("span", { class: "rank", text: `${a.rank}.` }), a.name),
    el("span", { class: "price", text: cents(price) }),
    el("span", { class: "sub", text: facts }),
    change(delta) || el("span", { class: "change same", text: "" }),
  );
}

// ---- the station card ----------------------------------------------------------------------

async function openStation(id) {
  state.station = id;
  writeHash();
  for (const dot of $("dots").children) dot.classList.toggle("chosen", dot.getAttribute("data-id") === id);
  const card = $("card");
  const fuel = state.fuel;
  card.setAttribute("aria-busy", "true");
  const history = api(`/v1/stations/${id}/history?product=${fuel}`).catch((error) => error);
  let doc;
  try {
    doc = await api(`/v1/stations/${id}?expand=all`);
  } catch (error) {
    card.replaceChildren(el("p", { class: "hint", text: error.status === 404 ? "This station has no prices today." : error.message }));
    card.removeAttribute("aria-busy");
    return;
  }
  if (state.station !== id) return;
  const s = doc.data;
  const a = s.attributes;
  const brand = brandOf(a);
  const hours = a.is24Hours
    ? "Open 24 hours"
    : a.openHours
      ? Object.entries(a.openHours).map(([day, h]) => `${day.slice(0, 3)} ${h.replaceAll(",", ", ")}`).join("; ")
      : "Not listed";
  const named = (list) => (Array.isArray(list) && list.length ? list.map((f) => f.name || f.description || f.code).join(", ") : "None listed");
  const products = Object.entries(a.price.products).map(([code, price]) =>
    el(
      "li",
      { class: code === fuel ? "chosen" : "" },
      `${fuelName(code)} `,
      el("strong", { text: cents(price) }),
      " ",
      a.price.change ? change(a.price.change[code]) : null,
    ),
  );
  const address = [a.address.street, `${titleCase(a.address.suburb)} ${a.address.postcode || ""}`.trim()].join(", ");
  const chart = svgEl("svg", { class: "chart", viewBox: "0 0 640 220", role: "img", "aria-label": `${fuelName(fuel)} at ${a.name}, last 90 days, against the WA median` });
  const chartNote = el("p", { class: "chart-key" }, "Loading price history…");
  card.replaceChildren(
    el(
      "div",
      { class: "card-head" },
      el("img", { attrs: { src: brand.logo, alt: brand.name ? `${brand.name} logo` : "", width: 48, height: 48 } }),
      el("div", {}, el("h3", { text: a.name }), el("span", { class: "hint", text: brand.name || "" })),
    ),
    el("ul", { class: "prices", attrs: { "aria-label": `Prices on ${fmtDate(doc.meta.sourceDate)}` } }, products),
    el(
      "dl",
      {},
      el("dt", { text: "Address" }),
      el("dd", { text: address }),
      el("dt", { text: "Phone" }),
      el("dd", {}, a.phone ? el("a", { attrs: { href: `tel:${a.phone}` }, text: a.phone }) : "Not listed"),
      el("dt", { text: "Hours" }),
      el("dd", { text: hours }),
      el("dt", { text: "Features" }),
      el("dd", { text: named(a.siteFeatures) }),
      a.restrictions ? el("dt", { text: "Restrictions" }) : null,
      a.restrictions ? el("dd", { text: named(a.restrictions) }) : null,
    ),
    ...[attribution(a.enrichment)].filter(Boolean),
    chart,
    chartNote,
  );
  card.removeAttribute("aria-busy");
  const result = await history;
  const stats = await state.statsPromise;
  if (state.station !== id) return;
  if (result instanceof Error) {
    chartNote.textContent = result.status === 404 ? `No ${fuelName(fuel)} price history for this station.` : result.message;
    return;
  }
  const points = result.data.attributes.points;
  const median = stats && stats.data.attributes.product === Number(fuel) ? stats.data.attributes.days.map((d) => [d.date, d.median]) : [];
  const first = points.length ? points[0].date : null;
  drawChart(chart, {
    lines: [
      { cls: "median-line", points: median.filter(([d]) => !first || d >= first) },
      { cls: "series", points: points.map((p) => [p.date, p.price]) },
    ],
  });
  chartNote.replaceChildren(el("span", { class: "key station" }), " this station ", el("span", { class: "key dashed" }), " WA median");
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

/// A date axis and a price axis, lines of [date, price] and an optional band of [date, lo, hi].
function drawChart(svg, { lines = [], band = null }) {
  svg.replaceChildren();
  const all = [...lines.flatMap((l) => l.points), ...(band || []).flatMap(([d, lo, hi]) => [[d, lo], [d, hi]])];
  if (all.length === 0) {
    svg.append(svgEl("text", { x: 320, y: 110, "text-anchor": "middle" }, "No data for this range."));
    return;
  }
  const left = 48;
  const right = 628;
  const top = 10;
  const bottom = 190;
  const times = all.map(([d]) => asDate(d).getTime());
  const t0 = Math.min(...times);
  const t1 = Math.max(...times);
  let lo = Math.min(...all.map(([, v]) => v));
  let hi = Math.max(...all.map(([, v]) => v));
  const pad = Math.max(1, (hi - lo) * 0.08);
  lo -= pad;
  hi += pad;
  const x = (d) => left + ((asDate(d).getTime() - t0) / Math.max(1, t1 - t0)) * (right - left);
  const y = (v) => bottom - ((v - lo) / (hi - lo)) * (bottom - top);
  const step = niceStep((hi - lo) / 4);
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) {
    svg.append(svgEl("line", { class: "axis", x1: left, x2: right, y1: y(v).toFixed(1), y2: y(v).toFixed(1) }));
    svg.append(svgEl("text", { x: left - 6, y: (y(v) + 4).toFixed(1), "text-anchor": "end" }, step < 1 ? v.toFixed(1) : v.toFixed(0)));
  }
  const first = new Date(t0).toISOString().slice(0, 10);
  const last = new Date(t1).toISOString().slice(0, 10);
  const middle = new Date((t0 + t1) / 2).toISOString().slice(0, 10);
  for (const [d, anchor] of [[first, "start"], [middle, "middle"], [last, "end"]]) {
    svg.append(svgEl("text", { x: x(d).toFixed(1), y: 210, "text-anchor": anchor }, shortDate.format(asDate(d))));
  }
  if (band && band.length) {
    const upper = band.map(([d, , h]) => `${x(d).toFixed(1)},${y(h).toFixed(1)}`);
    const lower = band.map(([d, l]) => `${x(d).toFixed(1)},${y(l).toFixed(1)}`).reverse();
    svg.append(svgEl("polygon", { class: "band", points: [...upper, ...lower].join(" ") }));
  }
  for (const line of lines) {
    if (line.points.length === 0) continue;
    const points = line.points.map(([d, v]) => `${x(d).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    svg.append(svgEl("polyline", { class: line.cls, points }));
  }
}

function niceStep(raw) {
  const power = 10 ** Math.floor(Math.log10(raw));
  const unit = raw / power;
  return (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power;
}

// ---- the market panel ----------------------------------------------------------------------

function drawMarket(doc) {
  state.stats = doc;
  const { days, cycle } = doc.data.attributes;
  drawChart($("market-chart"), {
    band: days.map((d) => [d.date, d.min, d.max]),
    lines: [{ cls: "market-median", points: days.map((d) => [d.date, d.median]) }],
  });
  $("cycle").textContent = cycleWords(days, cycle);
}

/// The detected cycle in words, e.g. "Prices rise about every 14 days; last rise Wednesday
/// 18 Nov; cheapest day usually Tuesday."
function cycleWords(days, cycle) {
  const fuel = fuelName(state.fuel);
  const latest = days.length ? days[days.length - 1] : null;
  const today = latest ? ` On ${fmtDate(latest.date)} the WA median was ${cents(latest.median)} c/L (lowest ${cents(latest.min)}).` : "";
  if (!cycle) {
    const why = days.length < 28 ? ` (${days.length} days of data are too few to tell)` : "";
    return `${fuel} shows no regular price cycle over these ${days.length} days${why}.${today}`;
  }
  const cheapest = cycle.cheapestWeekday ? `; cheapest day usually ${cycle.cheapestWeekday}` : "";
  return `${fuel} prices rise about every ${cycle.periodDays} days; last rise ${fmtDate(cycle.lastPeak)}${cheapest}.${today}`;
}

// ---- start ---------------------------------------------------------------------------------

function start() {
  readHash();
  $("fuel").value = state.fuel;
  for (const radio of document.querySelectorAll("input[name=day]")) radio.checked = radio.value === state.day;
  drawOutline();
  wireMap();
  if (state.near) viewAround(state.near.lat, state.near.lng, 30);
  $("fuel").addEventListener("change", () => {
    state.fuel = $("fuel").value;
    writeHash();
    loadAll();
  });
  for (const radio of document.querySelectorAll("input[name=day]")) {
    radio.addEventListener("change", () => {
      state.day = radio.value;
      writeHash();
      loadAll();
    });
  }
  $("controls").addEventListener("submit", (e) => e.preventDefault());
  $("locate").addEventListener("click", locate);
  $("near-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const name = $("suburb").value;
    if (!name.trim()) return;
    const centre = findSuburb(name);
    if (!centre) {
      $("near-status").textContent = `No station with ${fuelName(state.fuel)} in “${name.trim()}”. Pick a suburb from the list.`;
      return;
    }
    setNear(centre.lat, centre.lng, titleCase(name.trim()));
  });
  loadAll();
  // Use the location without asking only when the visitor has already allowed it.
  if (!state.near && navigator.permissions) {
    navigator.permissions.query({ name: "geolocation" }).then(
      (p) => p.state === "granted" && locate(),
      () => {},
    );
  }
}

document.addEventListener("DOMContentLoaded", start);

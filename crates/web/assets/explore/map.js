// The map: where suburbs are (learnt from every station the API lists), loading the day's
// stations, drawing them by price over the coastline or street map, labels, zoom, keyboard
// and pointer use, and the visitor's location.
import { $, ApiError, MAP_H, MAP_W, MIN_W, OUTLINE, PUBLISHED_AT, RECHECK_MS, TILED, TOWNS, VIEWS, VIRIDIS, api, around, cents, clamp, clock, docketQuery, el, fmtDate, fuelName, minutesWords, perthDay, project, recovered, state, svgEl, titleCase, trouble } from "./core.js";
import { announce, listen, published, standingIn, tomorrowOf } from "./stream.js";
import { loadList } from "./list.js";
import { fillDocketBrands, openStation } from "./card.js";

// ---- where suburbs are: learnt from every station the API has listed ------------------------

const places = new Map(); // stationId → { suburb, lat, lng }
export let suburbIndex = new Map(); // SUBURB → { name, lat, lng, stations }

/// Up to three known suburbs a few edits from `name` (one in four letters; a letter dropped,
/// added, changed or two swapped), or that begin with it, the closest first: the station
/// API's `didYouMean` rule, so the page and the API suggest alike.
export function closeSuburbs(name) {
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
export function nearName(near) {
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

export function learnPlaces(doc) {
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

export const stationsPath = (fuel, day) => `/v1/stations?product=${fuel}&day=${day}&expand=brand${docketQuery()}`;

let recheckTimer = null;

/// Every station with the chosen fuel on the chosen day: the map, and the list when no place
/// is chosen. Tomorrow before it is published shows today's, saying when tomorrow's come.
export async function loadStations() {
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

export function drawOutline() {
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
export function renderSoon() {
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

export function viewAround(lat, lng, widthKm) {
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

export function wireMap() {
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

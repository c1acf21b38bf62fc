// The station list: nearest or cheapest around a place, the favourites, what a stop costs.
import { $, ApiError, PAGE_SIZE, PUBLISHED_AT, RADII, api, brandOf, cents, change, distance, docketQuery, dollars, el, fmtDate, fuelName, hoursToday, insideWa, paid, recovered, state, titleCase, trouble, writeHash } from "./core.js";
import { standingIn } from "./stream.js";
import { learnPlaces, nearName, viewAround } from "./map.js";
import { openStation } from "./card.js";

// ---- the station list ----------------------------------------------------------------------

export function locate() {
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

export function setNear(lat, lng, label) {
  state.near = { lat, lng, label };
  $("view-near").disabled = false;
  writeHash();
  viewAround(lat, lng, 30);
  loadList();
}

/// The day the list and card ask for: the one shown (today while tomorrow is not published).
export const shownDay = () => (state.shown ? state.shown.day : state.day);

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
export async function loadList() {
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
    showList({ rows: doc.data, near, radius, widened: radius !== state.radius, fuel: state.fuel, sourceDate: doc.meta.sourceDate, stop: doc.meta.stop || null });
  } catch (error) {
    if (generation !== state.listGeneration) return;
    if (!(error instanceof ApiError)) throw error;
    // The note stays "Finding …": the banner alone speaks of the failure, and retries.
    trouble("list", error, loadList);
  }
}

// A new answer for the list: shown from its first page, with nothing pending said.
function showList(list) {
  state.list = list;
  state.count = PAGE_SIZE;
  state.listNote = null;
  renderList();
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
    showList({ ...base, rows: doc.data, sourceDate: doc.meta.sourceDate, missing: doc.meta.missing || [] });
  } catch (error) {
    if (generation !== state.listGeneration) return;
    if (!(error instanceof ApiError)) throw error;
    trouble("list", error, loadList);
  }
}

/// What the list is doing now ("Finding your location…"), said before what it shows.
export function listNote(text) {
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

export function showMore() {
  const first = state.count;
  state.count += PAGE_SIZE;
  renderList();
  const next = $("station-list").children[first];
  if (next) next.querySelector("button").focus();
}

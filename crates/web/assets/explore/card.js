// The station card: one station's prices, hours, features, price history and forecast, its
// favourite button and a price alert.
import { $, ARCHIVE_START, ApiError, FAVOURITES_KEY, MAX_FAVOURITES, addDays, api, brandOf, cents, change, clock, el, fmtDate, fuelName, keep, narrow, oneDecimal, recovered, reducedMotion, state, svgEl, titleCase, trouble, weekdayOf, writeHash } from "./core.js";
import { closeStream, openStream } from "./stream.js";
import { renderSoon } from "./map.js";
import { listNote, loadList, shownDay } from "./list.js";
import { drawChart, numbers, statsPath } from "./market.js";

// ---- the station card ----------------------------------------------------------------------

function openCardPanel(opener) {
  const panel = $("card-panel");
  if (opener) state.opener = opener;
  panel.classList.add("open");
  document.body.classList.add("sheet-open");
}

export function closeCard() {
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

export async function openStation(id, { focus = true, opener = null } = {}) {
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
export function fillDocketBrands(doc) {
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
export function setAlert(alert) {
  state.alert = alert;
  closeStream();
  openStream();
}

/// A `price` event: the alert's station is at or below the price asked for.
export function alertHeard(data) {
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
export function rangeFrom(range) {
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

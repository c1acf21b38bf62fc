// Charts, the market panel (statistics, margin and cycle) and "fill now or wait".
import { $, ARCHIVE_START, ApiError, api, asDate, cents, el, fmtDate, fuelName, isoDate, monthYear, recovered, shortDate, state, svgEl, trouble, weekdayOf } from "./core.js";
import { rangeFrom } from "./card.js";

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
export function drawChart(svg, spec) {
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
export function numbers(details, caption, head, rows) {
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
export function statsPath(fuel, range) {
  if (range === "all") return `/v1/stats?product=${fuel}&interval=month&from=${ARCHIVE_START}`;
  if (range === "365") return `/v1/stats?product=${fuel}&interval=week&from=${rangeFrom("365")}`;
  return `/v1/stats?product=${fuel}`;
}

export async function loadMarket() {
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
export async function loadAdvice() {
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

// wafuel explorer. Reads only the public API (/v1/stations, /v1/stations/{id}[/history],
// /v1/stats, the brand logos), like any other client, and takes every fact about days from
// it: which day is shown, whether tomorrow is published, when prices are valid. No framework
// and no HTML strings: every node is built with createElement, so the page runs under
// `default-src 'self'`.
//
// This is the page's entry: it wires the controls. Each part is its own module (core, stream,
// map, list, card, market), loaded from here as the browser's own modules; no build step.
import { $, DOCKET_KEY, STOP_KEY, keep, narrow, oneDecimal, readDocket, readFavourites, readHash, readStop, retryAll, state, writeHash } from "./core.js";
import { showTomorrow, wireStream } from "./stream.js";
import { closeSuburbs, drawOutline, loadStations, suburbIndex, viewAround, wireMap } from "./map.js";
import { listNote, loadList, locate, setNear, showMore } from "./list.js";
import { closeCard, setAlert } from "./card.js";
import { loadMarket } from "./market.js";

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

// wafuel explorer: the street map under the stations. Loaded only when the deployment names a
// tile service (--map-tiles), after Leaflet and before the page's script (app.js), which then
// draws its own station layer in this file's projection. Leaflet draws the tiles and takes no
// input itself: the page's own map (drag, pinch, keys, dots) moves, and this follows it.
"use strict";

(() => {
  // Map units per degree of longitude, the coastline map's own; the state's north-west corner
  // at (40, 40). Web Mercator: the tiles' projection, so a dot is on its street at any zoom.
  const K = 90;
  const WEST = 112;
  const NORTH = -13;
  const MARGIN = 40;
  const WORLD = 360 * K;
  const RAD = Math.PI / 180;
  const mercator = (lat) => Math.log(Math.tan(Math.PI / 4 + (lat * RAD) / 2));
  const TOP = mercator(NORTH);
  const project = (lng, lat) => [(lng - WEST) * K + MARGIN, ((TOP - mercator(lat)) / RAD) * K + MARGIN];
  const unproject = (x, y) => [WEST + (x - MARGIN) / K, (2 * Math.atan(Math.exp(TOP - ((y - MARGIN) / K) * RAD)) - Math.PI / 2) / RAD];

  let map = null;
  let last = null;

  /// Put the tiles under the page's view: the same centre, and the zoom whose pixels per
  /// degree are the SVG's (it fits its view box inside its frame, "meet").
  function follow(view) {
    last = view;
    if (!map) return;
    const frame = map.getContainer();
    const width = frame.clientWidth;
    const height = frame.clientHeight;
    if (!width || !height) return;
    const scale = Math.min(width / view.w, height / view.h);
    const [lng, lat] = unproject(view.x + view.w / 2, view.y + view.h / 2);
    map.setView([lat, lng], Math.log2((scale * WORLD) / 256), { animate: false });
  }

  async function attach() {
    const svg = document.getElementById("map");
    const frame = svg && svg.parentElement;
    if (!frame || !window.L) return;
    let config;
    try {
      const answer = await fetch("/explore/map.json");
      config = await answer.json();
    } catch (error) {
      return; // no street map: the coastline map stays
    }
    if (config.mode !== "raster") return;
    const holder = document.createElement("div");
    holder.className = "tiles";
    holder.setAttribute("aria-hidden", "true");
    frame.prepend(holder);
    const credit = document.createElement("p");
    credit.className = "map-attribution";
    credit.id = "map-attribution";
    credit.textContent = config.attribution;
    frame.append(credit);
    map = L.map(holder, {
      zoomControl: false, attributionControl: false, dragging: false, touchZoom: false, scrollWheelZoom: false,
      doubleClickZoom: false, boxZoom: false, keyboard: false, tapHold: false, zoomSnap: 0, zoomAnimation: false,
      fadeAnimation: false, markerZoomAnimation: false, inertia: false, minZoom: 0, maxZoom: 30,
    });
    const layer = L.tileLayer(config.tiles, { maxNativeZoom: config.maxZoom, maxZoom: 30, subdomains: "abc" });
    // Tiles that never come (the service down, blocked, offline) bring the coastline back
    // under the dots; the stations, list and card never wait for a tile.
    let loaded = 0;
    layer.on("tileload", () => {
      loaded += 1;
      svg.classList.add("tiled");
    });
    layer.on("tileerror", () => {
      if (!loaded) svg.classList.remove("tiled");
    });
    svg.classList.add("tiled");
    layer.addTo(map);
    new ResizeObserver(() => {
      map.invalidateSize({ animate: false });
      if (last) follow(last);
    }).observe(frame);
    follow(last || { x: 0, y: 0, w: 1700, h: 2400 });
  }

  /// Where the tiles put a place on the page (the browser test holds the dots to it).
  function point(lng, lat) {
    if (!map) return null;
    const p = map.latLngToContainerPoint([lat, lng]);
    const box = map.getContainer().getBoundingClientRect();
    return [box.left + p.x, box.top + p.y];
  }

  window.wafuelTiles = { project, minWidth: 0.25, follow, point };
  document.addEventListener("DOMContentLoaded", attach);
})();

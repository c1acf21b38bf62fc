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
  // Whether the tiles show (the coastline hidden under them): set once a tile came.
  let shown = () => {};

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
    shown();
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
    if (config.mode !== "raster" && config.mode !== "pmtiles") return;
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
    // Below an archive's lowest zoom the layer draws nothing (never thousands of tiles
    // shrunk), and the page's coastline shows instead.
    const minZoom = config.minZoom || 0;
    const options = { minZoom, maxNativeZoom: config.maxZoom, maxZoom: 30, subdomains: "abc" };
    const layer = config.format === "mvt" ? vectorLayer(config.tiles, options) : L.tileLayer(config.tiles, options);
    // Until a tile comes (the service down, blocked, offline: never) the coastline stays
    // under the dots; the stations, list and card never wait for a tile.
    let loaded = 0;
    shown = () => svg.classList.toggle("tiled", loaded > 0 && map.getZoom() >= minZoom - 0.5);
    layer.on("tileload", () => {
      loaded += 1;
      shown();
    });
    layer.addTo(map);
    new ResizeObserver(() => {
      map.invalidateSize({ animate: false });
      if (last) follow(last);
    }).observe(frame);
    follow(last || { x: 0, y: 0, w: 1700, h: 2400 });
  }

  // ---- vector tiles: Mapbox Vector Tiles decoded here and drawn on a canvas (no WebGL) ----

  /// A protocol-buffer reader over one message: varints, and length-delimited fields as
  /// readers of their own.
  function reader(bytes, start = 0, end = bytes.length) {
    let at = start;
    const varint = () => {
      let value = 0;
      let shift = 1;
      for (;;) {
        const b = bytes[at++];
        value += (b & 0x7f) * shift;
        if (b < 0x80 || at >= end) return value;
        shift *= 128;
      }
    };
    return {
      more: () => at < end,
      key: () => { const k = varint(); return [k >>> 3, k & 7]; },
      varint,
      sub: () => { const n = varint(); const r = reader(bytes, at, at + n); at += n; return r; },
      text: () => { const n = varint(); const t = new TextDecoder().decode(bytes.subarray(at, at + n)); at += n; return t; },
      skip: (type) => {
        if (type === 0) varint();
        else if (type === 1) at += 8;
        else if (type === 2) at += varint();
        else if (type === 5) at += 4;
      },
      packed: () => {
        const n = varint();
        const r = reader(bytes, at, at + n);
        const out = [];
        while (r.more()) out.push(r.varint());
        at += n;
        return out;
      },
    };
  }

  /// A tile's layers: each with its name, extent and features (type, geometry as rings or
  /// lines of [x, y], and the string properties).
  function decodeTile(bytes) {
    const layers = [];
    const tile = reader(bytes);
    while (tile.more()) {
      const [field, type] = tile.key();
      if (field !== 3) { tile.skip(type); continue; }
      const r = tile.sub();
      const layer = { name: "", extent: 4096, keys: [], values: [], features: [] };
      while (r.more()) {
        const [f, t] = r.key();
        if (f === 1) layer.name = r.text();
        else if (f === 2) layer.features.push(r.sub());
        else if (f === 3) layer.keys.push(r.text());
        else if (f === 4) {
          const v = r.sub();
          let value = null;
          while (v.more()) { const [vf, vt] = v.key(); if (vf === 1) value = v.text(); else v.skip(vt); }
          layer.values.push(value);
        } else if (f === 5) layer.extent = r.varint();
        else r.skip(t);
      }
      layer.features = layer.features.map((fr) => decodeFeature(fr, layer));
      layers.push(layer);
    }
    return layers;
  }

  function decodeFeature(r, layer) {
    const feature = { type: 0, lines: [], props: {} };
    let tags = [];
    let geometry = [];
    while (r.more()) {
      const [f, t] = r.key();
      if (f === 2) tags = r.packed();
      else if (f === 3) feature.type = r.varint();
      else if (f === 4) geometry = r.packed();
      else r.skip(t);
    }
    for (let i = 0; i + 1 < tags.length; i += 2) feature.props[layer.keys[tags[i]]] = layer.values[tags[i + 1]];
    const zigzag = (n) => (n % 2 ? -(n + 1) / 2 : n / 2);
    let x = 0;
    let y = 0;
    let line = null;
    for (let i = 0; i < geometry.length; ) {
      const command = geometry[i] & 7;
      const count = Math.floor(geometry[i] / 8);
      i += 1;
      if (command === 7) { if (line) line.closed = true; continue; }
      for (let k = 0; k < count && i + 1 < geometry.length; k += 1) {
        x += zigzag(geometry[i]);
        y += zigzag(geometry[i + 1]);
        i += 2;
        if (command === 1) { line = [[x, y]]; feature.lines.push(line); }
        else if (line) line.push([x, y]);
      }
    }
    return feature;
  }

  /// Draw a tile: areas (water blue, the rest pale), then streets with a casing, then the
  /// streets' names at the larger zooms.
  function drawTile(canvas, layers, zoom) {
    const pen = canvas.getContext("2d");
    const size = canvas.width;
    pen.fillStyle = "#f2efe9";
    pen.fillRect(0, 0, size, size);
    const trace = (lines, scale) => {
      pen.beginPath();
      for (const line of lines) {
        line.forEach(([x, y], i) => (i ? pen.lineTo(x * scale, y * scale) : pen.moveTo(x * scale, y * scale)));
        if (line.closed) pen.closePath();
      }
    };
    const of = (type) => layers.flatMap((l) => l.features.filter((f) => f.type === type).map((f) => [l, f]));
    for (const [layer, f] of of(3)) {
      pen.fillStyle = /water|ocean|sea|river/.test(layer.name) ? "#aad3df" : "#e3e0d8";
      trace(f.lines, size / layer.extent);
      pen.fill();
    }
    const streets = of(2);
    pen.lineCap = "round";
    pen.lineJoin = "round";
    for (const [colour, width] of [["#b8b2a6", 5], ["#ffffff", 3]]) {
      pen.strokeStyle = colour;
      pen.lineWidth = zoom >= 15 ? width * 1.6 : width;
      for (const [layer, f] of streets) {
        trace(f.lines, size / layer.extent);
        pen.stroke();
      }
    }
    if (zoom < 14) return;
    // Each street's name on its longest stretch inside this tile, along it, with a halo; a
    // stretch shorter than the name gets none (the next tile's may have it).
    pen.font = "11px system-ui, sans-serif";
    pen.textAlign = "center";
    pen.textBaseline = "middle";
    pen.lineWidth = 3;
    pen.strokeStyle = "#ffffff";
    pen.fillStyle = "#333333";
    for (const [layer, f] of streets) {
      const name = f.props.name;
      if (!name) continue;
      const scale = size / layer.extent;
      let best = null;
      for (const line of f.lines) {
        for (let i = 1; i < line.length; i += 1) {
          const part = clip(line[i - 1][0] * scale, line[i - 1][1] * scale, line[i][0] * scale, line[i][1] * scale, 4, size - 4);
          if (part && (!best || part.length > best.length)) best = part;
        }
      }
      if (!best || best.length < pen.measureText(name).width + 12) continue;
      let angle = Math.atan2(best.y1 - best.y0, best.x1 - best.x0);
      if (angle > Math.PI / 2) angle -= Math.PI;
      if (angle < -Math.PI / 2) angle += Math.PI;
      pen.save();
      pen.translate((best.x0 + best.x1) / 2, (best.y0 + best.y1) / 2);
      pen.rotate(angle);
      pen.strokeText(name, 0, 0);
      pen.fillText(name, 0, 0);
      pen.restore();
    }
  }

  /// The part of a segment inside the square [lo, hi]² (Liang–Barsky), or null.
  function clip(x0, y0, x1, y1, lo, hi) {
    let t0 = 0;
    let t1 = 1;
    const dx = x1 - x0;
    const dy = y1 - y0;
    for (const [p, q] of [[-dx, x0 - lo], [dx, hi - x0], [-dy, y0 - lo], [dy, hi - y0]]) {
      if (p === 0) {
        if (q < 0) return null;
        continue;
      }
      const t = q / p;
      if (p < 0) t0 = Math.max(t0, t);
      else t1 = Math.min(t1, t);
      if (t0 > t1) return null;
    }
    const part = { x0: x0 + t0 * dx, y0: y0 + t0 * dy, x1: x0 + t1 * dx, y1: y0 + t1 * dy };
    part.length = Math.hypot(part.x1 - part.x0, part.y1 - part.y0);
    return part;
  }

  function vectorLayer(template, options) {
    const Layer = L.GridLayer.extend({
      createTile(coords, done) {
        const canvas = document.createElement("canvas");
        canvas.width = 256;
        canvas.height = 256;
        const url = template.replace("{z}", coords.z).replace("{x}", coords.x).replace("{y}", coords.y);
        // 204: the archive has no tile there (beyond its area); nothing to draw.
        fetch(url)
          .then((answer) => (answer.ok ? answer.arrayBuffer() : Promise.reject(new Error(`tile ${answer.status}`))))
          .then((buffer) => {
            if (buffer.byteLength) drawTile(canvas, decodeTile(new Uint8Array(buffer)), coords.z);
            canvas.dataset.drawn = "1";
            done(null, canvas);
          })
          .catch((error) => done(error, canvas));
        return canvas;
      },
    });
    return new Layer(options);
  }

  /// Where the tiles put a place on the page (the browser test holds the dots to it).
  function point(lng, lat) {
    if (!map) return null;
    const p = map.latLngToContainerPoint([lat, lng]);
    const box = map.getContainer().getBoundingClientRect();
    return [box.left + p.x, box.top + p.y];
  }

  window.wafuelTiles = { project, unproject, minWidth: 0.25, follow, point };
  document.addEventListener("DOMContentLoaded", attach);
})();

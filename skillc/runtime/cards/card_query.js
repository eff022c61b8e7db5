// A card instance's this.createSelectorQuery() and the 2d canvas it reaches (docs/components.md,
// "SelectorQuery and canvas"). As in WeChat, exec() answers after the next render: the query waits
// here until Python, once the card has rendered, finds the nodes it names (#id selectors) and
// calls answerQueries. A <canvas type="2d"> node comes back as a canvas whose getContext('2d')
// records every call; Python paints the recorded ops into the picture the preview shows.
(function (I) {
  'use strict';
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const assign = Object.assign;
  const defineProperty = Object.defineProperty;
  const MAX_OPS = 20000;

  let pending = []; // [{requests: [{selector, all, fields, cb}], done}]
  const canvases = new Map(); // Render IR node id -> {rec, canvas}

  // -- the 2d context ---------------------------------------------------------------------------
  const STATE = {
    fillStyle: '#000000', strokeStyle: '#000000', lineWidth: 1, font: '10px sans-serif', textAlign: 'start',
    textBaseline: 'alphabetic', globalAlpha: 1, lineCap: 'butt', lineJoin: 'miter',
  };
  const DRAW = ['save', 'restore', 'scale', 'translate', 'rotate', 'transform', 'setTransform', 'resetTransform',
    'beginPath', 'closePath', 'moveTo', 'lineTo', 'rect', 'arc', 'ellipse', 'quadraticCurveTo', 'bezierCurveTo',
    'fill', 'stroke', 'fillRect', 'strokeRect', 'clearRect', 'fillText', 'strokeText'];
  const SKIPPED = ['drawImage', 'clip', 'setLineDash', 'arcTo', 'putImageData', 'createPattern', 'getImageData',
    'createImageData', 'isPointInPath', 'isPointInStroke'];

  function record(rec, op) {
    if (rec.ops.length >= MAX_OPS) { rec.capped = true; return; }
    rec.ops[rec.ops.length] = op;
    rec.dirty = true;
  }
  function fontSize(font) {
    const m = /(\d+(?:\.\d+)?)px/.exec(String(font));
    return m ? +m[1] : 10;
  }

  function makeContext(rec, canvas) {
    let values = assign({}, STATE);
    const stack = [];
    const ctx = { canvas: canvas };
    for (const name of Object.keys(STATE)) {
      defineProperty(ctx, name, {
        enumerable: true,
        get: function () { return values[name]; },
        set: function (v) {
          values[name] = v;
          if ((name === 'fillStyle' || name === 'strokeStyle') && typeof v !== 'string') {
            record(rec, ['unsupported', name + ' (a gradient or pattern)']);
            return;
          }
          record(rec, ['set', name, typeof v === 'number' ? v : String(v)]);
        },
      });
    }
    for (const name of DRAW) {
      ctx[name] = function () {
        const op = [name];
        for (let i = 0; i < arguments.length; i++) {
          const a = arguments[i];
          if (a === undefined) break;
          op[op.length] = typeof a === 'number' || typeof a === 'boolean' ? a : String(a);
        }
        record(rec, op);
        if (name === 'save') stack[stack.length] = assign({}, values);
        else if (name === 'restore' && stack.length) values = stack.pop();
      };
    }
    for (const name of SKIPPED) {
      ctx[name] = function () {
        record(rec, ['unsupported', name]);
        return name.indexOf('isPointIn') === 0 ? false : null;
      };
    }
    const gradient = function (name) {
      return function () {
        record(rec, ['unsupported', name]);
        return { addColorStop: function () {} };
      };
    };
    ctx.createLinearGradient = gradient('createLinearGradient');
    ctx.createRadialGradient = gradient('createRadialGradient');
    ctx.createConicGradient = gradient('createConicGradient');
    ctx.getLineDash = function () { return []; };
    // No font metrics without a font engine: CJK characters as wide as the font size, others 0.55.
    ctx.measureText = function (text) {
      const size = fontSize(values.font);
      let width = 0;
      for (const ch of String(text)) width += ch.charCodeAt(0) >= 0x2e80 ? size : size * 0.55;
      return { width: width, actualBoundingBoxAscent: size * 0.8, actualBoundingBoxDescent: size * 0.2 };
    };
    return ctx;
  }

  function toSize(v) {
    const n = Math.floor(Number(v));
    return n > 0 && n < 100000 ? n : 0;
  }

  function canvasFor(nodeId, width, height) {
    const known = canvases.get(nodeId);
    if (known) return known.canvas;
    const rec = { width: toSize(width), height: toSize(height), ops: [], dirty: true, capped: false };
    const canvas = {};
    // Setting a size clears the bitmap, as it does in a browser.
    defineProperty(canvas, 'width', {
      enumerable: true,
      get: function () { return rec.width; },
      set: function (v) { rec.width = toSize(v); rec.ops = []; rec.dirty = true; },
    });
    defineProperty(canvas, 'height', {
      enumerable: true,
      get: function () { return rec.height; },
      set: function (v) { rec.height = toSize(v); rec.ops = []; rec.dirty = true; },
    });
    const ctx = makeContext(rec, canvas);
    canvas.getContext = function (type) {
      if (String(type) === '2d') return ctx;
      record(rec, ['unsupported', 'getContext(' + String(type) + ')']);
      return null;
    };
    canvas.createImage = function () {
      record(rec, ['unsupported', 'createImage']);
      return { src: '', width: 0, height: 0, onload: null, onerror: null };
    };
    canvas.requestAnimationFrame = function () { record(rec, ['unsupported', 'requestAnimationFrame']); return 0; };
    canvas.cancelAnimationFrame = function () {};
    canvas.toDataURL = function () { record(rec, ['unsupported', 'toDataURL']); return ''; };
    canvases.set(nodeId, { rec: rec, canvas: canvas });
    return canvas;
  }

  // A map's context: the card's calls fail as WeChat's would when the map cannot do them.
  const MAP_METHODS = ['getCenterLocation', 'moveToLocation', 'translateMarker', 'includePoints', 'getRegion',
    'getScale', 'getRotate', 'getSkew', 'addMarkers', 'removeMarkers', 'setCenterOffset', 'openMapApp'];
  function mapContext() {
    const context = {};
    for (const name of MAP_METHODS) {
      context[name] = function (opts) {
        const o = opts !== null && typeof opts === 'object' ? opts : {};
        const res = { errMsg: name + ':fail skillc shows the map as a static preview' };
        if (typeof o.fail === 'function') o.fail(res);
        if (typeof o.complete === 'function') o.complete(res);
        return I.hasCallbacks(o) ? undefined : Promise.reject(res);
      };
    }
    return context;
  }

  // -- the query ----------------------------------------------------------------------------------
  const FIELD_NAMES = ['id', 'dataset', 'rect', 'size', 'scrollOffset', 'node', 'context', 'mark'];
  function pickFields(f) {
    const o = f !== null && typeof f === 'object' ? f : {};
    const out = {};
    for (const k of FIELD_NAMES) if (o[k]) out[k] = true;
    if (Array.isArray(o.properties)) out.properties = o.properties.map(String);
    if (Array.isArray(o.computedStyle)) out.computedStyle = o.computedStyle.map(String);
    return out;
  }

  I.createSelectorQuery = function () {
    let requests = [];
    const query = {};
    function nodesRef(selector, all) {
      function add(fields, cb) {
        requests[requests.length] = { selector: selector, all: all, fields: fields, cb: typeof cb === 'function' ? cb : null };
        return query;
      }
      return {
        fields: function (f, cb) { return add(pickFields(f), cb); },
        boundingClientRect: function (cb) { return add({ id: true, dataset: true, rect: true, size: true }, cb); },
        scrollOffset: function (cb) { return add({ id: true, dataset: true, scrollOffset: true }, cb); },
        node: function (cb) { return add({ node: true }, cb); },
        context: function (cb) { return add({ context: true }, cb); },
      };
    }
    query.in = function () { return query; };
    query.select = function (selector) { return nodesRef(String(selector), false); };
    query.selectAll = function (selector) { return nodesRef(String(selector), true); };
    query.selectViewport = function () { return nodesRef('viewport', false); };
    query.exec = function (cb) {
      pending[pending.length] = { requests: requests, done: typeof cb === 'function' ? cb : null };
      requests = [];
      return query;
    };
    return query;
  };

  // What Python needs after a slice: the queries waiting for a render (they stay until answered)
  // and the canvases drawn on since the last time (each with all of its ops).
  // Loops, not map/forEach: the skill may have replaced the prototypes' methods.
  I.previewState = function () {
    const queries = [];
    for (let i = 0; i < pending.length; i++) {
      const reqs = pending[i].requests;
      const out = [];
      for (let j = 0; j < reqs.length; j++) out[j] = { selector: reqs[j].selector, all: reqs[j].all, fields: reqs[j].fields };
      queries[i] = out;
    }
    const drawn = {};
    let any = false;
    for (const [nodeId, entry] of canvases) {
      const rec = entry.rec;
      if (!rec.dirty) continue;
      rec.dirty = false;
      drawn[nodeId] = { width: rec.width, height: rec.height, ops: rec.ops, capped: rec.capped };
      any = true;
    }
    if (!queries.length && !any) return 'null';
    return stringify({ queries: queries, canvases: drawn });
  };

  function revive(value) {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map(revive);
    const out = {};
    for (const k of Object.keys(value)) {
      const v = value[k];
      if (k === 'node' && v !== null && typeof v === 'object' && typeof v.canvas === 'string') {
        out.node = canvasFor(v.canvas, v.width, v.height);
      } else if (k === 'context' && v !== null && typeof v === 'object' && v.map) {
        out.context = mapContext();
      } else {
        out[k] = v;
      }
    }
    return out;
  }

  // Python's answers to the first answers.length waiting queries, one list per query with one
  // entry per request (an object, a list for selectAll, or null). Runs the callbacks; returns ''
  // or the first exception as a described error.
  I.answerQueries = function (json) {
    const answers = parse(json);
    const done = pending.slice(0, answers.length);
    pending = pending.slice(answers.length);
    for (let i = 0; i < done.length; i++) {
      const q = done[i];
      const results = [];
      try {
        for (let j = 0; j < q.requests.length; j++) {
          const r = revive(answers[i][j] === undefined ? null : answers[i][j]);
          results[results.length] = r;
          if (q.requests[j].cb) q.requests[j].cb(r);
        }
        if (q.done) q.done(results);
      } catch (e) {
        const d = I.describe(e);
        d.phase = 'SelectorQuery.exec';
        return I.envelope(d);
      }
    }
    return '';
  };
})(globalThis.__skillc_internal);

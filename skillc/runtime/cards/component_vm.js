// The Atomic Component VM: Component({...}) and the one card instance of this context.
// setData updates this.data at once (as in WeChat) and queues the change as JSON; Python takes
// the queue after each slice, re-renders only what depends on the changed paths, and diffs.
// Notification handlers, lifetimes and event handlers report their exceptions as values, so
// Python can fall back to a generic card instead of showing a broken one.
(function (I, global) {
  'use strict';
  const { parse, stringify } = JSON;
  const keysOf = Object.keys;
  const isArray = Array.isArray;
  const freeze = Object.freeze;
  const apply = Reflect.apply;
  const mapForEach = Map.prototype.forEach;

  const NotificationType = freeze({ Input: 'Input', Result: 'Result', Expire: 'Expire', Overflow: 'Overflow' });
  const MAX_OBSERVER_DEPTH = 16;

  let def = null;
  let inst = null;
  let pending = new Map(); // setData key -> value as JSON; re-set keys move to the end (order of last write)
  let callbacks = [];
  let errors = []; // exceptions of async handlers and setData callbacks, as described errors
  const listeners = new Map(); // notification type -> [fn]
  let observerDepth = 0;
  let maxIndex = 100000; // RuntimeConfig.card_max_data_index, set by bootComponent

  function describeAt(phase, e) {
    const d = I.describe(e);
    d.phase = phase;
    return d;
  }

  // -- paths: 'a.b', 'list[2].price' ------------------------------------------------------
  const segRe = /\[(\d+)\]|\.?([^.[\]]+)/y;
  function parsePath(key) {
    const out = [];
    segRe.lastIndex = 0;
    while (segRe.lastIndex < key.length) {
      const at = segRe.lastIndex;
      const m = segRe.exec(key);
      if (m === null || (at === 0 && key[0] === '.')) return null;
      out.push(m[1] !== undefined ? +m[1] : m[2]);
    }
    return out.length ? out : null;
  }
  function setPath(root, path, value) {
    let node = root;
    for (let i = 0; i < path.length - 1; i++) {
      let child = node[path[i]];
      if (child === null || typeof child !== 'object') {
        child = typeof path[i + 1] === 'number' ? [] : {};
        node[path[i]] = child;
      }
      node = child;
    }
    node[path[path.length - 1]] = value;
  }
  // The first array index beyond maxIndex that setPath would write (growing an array to reach
  // it), or -1. Checked before anything is written, so a refused key allocates nothing.
  function indexBeyond(root, path) {
    let node = root;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i];
      if (isArray(node)) {
        const n = typeof seg === 'number' ? seg : (/^\d+$/.test(seg) ? +seg : -1);
        if (n > maxIndex && n >= node.length) return n;
      }
      let child = node !== null && typeof node === 'object' ? node[seg] : undefined;
      if (child === null || typeof child !== 'object') child = typeof path[i + 1] === 'number' ? [] : {};
      node = child;
    }
    return -1;
  }
  function getPath(root, text) {
    const path = parsePath(text);
    let node = root;
    if (path === null) return undefined;
    for (const seg of path) {
      if (node === null || node === undefined) return undefined;
      node = node[seg];
    }
    return node;
  }
  function startsWithPath(longer, shorter) {
    if (shorter.length > longer.length) return false;
    for (let i = 0; i < shorter.length; i++) if (String(longer[i]) !== String(shorter[i])) return false;
    return true;
  }

  // -- observers ----------------------------------------------------------------------------
  function runObservers(changed) {
    const observers = def.observers;
    if (!observers || typeof observers !== 'object' || observerDepth >= MAX_OBSERVER_DEPTH) return;
    observerDepth++;
    try {
      for (const spec of keysOf(observers)) {
        const fn = observers[spec];
        if (typeof fn !== 'function') continue;
        const fields = spec.split(',').map(function (f) { return f.trim(); });
        let hit = false;
        for (const field of fields) {
          if (field === '**') { hit = true; break; }
          const deep = field.endsWith('.**');
          const p = parsePath(deep ? field.slice(0, -3) : field);
          if (p === null) continue;
          // A change at, under or above the field's path (`.**` matches the same way).
          for (const c of changed) {
            if (startsWithPath(c, p) || startsWithPath(p, c)) { hit = true; break; }
          }
          if (hit) break;
        }
        if (!hit) continue;
        const values = fields.map(function (f) {
          if (f === '**') return inst.data;
          return getPath(inst.data, f.endsWith('.**') ? f.slice(0, -3) : f);
        });
        fn.apply(inst, values);
      }
    } finally {
      observerDepth--;
    }
  }

  // -- the instance ---------------------------------------------------------------------------
  function setData(obj, callback) {
    if (obj === null || typeof obj !== 'object' || isArray(obj)) throw new TypeError('setData expects an object');
    const changed = [];
    for (const key of keysOf(obj)) {
      const value = obj[key];
      if (value === undefined) {
        I.callSync('card.warn', { code: 'CMPVM007', message: 'setData: the value of "' + key + '" is undefined; the key is ignored' });
        continue;
      }
      const path = parsePath(key);
      if (path === null) {
        I.callSync('card.warn', { code: 'CMPVM007', message: 'setData: "' + key + '" is not a data path; the key is ignored' });
        continue;
      }
      const beyond = indexBeyond(inst.data, path);
      if (beyond >= 0) {
        I.callSync('card.warn', {
          code: 'CMPVM015',
          message: 'setData: "' + (key.length > 100 ? key.slice(0, 100) + '...' : key) + '" names index ' + beyond + ', beyond the largest allowed index ' + maxIndex + ' (card_max_data_index); the key is ignored',
        });
        continue;
      }
      let json = stringify(value);
      if (json === undefined) json = 'null'; // a function or symbol: JSON (and so the card) sees null
      setPath(inst.data, path, parse(json));
      pending.delete(key);
      pending.set(key, json);
      changed.push(path);
    }
    if (typeof callback === 'function') callbacks.push(callback);
    if (changed.length) runObservers(changed);
  }

  function defaultFor(type) {
    if (type === String) return '';
    if (type === Number) return 0;
    if (type === Boolean) return false;
    if (type === Array) return [];
    if (type === Object) return null;
    return null;
  }

  // A host-validated card call in the mini-program convention: callbacks, or a promise.
  function cardCall(api, name, args, o) {
    const r = I.callSync(name, args);
    const res = r.ok ? Object.assign({}, r.value || {}, { errMsg: api + ':ok' }) : { errMsg: api + ':fail ' + r.error };
    if (I.hasCallbacks(o)) {
      if (r.ok && typeof o.success === 'function') o.success(res);
      if (!r.ok && typeof o.fail === 'function') o.fail(res);
      if (typeof o.complete === 'function') o.complete(res);
      return undefined;
    }
    return r.ok ? Promise.resolve(res) : Promise.reject(res);
  }
  function on(type, fn) {
    if (typeof fn !== 'function') throw new TypeError('on(' + String(type) + ', fn) expects a function');
    const list = listeners.get(String(type)) || [];
    list.push(fn);
    listeners.set(String(type), list);
  }
  function off(type, fn) {
    const list = listeners.get(String(type));
    if (!list) return;
    listeners.set(String(type), fn === undefined ? [] : list.filter(function (f) { return f !== fn; }));
  }

  const modelCtx = freeze({
    on: on,
    off: off,
    sendFollowUpMessage: function (opts) {
      const o = opts || {};
      return cardCall('sendFollowUpMessage', 'card.followUp', { content: o.content === undefined ? null : o.content }, o);
    },
    reapplyApiCall: function (opts) {
      const o = opts || {};
      return cardCall('reapplyApiCall', 'card.reapply', { arguments: o.arguments === undefined ? null : o.arguments }, o);
    },
    updateModelContext: function (opts) {
      const o = opts || {};
      return cardCall('updateModelContext', 'card.updateModelContext', { content: o.content === undefined ? null : o.content }, o);
    },
  });
  const viewCtx = freeze({
    on: on,
    off: off,
    getDimensions: function () { return I.callSync('card.dimensions', {}).value; },
    expirePreviousCards: function (opts) {
      const o = opts || {};
      return cardCall('expirePreviousCards', 'card.expirePrevious', { componentPaths: o.componentPaths, match: o.match }, o);
    },
    setRelatedPage: function (opts) {
      const o = opts || {};
      return cardCall('setRelatedPage', 'card.setRelatedPage', { path: o.path, query: o.query }, o);
    },
    openDetailPage: function (opts) {
      const o = opts || {};
      return cardCall('openDetailPage', 'card.openDetailPage', { url: o.url, path: o.path, query: o.query }, o);
    },
    preloadDetailPage: function (opts) { return cardCall('preloadDetailPage', 'card.noop', {}, opts || {}); },
    updateModelContext: modelCtx.updateModelContext,
  });

  // -- timers (scope.dynamic) ----------------------------------------------------------------
  // The card host owns the schedule (card_timers.py): setTimeout / setInterval register a timer
  // there and return at once; Python fires it later with fireTimer, in a slice of its own, so a
  // timer outlives the event that set it. A timer the host refuses (too many) never fires.
  const timers = new Map(); // id -> {fn, args, repeat}
  let nextTimer = 1;
  const MAX_DELAY = 86400000;
  const ErrorCtor = Error; // the skill may replace the global later; the call site must still be found
  function startTimer(fn, ms, args, repeat) {
    const id = nextTimer++;
    let n = +ms;
    n = n > 0 ? (n < MAX_DELAY ? n : MAX_DELAY) : 0;
    const at = I.where(new ErrorCtor().stack);
    const r = I.callSync('timer.set', { id: id, ms: n, repeat: repeat, at: at });
    if (r.ok) timers.set(id, { fn: fn, args: args, repeat: repeat });
    return id;
  }
  function stopTimer(id) {
    const n = +id;
    if (timers.delete(n)) I.callSync('timer.clear', { id: n });
  }
  function installCardTimers() {
    const define = function (name, value) {
      Object.defineProperty(global, name, { value: value, writable: true, configurable: true, enumerable: false });
    };
    define('setTimeout', function (fn, ms, ...args) { return startTimer(fn, ms, args, false); });
    define('setInterval', function (fn, ms, ...args) { return startTimer(fn, ms, args, true); });
    define('clearTimeout', stopTimer);
    define('clearInterval', stopTimer);
  }
  I.fireTimer = function (id) {
    const t = timers.get(id);
    if (t === undefined) return '';
    if (!t.repeat) timers.delete(id);
    if (typeof t.fn !== 'function') return '';
    return guard('timer', function () { return apply(t.fn, undefined, t.args); });
  };

  function installWx(dynamic, maxDataIndex) {
    if (typeof maxDataIndex === 'number') maxIndex = maxDataIndex;
    const wx = I.makeWx({ network: dynamic });
    // Card actions the host carries out (host/card_media.py); wx.js gives cards no stub for them.
    wx.previewMedia = function (opts) {
      const o = opts || {};
      return cardCall('previewMedia', 'card.previewMedia', { sources: o.sources, current: o.current }, o);
    };
    wx.makePhoneCall = function (opts) {
      const o = opts || {};
      return cardCall('makePhoneCall', 'card.makePhoneCall', { phoneNumber: o.phoneNumber }, o);
    };
    wx.modelContext.NotificationType = NotificationType;
    wx.modelContext.getContext = function () { return modelCtx; };
    wx.modelContext.getViewContext = function () { return viewCtx; };
    Object.defineProperty(global, 'wx', { value: I.freezeHost(wx), writable: false, configurable: false, enumerable: true });
    if (dynamic) installCardTimers();
  }

  // -- what a mount read that its inputs do not decide (card.py keeps a mount only without) -----
  // The clock, randomness and the collector's timing are the only inputs a context has besides
  // its code, the notifications and the host calls (which Python counts): each is wrapped here,
  // before any skill code runs, to note that it was read.
  let nondeterministic = false;
  let queried = false; // createSelectorQuery: its answers come from a render
  function taint() { nondeterministic = true; }
  function watched(fn) {
    const wrapper = function () { taint(); return apply(fn, this, arguments); };
    Object.defineProperty(wrapper, 'name', { value: fn.name }); // Date.now.name is still 'now'
    return wrapper;
  }
  function watchConstructor(name, noArgsOnly) {
    const Ctor = global[name];
    if (typeof Ctor !== 'function') return;
    const proxy = new Proxy(Ctor, {
      construct: function (target, args, newTarget) {
        if (!noArgsOnly || args.length === 0) taint();
        return Reflect.construct(target, args, newTarget === proxy ? target : newTarget);
      },
      apply: function (target, self, args) { taint(); return apply(target, self, args); },
    });
    Object.defineProperty(global, name, { value: proxy, writable: true, configurable: true, enumerable: false });
    // new Date().constructor === Date, as before
    Object.defineProperty(Ctor.prototype, 'constructor', { value: proxy, writable: true, configurable: true, enumerable: false });
  }
  function watchNondeterminism() {
    Math.random = watched(Math.random);
    Date.now = watched(Date.now);
    watchConstructor('Date', true); // new Date(ms) is a function of ms; new Date() reads the clock
    watchConstructor('WeakRef', false);
    watchConstructor('FinalizationRegistry', false);
    const perf = global.performance; // its properties are read-only: the object is replaced
    if (typeof perf === 'object' && perf !== null && typeof perf.now === 'function') {
      const perfNow = perf.now;
      const origin = perf.timeOrigin;
      const watchedPerf = {};
      Object.defineProperty(watchedPerf, 'now', { value: function now() { taint(); return apply(perfNow, perf, []); }, enumerable: true });
      Object.defineProperty(watchedPerf, 'timeOrigin', { get: function () { taint(); return origin; }, enumerable: true });
      Object.defineProperty(global, 'performance', { value: freeze(watchedPerf), writable: true, configurable: true, enumerable: true });
    }
  }
  // Whether the instance's state so far follows from its code and notifications alone, and what
  // a card without a context must still know: the notifications it listens to, and whether
  // closing it would run code (a detached lifetime).
  I.purity = function () {
    const lt = def !== null && def.lifetimes && typeof def.lifetimes === 'object' ? def.lifetimes : {};
    const detached = def !== null && (typeof lt.detached === 'function' || typeof def.detached === 'function');
    const listening = [];
    apply(mapForEach, listeners, [function (list, type) { if (list.length) listening[listening.length] = type; }]);
    return stringify({
      nondeterministic: nondeterministic,
      queried: queried,
      detached: detached,
      timers: timers.size,
      pending: pending.size + callbacks.length + errors.length,
      listening: listening,
    });
  };

  I.bootComponent = function (dynamic, maxDataIndex) {
    watchNondeterminism();
    installWx(dynamic, maxDataIndex);
    const Component = function Component(options) {
      if (def !== null) throw new Error('Component() was called more than once');
      if (options === null || typeof options !== 'object') throw new TypeError('Component() expects an object');
      def = options;
    };
    Object.defineProperty(global, 'Component', { value: Component, writable: false, configurable: false, enumerable: false });
  };

  // -- a mini-program page (skillc/runtime/pages): Page({data, onLoad(query), ...}) -------------
  // The same instance machinery as a card (setData, the change queue, observers are the card's);
  // what differs is the definition: a page's methods are its top-level functions, and its hooks
  // take arguments (onLoad's query). The debug console renders one page per context.
  let pageMode = false;
  I.bootPage = function (maxDataIndex) {
    installWx(false, maxDataIndex);
    pageMode = true;
    const Page = function Page(options) {
      if (def !== null) throw new Error('Page() was called more than once');
      if (options === null || typeof options !== 'object') throw new TypeError('Page() expects an object');
      def = options;
    };
    const app = freeze({ globalData: {} }); // no App() runs beside a page in the console
    const define = function (name, value) {
      Object.defineProperty(global, name, { value: value, writable: false, configurable: false, enumerable: false });
    };
    define('Page', Page);
    define('getApp', function () { return app; });
    define('getCurrentPages', function () { return inst === null ? [] : [inst]; });
  };
  I.createPage = function (route, queryJson) {
    if (def === null) {
      return I.envelope({ name: 'Error', message: 'the page did not call Page({...})', stack: '', at: null, phase: 'load' });
    }
    return guard('create', function () {
      const data = def.data && typeof def.data === 'object' ? parse(stringify(def.data)) : {};
      inst = { route: route, options: parse(queryJson), data: data, setData: setData };
      for (const k of keysOf(def)) if (typeof def[k] === 'function' && k !== 'data') inst[k] = def[k];
    });
  };
  // A page hook (onLoad with its query, onShow, onReady); one the page lacks is not an error.
  I.pageHook = function (name, argJson) {
    if (!pageMode || inst === null || typeof def[name] !== 'function') return '';
    return guard(name, function () { return def[name].call(inst, parse(argJson)); });
  };

  // -- driver functions (Python calls these; each returns '' or a described error as JSON) ---
  function guard(phase, fn) {
    try {
      const r = fn();
      if (r !== null && typeof r === 'object' && typeof r.then === 'function') {
        r.then(undefined, function (e) { errors.push(describeAt(phase, e)); });
      }
      return '';
    } catch (e) {
      return I.envelope(describeAt(phase, e));
    }
  }

  I.create = function () {
    if (def === null) {
      return I.envelope({ name: 'Error', message: 'index.js did not call Component({...})', stack: '', at: null, phase: 'load' });
    }
    return guard('created', function () {
      const data = def.data && typeof def.data === 'object' ? parse(stringify(def.data)) : {};
      const props = def.properties && typeof def.properties === 'object' ? def.properties : {};
      for (const k of keysOf(props)) {
        if (k in data) continue;
        const p = props[k];
        const v = p !== null && typeof p === 'object' && 'value' in p ? p.value : defaultFor(p !== null && typeof p === 'object' ? p.type : p);
        data[k] = v === undefined ? null : parse(stringify(v) || 'null');
      }
      inst = {
        is: '',
        id: '',
        dataset: {},
        data: data,
        properties: data,
        setData: setData,
        triggerEvent: function (name, detail) { I.callSync('card.trigger', { name: String(name), detail: detail === undefined ? null : detail }); },
        createSelectorQuery: function () { queried = true; return I.createSelectorQuery(); }, // card_query.js
      };
      const methods = def.methods && typeof def.methods === 'object' ? def.methods : {};
      for (const k of keysOf(methods)) if (typeof methods[k] === 'function') inst[k] = methods[k];
      return lifetime('created');
    });
  };

  function lifetime(name) {
    if (def === null || inst === null) return undefined; // no instance: nothing to run it on
    const lt = def.lifetimes && typeof def.lifetimes[name] === 'function' ? def.lifetimes[name] : def[name];
    return typeof lt === 'function' ? lt.call(inst) : undefined;
  }
  I.lifetime = function (name) { return guard(name, function () { return lifetime(name); }); };

  I.notify = function (type, payloadJson) {
    const list = (listeners.get(type) || []).slice();
    for (const fn of list) {
      const err = guard(type, function () { return fn.call(inst, parse(payloadJson)); });
      if (err !== '') return err;
    }
    return '';
  };

  I.event = function (handler, eventJson) {
    const fn = inst[handler];
    if (typeof fn !== 'function') return I.envelope({ name: 'TypeError', message: 'the component has no method "' + String(handler) + '"', stack: '', at: null, phase: 'missing' });
    return guard('event', function () { return fn.call(inst, parse(eventJson)); });
  };

  I.take = function () {
    const parts = [];
    apply(mapForEach, pending, [function (json, key) { parts[parts.length] = I.join(['[', stringify(key), ',', json, ']'], ''); }]);
    pending = new Map();
    const errs = errors;
    errors = [];
    // join, not +: QuickJS-ng builds ropes from +, and the binding cannot return a rope. The
    // captured join and the envelope walker: the skill may have replaced Array.prototype.join.
    return I.join(['{"changes":[', I.join(parts, ','), '],"errors":', I.envelope(errs), ',"callbacks":', String(callbacks.length), ',"previews":', I.previewState(), '}'], '');
  };
  I.runCallbacks = function () {
    const list = callbacks;
    callbacks = [];
    for (const cb of list) {
      try { cb.call(inst); } catch (e) { errors.push(describeAt('setData callback', e)); }
    }
  };
  I.snapshot = function () { return stringify(inst.data); };
  I.restore = function (dataJson) {
    const data = parse(dataJson);
    inst.data = data;
    inst.properties = data;
    pending = new Map();
    callbacks = [];
  };
  I.stopTimers = function () { timers.clear(); };
})(globalThis.__skillc_internal, globalThis);

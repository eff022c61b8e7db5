// The Atomic API VM: wx.modelContext.createSkill / registerAPI / skill.use, and the call itself
// (middleware onion in registration order, then the handler). The result is written into a box
// that Python polls after draining the job queue.
(function (I, global) {
  'use strict';
  const { parse, stringify } = JSON;
  // The runtime's own envelopes go through the prelude's envelope (own data only, captured
  // built-ins), so a toJSON planted on Object.prototype cannot change what Python reads.
  const envelope = I.envelope;
  const describe = I.describe;
  const wx = I.makeWx({ network: true, standIns: true });
  const apis = new Map();
  const registrations = [];
  let current = null;

  function at() { return I.where(new Error().stack); }

  function makeSkill(path) {
    const skill = { path: path, middleware: [] };
    const api = {
      use: function (fn) {
        if (typeof fn !== 'function') throw new TypeError('skill.use() expects a function, got ' + typeof fn);
        skill.middleware.push(fn);
        return api;
      },
      registerAPI: function (name, fn) { register(skill, name, fn, at()); return api; },
    };
    return Object.freeze(api);
  }
  function register(skill, name, fn, where) {
    const n = String(name);
    registrations.push({ name: n, skillPath: skill.path, file: where && where.file, line: where && where.line,
      isFunction: typeof fn === 'function' });
    if (typeof fn === 'function') apis.set(n, { skill: skill, fn: fn });
  }
  const skills = [];
  wx.modelContext.createSkill = function (path) {
    const s = makeSkill(path === undefined ? '' : String(path));
    current = s;
    skills.push(s);
    return s;
  };
  wx.modelContext.registerAPI = function (name, fn) {
    if (current === null) current = wx.modelContext.createSkill('');
    current.registerAPI(name, fn);
  };
  Object.defineProperty(global, 'wx', { value: I.freezeHost(wx), writable: false, configurable: false, enumerable: true });
  I.installTimers();

  I.registrations = function () { return envelope(registrations); };

  let box = '';
  function finish(payload) {
    if (box !== '') return;
    try {
      box = envelope(payload);
    } catch (e) {
      box = envelope({ state: 'unserializable', error: describe(e) });
    }
  }
  I.poll = function () { return box; };
  I.invoke = function (name, argsJson, skillPathFallback) {
    const entry = apis.get(name);
    if (entry === undefined) { box = envelope({ state: 'missing' }); return; }
    const mws = entry.skill.middleware.slice();
    const ctx = { name: name, skillPath: entry.skill.path || skillPathFallback, arguments: parse(argsJson) };
    const args = parse(argsJson);
    let index = -1;
    let handled;
    function dispatch(i) {
      if (i <= index) return Promise.reject(new Error('next() called more than once'));
      index = i;
      if (i === mws.length) {
        return Promise.resolve(entry.fn(args)).then(function (r) { handled = r; return r; });
      }
      return Promise.resolve(mws[i](ctx, function next() { return dispatch(i + 1); })).then(function (r) {
        return r === undefined ? handled : r;
      });
    }
    let started;
    try {
      started = dispatch(0);
    } catch (e) {
      started = Promise.reject(e);
    }
    started.then(function (value) {
      let json;
      try {
        json = stringify(value);
      } catch (e) {
        finish({ state: 'unserializable', error: describe(e) });
        return;
      }
      finish({ state: 'returned', json: json === undefined ? null : json });
    }, function (e) {
      finish({ state: 'threw', error: describe(e) });
    });
  };
})(globalThis.__skillc_internal, globalThis);

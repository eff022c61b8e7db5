// Sandboxed CommonJS. Python compiles every file of the skill into a module function and
// registers it here; require() only ever reads this registry, never a file system.
(function (I) {
  'use strict';
  const files = new Map();
  const cache = new Map();
  const { parse, stringify } = JSON;
  const { freeze } = Object;

  I.defineModule = function (path) {
    const fn = globalThis.__skillc_m;
    delete globalThis.__skillc_m;
    if (typeof fn !== 'function') return false;
    files.set(path, { fn: fn });
    return true;
  };
  I.defineJson = function (path, text) { files.set(path, { json: text }); };

  function dirname(p) { const i = p.lastIndexOf('/'); return i < 0 ? '' : p.slice(0, i); }
  function fail(message) { const e = new Error(message); e.code = 'MODULE_NOT_FOUND'; return e; }

  function resolve(spec, from) {
    if (typeof spec !== 'string') throw new TypeError('require() expects a string, got ' + typeof spec);
    let parts;
    if (spec.startsWith('/')) parts = [];
    else if (spec === '.' || spec === '..' || spec.startsWith('./') || spec.startsWith('../')) {
      parts = dirname(from) ? dirname(from).split('/') : [];
    } else {
      throw fail("Cannot find module '" + spec + "' (only relative paths inside the skill package are allowed)");
    }
    for (const seg of spec.split('/')) {
      if (seg === '' || seg === '.') continue;
      if (seg === '..') {
        if (!parts.length) throw fail("require('" + spec + "') escapes the skill package");
        parts.pop();
      } else parts.push(seg);
    }
    const base = parts.join('/');
    const tries = base ? [base, base + '.js', base + '.json', base + '/index.js', base + '/index.json']
      : ['index.js', 'index.json'];
    for (const t of tries) if (files.has(t)) return t;
    throw fail("Cannot find module '" + spec + "' from '" + from + "'");
  }

  function load(path) {
    const hit = cache.get(path);
    if (hit !== undefined) return hit.exports;
    const def = files.get(path);
    const module = { exports: {}, id: path, filename: path, loaded: false };
    cache.set(path, module);
    try {
      if (def.json !== undefined) module.exports = parse(def.json);
      else def.fn.call(module.exports, module.exports, makeRequire(path), module, path, dirname(path));
    } catch (e) {
      cache.delete(path);
      throw e;
    }
    module.loaded = true;
    return module.exports;
  }

  function makeRequire(from) {
    return freeze(function require(spec) { return load(resolve(spec, from)); });
  }

  I.runMain = function (path) {
    if (!files.has(path)) return I.envelope({ name: 'Error', message: 'index.js is missing', stack: '', at: null });
    try {
      load(path);
      return '';
    } catch (e) {
      return I.envelope(I.describe(e));
    }
  };
})(globalThis.__skillc_internal);

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
  // A file that does not compile: require() of it throws its SyntaxError, placed in the file (not
  // in the module wrapper), so only what requires it fails to load.
  I.defineBroken = function (path, json) { files.set(path, { broken: parse(json) }); };
  function brokenError(b) {
    const e = b.name === 'SyntaxError' ? new SyntaxError(b.message) : new Error(b.message);
    if (b.name !== 'SyntaxError' && b.name !== 'Error') e.name = b.name;
    // The file's place first, then the skill's frames that required it (the loader's are noise).
    let stack = '    at ' + b.file + ':' + b.line + ':' + b.column + '\n';
    for (const line of String(e.stack || '').split('\n')) if (line && line.indexOf('skillc:') < 0) stack += line + '\n';
    Object.defineProperty(e, 'stack', { value: stack, writable: true, configurable: true });
    return e;
  }

  function dirname(p) { const i = p.lastIndexOf('/'); return i < 0 ? '' : p.slice(0, i); }
  function fail(message) { const e = new Error(message); e.code = 'MODULE_NOT_FOUND'; return e; }

  // Where require() may reach (skillc/frontend/modpaths.py has the same rules): the skill folder,
  // or the subpackage root the skill sits in, with the skill folder at `prefix` inside it. Files
  // are named relative to the skill folder; a shared file by the path that reaches it
  // ('../_shared/money.js').
  let prefix = [];
  let boundary = 'the skill package';
  I.setCodeRoot = function (json) {
    const root = parse(json);
    prefix = root.prefix;
    boundary = root.label;
  };

  function key(parts) {
    let common = 0;
    while (common < prefix.length && common < parts.length && prefix[common] === parts[common]) common++;
    const up = [];
    for (let i = common; i < prefix.length; i++) up.push('..');
    return up.concat(parts.slice(common)).join('/');
  }

  function walk(base, path) {
    for (const seg of path.split('/')) {
      if (seg === '' || seg === '.') continue;
      if (seg === '..') {
        if (!base.length) return null;
        base.pop();
      } else base.push(seg);
    }
    return base;
  }

  function resolve(spec, from) {
    if (typeof spec !== 'string') throw new TypeError('require() expects a string, got ' + typeof spec);
    let parts;
    if (spec.startsWith('/')) parts = prefix.slice();
    else if (spec === '.' || spec === '..' || spec.startsWith('./') || spec.startsWith('../')) {
      parts = walk(prefix.slice(), dirname(from));
    } else {
      throw fail("Cannot find module '" + spec + "' (only relative paths inside the skill package are allowed)");
    }
    parts = parts === null ? null : walk(parts, spec);
    if (parts === null) throw fail("require('" + spec + "') escapes " + boundary);
    const base = parts.join('/');
    const tries = base ? [base, base + '.js', base + '.json', base + '/index.js', base + '/index.json']
      : ['index.js', 'index.json'];
    for (const t of tries) {
      const k = key(t.split('/'));
      if (files.has(k)) return k;
    }
    throw fail("Cannot find module '" + spec + "' from '" + from + "'");
  }

  function load(path) {
    const hit = cache.get(path);
    if (hit !== undefined) return hit.exports;
    const def = files.get(path);
    const module = { exports: {}, id: path, filename: path, loaded: false };
    cache.set(path, module);
    try {
      if (def.broken !== undefined) throw brokenError(def.broken);
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

// Engine prelude: runs first in every context, before any skill code. It removes every route to
// code generation from strings, captures the host functions Python installed (so skill code can
// neither call nor replace them), and builds the JSON bridge and the console. Kept small: it is
// compiled once per call.
(function (global) {
  'use strict';
  const hostSync = global.__skillc_host_sync;
  const hostAsync = global.__skillc_host_async;
  const hostConsole = global.__skillc_console;
  delete global.__skillc_host_sync;
  delete global.__skillc_host_async;
  delete global.__skillc_console;

  const { parse, stringify } = JSON;
  const { freeze, defineProperty, getPrototypeOf } = Object;
  const apply = Reflect.apply;
  const StringCtor = String;
  const ErrorCtor = Error;
  const PromiseCtor = Promise;
  const MapCtor = Map;
  const { get: mapGet, set: mapSet, delete: mapDelete, clear: mapClear } = Map.prototype;
  const { split, startsWith, slice } = String.prototype;
  const execRe = RegExp.prototype.exec;

  // Lockdown: eval and every Function-constructor route.
  const thrower = function Function() { throw new EvalError('code generation from strings is disabled'); };
  thrower.prototype = Function.prototype;
  delete global.eval;
  for (const p of [Function.prototype, getPrototypeOf(async function () {}),
    getPrototypeOf(function* () {}), getPrototypeOf(async function* () {})]) {
    defineProperty(p, 'constructor', { value: thrower, writable: false, configurable: false });
  }
  defineProperty(global, 'Function', { value: thrower, writable: false, configurable: false, enumerable: false });

  const I = {};
  I.callSync = function (name, args) {
    return parse(hostSync(name, args === undefined ? 'null' : stringify(args)));
  };
  const pending = new MapCtor();
  I.callAsync = function (name, args) {
    const id = hostAsync(name, args === undefined ? 'null' : stringify(args));
    return new PromiseCtor(function (resolve) { apply(mapSet, pending, [id, resolve]); });
  };
  I.settle = function (id, reply) {
    const resolve = apply(mapGet, pending, [id]);
    if (resolve === undefined) return;
    apply(mapDelete, pending, [id]);
    resolve(parse(reply));
  };

  const frameRe = /\(?([^()\s]+):(\d+):(\d+)\)?\s*$/;
  I.where = function (stack) {
    const lines = apply(split, StringCtor(stack || ''), ['\n']);
    for (let i = 0; i < lines.length; i++) {
      const m = apply(execRe, frameRe, [lines[i]]);
      if (m && !apply(startsWith, m[1], ['skillc:'])) return { file: m[1], line: +m[2], column: +m[3] };
    }
    return null;
  };
  I.show = function (v) {
    if (typeof v === 'string') return v;
    if (v instanceof ErrorCtor) return StringCtor(v.name) + ': ' + StringCtor(v.message) + (v.stack ? '\n' + v.stack : '');
    if (typeof v === 'function') return '[Function ' + (v.name || 'anonymous') + ']';
    if (typeof v === 'undefined' || typeof v === 'bigint' || typeof v === 'symbol') return apply(StringCtor, undefined, [v]);
    try {
      const s = stringify(v);
      return s === undefined ? StringCtor(v) : s;
    } catch (e) {
      return '[unserializable ' + typeof v + ']';
    }
  };
  I.describe = function (e) {
    if (e instanceof ErrorCtor) {
      let stack = '';
      let message = '';
      let name = 'Error';
      try { stack = StringCtor(e.stack || ''); message = StringCtor(e.message); name = StringCtor(e.name); } catch (_) {}
      return { name: name, message: message, stack: stack, at: I.where(stack) };
    }
    return { name: 'Error', message: 'a non-Error value was thrown: ' + I.show(e), stack: '', at: null };
  };
  function jsonArg(v) {
    try {
      const s = stringify(v);
      return s === undefined ? I.show(v) : (s.length > 65536 ? apply(slice, s, [0, 65536]) : parse(s));
    } catch (e) {
      return I.show(v);
    }
  }
  function logger(level) {
    return function () {
      const args = [];
      const parts = [];
      for (let i = 0; i < arguments.length; i++) { args[i] = jsonArg(arguments[i]); parts[i] = I.show(arguments[i]); }
      const at = I.where(new ErrorCtor().stack);
      hostConsole(stringify({ level: level, text: parts.join(' '), args: args, at: at }));
    };
  }
  const console = freeze({
    log: logger('log'), info: logger('info'), warn: logger('warn'), error: logger('error'),
    debug: logger('debug'), trace: logger('debug'), dir: logger('log'), table: logger('log'),
  });
  defineProperty(global, 'console', { value: console, writable: false, configurable: false, enumerable: false });

  I.installTimers = function () {
    const timers = new MapCtor();
    let next = 1;
    function start(fn, ms, args, repeat) {
      const id = next++;
      apply(mapSet, timers, [id, true]);
      const delay = +ms > 0 ? +ms : 0;
      const tick = function () {
        I.callAsync('timer.sleep', { ms: delay }).then(function () {
          if (!apply(mapGet, timers, [id])) return;
          if (!repeat) apply(mapDelete, timers, [id]);
          if (typeof fn === 'function') apply(fn, undefined, args);
          if (repeat) tick();
        });
      };
      tick();
      return id;
    }
    const stop = function (id) { apply(mapDelete, timers, [id]); };
    // Cards clear every timer on detach and expiry; a sleeping timer then finds its id gone.
    I.clearTimers = function () { apply(mapClear, timers, []); };
    const define = function (name, value) {
      defineProperty(global, name, { value: value, writable: true, configurable: true, enumerable: false });
    };
    define('setTimeout', function (fn, ms, ...args) { return start(fn, ms, args, false); });
    define('setInterval', function (fn, ms, ...args) { return start(fn, ms, args, true); });
    define('clearTimeout', stop);
    define('clearInterval', stop);
  };

  const picked = I;
  global.__skillc_internal = I;
  global.__skillc_pick = function (name) { return picked[name]; };
})(globalThis);

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
  const { join } = Array.prototype;
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
  // A stack hook sees every frame's function (CallSite.getFunction), the runtime's own included,
  // and runs inside the runtime's stack reads: the hook stays unset.
  defineProperty(ErrorCtor, 'prepareStackTrace', { value: undefined, writable: false, configurable: false });

  // The bridge's JSON: a polluted toJSON may make stringify answer undefined or throw; Python
  // gets a JSON text whatever happens (and validates what it means).
  function json(v) {
    try {
      const s = stringify(v);
      return typeof s === 'string' ? s : 'null';
    } catch (e) {
      return 'null';
    }
  }

  // The runtime's own envelopes (a call's outcome box, registrations, setData slices) as JSON,
  // walking only own enumerable data with captured built-ins: a toJSON or a getter the skill
  // planted on Object.prototype or Array.prototype cannot change what Python reads. Values
  // that came from the skill are embedded as JSON texts the skill's own semantics produced.
  const { keys } = Object;
  const isArray = Array.isArray;
  const quote = function (s) { return stringify(StringCtor(s)); };
  function envelope(v, depth) {
    if (v === null || v === undefined) return 'null';
    const t = typeof v;
    if (t === 'string') return quote(v);
    if (t === 'number') return v === v && v !== Infinity && v !== -Infinity ? StringCtor(v) : 'null';
    if (t === 'boolean') return v ? 'true' : 'false';
    if (t !== 'object' || depth > 32) return 'null';
    // Built by join, never by +: the binding cannot read the rope strings + makes of long texts.
    const parts = [];
    if (isArray(v)) {
      for (let i = 0; i < v.length; i++) parts[i] = envelope(v[i], depth + 1);
      return apply(join, ['[', apply(join, parts, [',']), ']'], ['']);
    }
    const ks = keys(v);
    for (let i = 0; i < ks.length; i++) parts[i] = apply(join, [quote(ks[i]), envelope(v[ks[i]], depth + 1)], [':']);
    return apply(join, ['{', apply(join, parts, [',']), '}'], ['']);
  }

  const I = {};
  I.envelope = function (v) { return envelope(v, 0); };
  I.join = function (parts, sep) { return apply(join, parts, [sep]); };
  // JS entered through the native eval (module definitions) must not reach Python: the binding's
  // callbacks assume JS was entered through its own eval, and abort the process otherwise.
  // Python shuts this gate around every native eval; only Python holds I.gate.
  let hostOpen = true;
  const shut = function () {
    if (!hostOpen) throw new ErrorCtor('host calls are unavailable while modules are being defined');
  };
  I.gate = function (open) { hostOpen = open === true; };
  // What the host answers once the deadline has passed (engine.py). The interrupt handler is
  // polled every few thousand instructions, and a loop of host calls may run only a few per
  // call: spin here, where the next poll comes at once and ends the context uncatchably.
  const PAST_DEADLINE = '{"ok":false,"value":null,"error":"the deadline passed"}';
  I.callSync = function (name, args) {
    shut();
    const reply = hostSync(name, json(args));
    if (reply === PAST_DEADLINE) for (;;) { /* until the interrupt */ }
    return parse(reply);
  };
  const pending = new MapCtor();
  I.callAsync = function (name, args) {
    shut();
    const id = hostAsync(name, json(args));
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
  // Shows any value as text; the value's own getters, toJSON and toString may throw (or loop,
  // which the deadline ends), so every path is guarded and the result is always a string.
  function show(v) {
    if (typeof v === 'string') return v;
    if (v instanceof ErrorCtor) return StringCtor(v.name) + ': ' + StringCtor(v.message) + (v.stack ? '\n' + v.stack : '');
    if (typeof v === 'function') return '[Function ' + StringCtor(v.name || 'anonymous') + ']';
    if (typeof v === 'undefined' || typeof v === 'bigint' || typeof v === 'symbol') return apply(StringCtor, undefined, [v]);
    try {
      const s = stringify(v);
      return typeof s === 'string' ? s : StringCtor(v);
    } catch (e) {
      return '[unserializable ' + typeof v + ']';
    }
  }
  I.show = function (v) {
    try {
      const s = show(v);
      return typeof s === 'string' ? s : '[unprintable ' + typeof v + ']';
    } catch (e) {
      return '[unprintable ' + typeof v + ']';
    }
  };
  // A thrown value is described without running the skill's code where that can be avoided:
  // an Error's name, message and stack are read as own or inherited *data* properties holding
  // strings (no getter but the engine's own stack getter, no toString), 8 KB each, and anything
  // that still throws while being described becomes a fixed text. What cannot be avoided (a
  // Proxy trap that loops) is stopped by the deadline like any loop.
  const getOwn = Object.getOwnPropertyDescriptor;
  const builtinStack = (getOwn(ErrorCtor.prototype, 'stack') || {}).get;
  const TEXT_LIMIT = 8192;
  function dataString(o, key) {
    try {
      for (let p = o, n = 0; p !== null && n < 64; p = getPrototypeOf(p), n++) {
        const d = getOwn(p, key);
        if (d === undefined) continue;
        let v = d.value;
        if (!('value' in d)) {
          if (key !== 'stack' || builtinStack === undefined || d.get !== builtinStack) return null;
          v = apply(builtinStack, o, []);
        }
        if (typeof v !== 'string') return null;
        return v.length > TEXT_LIMIT ? apply(slice, v, [0, TEXT_LIMIT]) + '...' : v;
      }
    } catch (_) { /* a Proxy in the chain */ }
    return null;
  }
  function describe(e) {
    let isError = false;
    try { isError = e instanceof ErrorCtor; } catch (_) { /* a Proxy's trap threw: not an Error */ }
    if (isError) {
      const name = dataString(e, 'name');
      const message = dataString(e, 'message');
      const stack = dataString(e, 'stack') || '';
      return { name: name === null ? 'Error' : name, message: message === null ? '' : message, stack: stack, at: I.where(stack) };
    }
    let shown = I.show(e);
    if (shown.length > TEXT_LIMIT) shown = apply(slice, shown, [0, TEXT_LIMIT]) + '...';
    return { name: 'Error', message: 'a non-Error value was thrown: ' + shown, stack: '', at: null };
  }
  I.describe = function (e) {
    try {
      return describe(e);
    } catch (_) {
      return { name: 'Error', message: 'a value was thrown that cannot be described', stack: '', at: null };
    }
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
      shut();
      hostConsole(envelope({ level: level, text: apply(join, parts, [' ']), args: args, at: at }, 0));
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

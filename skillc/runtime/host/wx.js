// The wx.* surface shared by the API VM and the Component VM. Every call goes to a Python host
// function that decides what is allowed; this file only adapts the mini-program calling
// conventions (callbacks or a promise, {errMsg}, the Sync forms).
(function (I) {
  'use strict';
  const callSync = I.callSync;
  const callAsync = I.callAsync;
  const assign = Object.assign;

  function hasCallbacks(o) {
    return typeof o.success === 'function' || typeof o.fail === 'function' || typeof o.complete === 'function';
  }
  I.hasCallbacks = hasCallbacks; // the Component VM's card calls follow the same convention
  // api: the wx name for errMsg; name: the host function; pick(opts): the JSON the host receives.
  function asyncApi(api, name, pick) {
    return function (opts) {
      const o = opts || {};
      return settle(callAsync(name, pick(o)).then(function (r) {
        if (r.ok) return assign({}, r.value, { errMsg: api + ':ok' });
        throw { errMsg: api + ':fail ' + r.error };
      }), o);
    };
  }
  // WeChat's two forms of an async API: the promise without callbacks, else success/fail/complete.
  function settle(p, o) {
    if (!hasCallbacks(o)) return p;
    p.then(function (res) {
      if (typeof o.success === 'function') o.success(res);
      if (typeof o.complete === 'function') o.complete(res);
    }, function (err) {
      if (typeof o.fail === 'function') o.fail(err);
      if (typeof o.complete === 'function') o.complete(err);
    });
    return undefined;
  }
  function sync(api, name, args) {
    const r = callSync(name, args);
    if (!r.ok) throw new Error(api + ':fail ' + r.error);
    return r.value;
  }
  function systemInfo(api) {
    return assign({}, sync(api, 'app.info', {}), sync(api, 'device.info', {}));
  }


  // The wx APIs skillc lacks (host/unavailable.py, one table): Python hands this context's stubs
  // over before the VM builds its wx. Each fails with a message naming the API (a thrown Error
  // for the sync forms, the fail callback or a rejected promise otherwise), never with
  // "undefined is not a function"; wx.canIUse answers false for them.
  //
  // The table is parsed and its stubs built only when a skill first looks past the APIs skillc
  // provides (a name wx lacks, `in`, Object.keys, canIUse, ...): building ~80 stubs in every
  // fresh context cost a third of its set-up, and most calls never touch one.
  // Stubs are built after the skill's own code has run, so that code runs on built-ins captured
  // here: a skill that replaced JSON.parse, an array iterator or a WeakSet method, or planted a
  // setter on Object.prototype, must not steer how its wx is built.
  let unavailableJson = '[]';
  const parse = JSON.parse;
  const { freeze, keys, defineProperty, hasOwn } = Object;
  const apply = Reflect.apply;
  const join = Array.prototype.join;
  const { has: wsHas, add: wsAdd } = WeakSet.prototype;
  const { get: wmGet, set: wmSet } = WeakMap.prototype;
  function define(o, k, v) {
    defineProperty(o, k, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true });
  }
  const stubs = new WeakSet();
  I.setUnavailable = function (json) { unavailableJson = String(json); };
  function stub(u) {
    const api = apply(join, u.path, ['.']);
    let fn;
    if (u.message === null) fn = function () { return undefined; };
    else if (u.sync) {
      fn = function () {
        const e = new Error(u.message);
        e.errMsg = api + ':fail ' + u.message;
        throw e;
      };
    } else {
      fn = function (opts) {
        const o = opts !== null && typeof opts === 'object' ? opts : {};
        const res = { errMsg: api + ':fail ' + u.message };
        if (hasCallbacks(o)) {
          Promise.resolve().then(function () {
            if (typeof o.fail === 'function') o.fail(res);
            if (typeof o.complete === 'function') o.complete(res);
          });
          return undefined;
        }
        const e = new Error(u.message);
        e.errMsg = res.errMsg;
        return Promise.reject(e);
      };
    }
    if (u.message !== null) apply(wsAdd, stubs, [fn]);
    return fn;
  }
  // The objects of the wx API (wx.modelContext, wx.cloud, wx.cloud.extend.AI, ...), as opposed to
  // data hung on them (NotificationType): only these answer an unknown name with a stub.
  const namespaces = new WeakSet();
  // unwrap: the open object behind a namespace's proxy (reads through the proxy would answer
  // missing names with unknown-name stubs).
  function installStubs(wx, unwrap) {
    const table = parse(unavailableJson);
    for (let j = 0; j < table.length; j++) {
      const u = table[j];
      const path = u.path;
      let node = wx;
      for (let i = 0; i < path.length - 1; i++) {
        const seg = path[i];
        if (!hasOwn(node, seg)) {
          const ns = {};
          define(node, seg, ns);
          apply(wsAdd, namespaces, [ns]);
        }
        node = unwrap(node[seg]);
      }
      const leaf = path[path.length - 1];
      if (!hasOwn(node, leaf)) define(node, leaf, stub(u)); // a real implementation wins
    }
  }

  // Any other name read from wx or one of its namespaces: WeChat has hundreds of APIs the table
  // does not list, and without this a call of one fails as "not a function", naming nothing. The
  // stub is a function (so typeof says 'function'), but `in` and wx.canIUse still say no.
  const unknown = Object.create(null); // one stub per name, so wx.foo === wx.foo
  function unknownStub(path) {
    let fn = unknown[path];
    if (fn === undefined) {
      const leaf = path.slice(path.lastIndexOf('.') + 1);
      // WeChat's convention: Sync forms, create* factories and get*Manager return at once
      const isSync = /Sync$|^create[A-Z]|^get\w*Manager$/.test(leaf);
      fn = stub({ path: path.split('.'), sync: isSync, message: 'wx.' + path + ' is not provided by skillc' });
      unknown[path] = fn;
    }
    return fn;
  }
  const R = { get: Reflect.get, set: Reflect.set, has: Reflect.has, deleteProperty: Reflect.deleteProperty,
    defineProperty: Reflect.defineProperty, getOwnPropertyDescriptor: Reflect.getOwnPropertyDescriptor,
    ownKeys: Reflect.ownKeys, getPrototypeOf: Reflect.getPrototypeOf, setPrototypeOf: Reflect.setPrototypeOf,
    isExtensible: Reflect.isExtensible, preventExtensions: Reflect.preventExtensions };
  const trapNames = keys(R);
  const ProxyCtor = Proxy;
  function plain(o) {
    const copy = { __proto__: null };
    const ks = keys(o);
    for (let i = 0; i < ks.length; i++) copy[ks[i]] = o[ks[i]];
    return copy;
  }
  function unknownOr(target, key, prefix) {
    // then: `await wx` and Promise.resolve(wx) probe it; toJSON: JSON.stringify(wx) does
    if (typeof key !== 'string' || key in target || key === 'then' || key === 'toJSON') return target[key];
    return unknownStub(prefix + key);
  }
  // The host tree (wx and its namespaces) behind proxies whose targets stay open until the stubs
  // are wanted: the first trap other than the read of a provided API installs them all, freezes
  // every namespace, and only then answers, so no skill ever sees an open or a partial wx.
  function lazyHost(raw) {
    const targets = [];
    let ready = false;
    function materialize() {
      if (ready) return;
      ready = true;
      installStubs(raw, function (v) { const t = apply(wmGet, targetOf, [v]); return t === undefined ? v : t; });
      for (let i = 0; i < targets.length; i++) seal(targets[i].target, targets[i].prefix);
      // From now on the engine's own behaviour for every trap but get, as an eager build had.
      for (let i = 0; i < handlers.length; i++) {
        for (let j = 0; j < trapNames.length; j++) if (trapNames[j] !== 'get') delete handlers[i][trapNames[j]];
      }
    }
    function seal(o, prefix) {
      const ks = keys(o);
      for (let i = 0; i < ks.length; i++) {
        const k = ks[i];
        const v = o[k];
        // a namespace the stubs created (wx.cloud): no proxy yet
        if (apply(wsHas, namespaces, [v])) o[k] = wrap(v, prefix + k + '.', true);
        else if (v !== null && typeof v === 'object' && !apply(wsHas, proxies, [v])) freeze(v);
      }
      freeze(o);
    }
    const proxies = new WeakSet();
    const targetOf = new WeakMap();
    const handlers = [];
    function wrap(o, prefix, sealNow) {
      if (sealNow) seal(o, prefix);
      else targets[targets.length] = { target: o, prefix: prefix };
      // No prototype: the engine reads each trap off the handler, and a trap planted on
      // Object.prototype would otherwise become one.
      const handler = {
        __proto__: null,
        get: function (target, key) {
          // own names only: the stubs shadow whatever a skill planted on Object.prototype
          if (!ready && !(typeof key === 'string' && hasOwn(target, key))) materialize();
          return unknownOr(target, key, prefix);
        },
      };
      for (let i = 0; i < trapNames.length; i++) {
        const trap = trapNames[i];
        if (trap === 'get') continue;
        const reflect = R[trap];
        handler[trap] = function () {
          materialize();
          const answer = apply(reflect, undefined, arguments);
          // the engine reads the answer as a descriptor: from an object without a prototype, so
          // a `get` planted on Object.prototype is not read as the property's getter
          return trap === 'getOwnPropertyDescriptor' && answer !== undefined ? plain(answer) : answer;
        };
      }
      handlers[handlers.length] = handler;
      const p = new ProxyCtor(o, handler);
      apply(wsAdd, proxies, [p]);
      apply(wmSet, targetOf, [p, o]);
      return p;
    }
    function lazy(o, prefix) {
      const ks = keys(o);
      for (let i = 0; i < ks.length; i++) {
        const k = ks[i];
        const v = o[k];
        if (apply(wsHas, namespaces, [v])) o[k] = lazy(v, prefix + k + '.');
        else if (v !== null && typeof v === 'object') freeze(v); // data hung on wx: frozen from the start
      }
      return wrap(o, prefix, false);
    }
    return { wx: lazy(raw, ''), materialize: materialize };
  }

  I.makeWx = function (features) {
    const wx = {
      setStorage: asyncApi('setStorage', 'storage.set', function (o) { return { key: o.key, data: o.data }; }),
      getStorage: asyncApi('getStorage', 'storage.get', function (o) { return { key: o.key }; }),
      removeStorage: asyncApi('removeStorage', 'storage.remove', function (o) { return { key: o.key }; }),
      clearStorage: asyncApi('clearStorage', 'storage.clear', function () { return {}; }),
      getStorageInfo: asyncApi('getStorageInfo', 'storage.info', function () { return {}; }),
      setStorageSync: function (key, data) { sync('setStorageSync', 'storage.set', { key: key, data: data }); },
      getStorageSync: function (key) {
        const r = callSync('storage.get', { key: key });
        if (r.ok) return r.value.data;
        if (r.error === 'data not found') return '';
        throw new Error('getStorageSync:fail ' + r.error);
      },
      removeStorageSync: function (key) { sync('removeStorageSync', 'storage.remove', { key: key }); },
      clearStorageSync: function () { sync('clearStorageSync', 'storage.clear', {}); },
      getStorageInfoSync: function () { return sync('getStorageInfoSync', 'storage.info', {}); },
      getDeviceInfo: function () { return sync('getDeviceInfo', 'device.info', {}); },
      getAppBaseInfo: function () { return sync('getAppBaseInfo', 'app.info', {}); },
      // The deprecated getSystemInfo family, which published skills still call (often behind
      // `wx.getSystemInfoSync ? ... : {}`): what getAppBaseInfo and getDeviceInfo answer, merged.
      getSystemInfoSync: function () { return systemInfo('getSystemInfoSync'); },
      getSystemInfo: function (opts) {
        const o = opts || {};
        return settle(new Promise(function (resolve) {
          resolve(assign(systemInfo('getSystemInfo'), { errMsg: 'getSystemInfo:ok' }));
        }).catch(function (e) { throw { errMsg: String(e && e.message || e) }; }), o);
      },
      getAccountInfoSync: function () { return sync('getAccountInfoSync', 'account.info', {}); },
      modelContext: {
        getSessionId: function () { return sync('getSessionId', 'session.id', {}); },
        expireAllCards: function (opts) {
          const o = opts || {};
          sync('expireAllCards', 'cards.expireAll',
            { componentPaths: o.componentPaths, componentPath: o.componentPath, match: o.match });
          const res = { errMsg: 'expireAllCards:ok' };
          if (typeof o.success === 'function') o.success(res);
          if (typeof o.complete === 'function') o.complete(res);
        },
      },
    };
    if (features.network) {
      wx.request = asyncApi('request', 'request', function (o) {
        return { url: o.url, method: o.method, data: o.data, header: o.header, timeout: o.timeout,
          dataType: o.dataType, responseType: o.responseType };
      });
      wx.login = asyncApi('login', 'login', function () { return {}; });
      wx.checkSession = asyncApi('checkSession', 'checkSession', function () { return {}; });
    }
    if (features.standIns) {
      // The stand-ins for WeChat-only APIs (host/standins.py): API code only, behind the call's consent.
      wx.requestPayment = asyncApi('requestPayment', 'payment.request', function (o) {
        return { timeStamp: o.timeStamp, nonceStr: o.nonceStr, package: o.package, signType: o.signType,
          paySign: o.paySign };
      });
      wx.getPhoneNumber = asyncApi('getPhoneNumber', 'profile.phoneNumber', function () { return {}; });
      wx.chooseAddress = asyncApi('chooseAddress', 'profile.address', function () { return {}; });
      wx.getLocation = asyncApi('getLocation', 'profile.location', function (o) {
        return { type: o.type, altitude: o.altitude, isHighAccuracy: o.isHighAccuracy,
          highAccuracyExpireTime: o.highAccuracyExpireTime };
      });
      wx.getFuzzyLocation = asyncApi('getFuzzyLocation', 'profile.fuzzyLocation', function (o) {
        return { type: o.type };
      });
    }
    namespaces.add(wx.modelContext);
    wx.canIUse = function (name) {
      if (host !== null) host.materialize();
      let node = wx;
      for (const part of String(name).split('.')) {
        if (node === null || typeof node !== 'object' || !(part in node)) return false;
        node = node[part];
      }
      return !apply(wsHas, stubs, [node]);
    };
    return wx;
  };

  // Freeze the host objects (wx and its namespaces) so skill code cannot swap a host API for
  // another module, and let every namespace name the APIs it lacks; the functions themselves are
  // not walked (that costs more than a call).
  let host = null;
  I.freezeHost = function (wx) {
    host = lazyHost(wx);
    return host.wx;
  };
})(globalThis.__skillc_internal);

// The skillc debug console: lists render targets, renders one in a device frame (an iframe holding
// the HTML backend's document), shows the console, trace events and tool calls, runs the Debugger
// MCP's control commands that arrive over SSE (/__debug/events) and answers them
// (/__debug/answer), and posts the debug scene to /__agent_trace. No build step.
(function () {
  'use strict';

  var MAX_NODES = 5000;
  var state = {
    consoleId: null,
    targets: { widgets: [], pages: [] },
    mode: 'widget',
    current: null, // RuntimeTargetInfo
    currentData: {},
    viewport: { width: 375, height: 667 },
    scale: 1,
    console: [],
    traceEvents: [],
    toolCalls: [],
    chat: [], // one entry per turn: requestId, query, messages, cards
    seen: {}, // msgid / event id / tool call id -> true: what the server sent twice is kept once
    seq: 0,
  };
  var $ = function (id) { return document.getElementById(id); };
  var frame = $('device');

  function now() { return Date.now(); }
  function nextId(prefix) { state.seq += 1; return prefix + '-' + state.seq; }

  // The launch token from the console URL skillc debug printed: every route but the page itself
  // refuses requests without it (a header here; EventSource cannot send one, so a query parameter).
  var TOKEN = new URLSearchParams(location.search).get('token') || '';
  // The signal of the control command being run: its fetches end when the server cancels it.
  var commandSignal = null;
  function api(path, init) {
    init = init || {};
    if (commandSignal && !init.signal) init.signal = commandSignal;
    var headers = init.headers || {};
    headers['x-skillc-debug-token'] = TOKEN;
    init.headers = headers;
    return fetch(path, init);
  }

  function fail(code, message) { var e = new Error(message); e.code = code; return e; }

  // -- the panels ---------------------------------------------------------------------------

  function li(text, cls) { var el = document.createElement('li'); el.textContent = text; if (cls) el.className = cls; return el; }

  function addConsole(target, level, source, text, extra) {
    var entry = { msgid: nextId('msg'), target: target, level: level, source: source, timestamp: now(), text: String(text) };
    if (extra) { for (var k in extra) if (extra[k] !== undefined && extra[k] !== null) entry[k] = extra[k]; }
    state.console.push(entry);
    var where = entry.url ? ' (' + entry.url + (entry.lineNumber ? ':' + entry.lineNumber : '') + ')' : '';
    $('console-list').appendChild(li('[' + target + ' ' + level + '] ' + entry.text + where, level));
    return entry;
  }

  // Lines and records from the server (runtime console, a chat turn) carry their own ids.
  function addEntries(entries) {
    (entries || []).forEach(function (e) {
      if (!e || state.seen[e.msgid]) return;
      state.seen[e.msgid] = true;
      state.console.push(e);
      var where = e.url ? ' (' + e.url + (e.lineNumber ? ':' + e.lineNumber : '') + ')' : '';
      $('console-list').appendChild(li('[' + e.target + ' ' + e.source + ' ' + e.level + '] ' + e.text + where, e.level));
    });
  }

  function addTurn(res) {
    (res.traceEvents || []).forEach(function (ev) {
      if (state.seen[ev.id]) return;
      state.seen[ev.id] = true;
      state.traceEvents.push(ev);
      $('trace-list').appendChild(li(ev.category + '/' + ev.event + ' ' + JSON.stringify(ev.payload || {}).slice(0, 200)));
    });
    (res.toolCalls || []).forEach(function (c) { if (!state.seen[c.id]) { state.seen[c.id] = true; addToolCall(c); } });
    addEntries(res.console);
    (res.messages || []).forEach(function (m) {
      // A call shows the planner's reason (its text), then each call.
      var text = m.role === 'assistant' && m.toolCalls ? (m.text ? m.text + '\n' : '') + m.toolCalls.map(function (c) { return '→ ' + c.name + ' ' + JSON.stringify(c.arguments); }).join('\n') : m.text;
      $('chat-list').appendChild(li(m.role + (m.toolName ? ' ' + m.toolName : '') + ': ' + String(text).slice(0, 600), 'chat-' + m.role));
    });
    state.chat.push({
      requestId: res.requestId, query: res.query, planner: res.planner, messages: res.messages,
      cards: (res.cards || []).map(function (c) { return { toolName: c.toolName, cardId: c.cardId, componentPath: c.componentPath, widgetId: c.widgetId, structuredContent: c.structuredContent }; }),
    });
  }

  function addTrace(category, event, payload, requestId) {
    var ev = {
      source: state.mode === 'page' ? 'page_runtime' : state.mode === 'chat' ? 'simulator' : 'widget_runtime',
      id: nextId('ev'), timestamp: now(), category: category, event: event, payload: payload === undefined ? null : payload,
    };
    if (requestId) ev.requestId = requestId;
    state.traceEvents.push(ev);
    $('trace-list').appendChild(li(category + '/' + event + ' ' + JSON.stringify(payload || {}).slice(0, 200)));
  }

  function addToolCall(call) {
    state.toolCalls.push(call);
    $('call-list').appendChild(li(call.toolName + ' ' + call.status + (call.message ? ': ' + call.message : '')));
  }

  function setStatus(on, text) {
    var el = $('status'); el.textContent = text; el.className = 'status ' + (on ? 'on' : 'off');
  }

  // -- targets ------------------------------------------------------------------------------

  function listTargets() {
    var wl = $('widget-list'), pl = $('page-list');
    wl.textContent = ''; pl.textContent = '';
    state.targets.widgets.forEach(function (w) {
      var el = li(w.name + (w.skill ? '  · ' + w.skill : ''));
      el.dataset.id = w.widgetId;
      el.onclick = function () { renderWidget(w.widgetId, readData(), null).catch(showError); };
      wl.appendChild(el);
    });
    state.targets.pages.forEach(function (p) {
      var el = li(p.path);
      el.dataset.id = p.pageId;
      el.onclick = function () { renderPage(p.path, null).catch(showError); };
      pl.appendChild(el);
    });
    markCurrent();
  }

  function markCurrent() {
    document.querySelectorAll('nav li').forEach(function (el) {
      el.classList.toggle('current', !!state.current && el.dataset.id === state.current.id);
    });
  }

  function readData() {
    try { var v = JSON.parse($('data-input').value || '{}'); return v && typeof v === 'object' ? v : {}; }
    catch (e) { return {}; }
  }

  function showError(e) { addConsole('app', 'error', 'console', (e.code ? e.code + ': ' : '') + e.message); }

  // -- rendering ----------------------------------------------------------------------------

  function applyViewport() {
    var vp = state.viewport;
    frame.style.width = vp.width + 'px';
    frame.style.height = vp.height + 'px';
    var stage = $('stage');
    var room = Math.max(100, stage.clientWidth - 60), roomH = Math.max(100, stage.clientHeight - 80);
    state.scale = Math.min(1, room / vp.width, roomH / vp.height);
    var box = $('frame-box');
    box.style.transform = state.scale === 1 ? '' : 'scale(' + state.scale + ')';
    box.style.width = (vp.width + 20) + 'px';
    $('scale').textContent = state.scale === 1 ? '' : Math.round(state.scale * 100) + '%';
    $('vp-width').value = vp.width; $('vp-height').value = vp.height;
  }

  function loadFrame(html) {
    return new Promise(function (resolve) {
      frame.onload = function () { frame.onload = null; resolve(); };
      frame.srcdoc = html;
    }).then(function () {
      var doc = frame.contentDocument;
      var imgs = Array.prototype.slice.call(doc.images || []);
      return Promise.all(imgs.map(function (img) {
        if (img.complete) return null;
        return new Promise(function (r) { img.onload = img.onerror = r; setTimeout(r, 3000); });
      }));
    }).then(frames2);
  }

  function frames2() {
    var win = frame.contentWindow || window;
    return new Promise(function (r) { win.requestAnimationFrame(function () { win.requestAnimationFrame(function () { r(); }); }); });
  }

  function renderWidget(widgetId, data, commandId) {
    var widget = state.targets.widgets.filter(function (w) { return w.widgetId === widgetId; })[0];
    if (!widget) return Promise.reject(fail('TARGET_NOT_FOUND', 'no widget ' + JSON.stringify(widgetId)));
    var body = { widgetId: widgetId, structuredContent: data || {}, width: state.viewport.width, height: state.viewport.height };
    $('data-input').value = JSON.stringify(data || {}, null, 2);
    addTrace('runtime', 'render_widget', { widgetId: widgetId });
    return api('/__debug/api/render', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json(); })
      .then(function (res) {
        (res.diagnostics || []).forEach(function (d) {
          var level = d.severity.indexOf('error') >= 0 ? 'error' : d.severity.indexOf('warn') >= 0 ? 'warn' : 'info';
          addConsole('widget', level, 'compiler', d.code + ' ' + d.message, { url: d.file || undefined, lineNumber: d.line || undefined });
        });
        addEntries(res.console);
        if (!res.ok) throw fail(res.error.code, res.error.message);
        state.mode = 'widget';
        state.currentData = data || {};
        // What it rendered from: the given data, or the component's preview.json for {}.
        if (res.data) $('data-input').value = JSON.stringify(res.data, null, 2);
        state.current = { type: 'widget', id: widgetId, name: widget.name, path: res.path, viewport: copy(state.viewport) };
        return loadFrame(res.html);
      })
      .then(function () { return finishRender(commandId); });
  }

  function parseRoute(url) {
    var q = url.indexOf('?'), path = q < 0 ? url : url.slice(0, q), query = {};
    if (q >= 0) new URLSearchParams(url.slice(q + 1)).forEach(function (v, k) { query[k] = v; });
    return { path: path, query: query };
  }

  // The open page's id on the server: its taps go there (skillc/server/debugger/pages.py).
  var pageSession = null;

  function showDiagnostics(target, list) {
    (list || []).forEach(function (d) {
      var level = d.severity.indexOf('error') >= 0 ? 'error' : d.severity.indexOf('warn') >= 0 ? 'warn' : 'info';
      addConsole(target, level, 'compiler', d.code + ' ' + d.message, { url: d.file || undefined, lineNumber: d.line || undefined, columnNumber: d.column || undefined });
    });
  }

  // The page runs on the server as the handoff opens it: its WXML and WXSS through the compiler,
  // Page({...}) with onLoad(query), onShow, onReady; the frame shows what it rendered.
  function renderPage(url, commandId) {
    var route = parseRoute(String(url || ''));
    var page = state.targets.pages.filter(function (p) { return p.path === route.path; })[0];
    if (!page) return Promise.reject(fail('TARGET_NOT_FOUND', 'no page ' + JSON.stringify(route.path) + ' (pages: ' + state.targets.pages.map(function (p) { return p.path; }).join(', ') + ')'));
    state.mode = 'page';
    addTrace('runtime', 'render_page', { url: url });
    var body = { url: String(url), width: state.viewport.width, height: state.viewport.height };
    return api('/__debug/api/page', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json(); })
      .then(function (res) {
        showDiagnostics('page', res.diagnostics);
        addEntries(res.console);
        if (!res.ok) throw fail(res.error.code, res.error.message);
        pageSession = res.pageSessionId;
        state.currentData = res.data || {};
        state.current = { type: 'page', id: page.pageId, name: page.name, path: page.path, query: res.query || route.query, viewport: copy(state.viewport) };
        return loadFrame(res.html).then(bindPageTaps);
      })
      .then(function () { return finishRender(commandId); });
  }

  // A tap (click, or Enter / Space on a focused button) on a node that has a tap handler, or sits
  // inside one, is sent to the page; the handlers' setData comes back as the page re-rendered.
  function bindPageTaps() {
    var doc = frame.contentDocument, session = pageSession;
    function tapped(el) {
      if (!el || !el.closest || session !== pageSession || !el.closest('[data-bind-tap],[data-catch-tap]')) return;
      var node = el.closest('[data-uid]');
      if (node) pageTap(session, node.getAttribute('data-uid')).catch(showError);
    }
    doc.addEventListener('click', function (ev) { tapped(ev.target); });
    doc.addEventListener('keydown', function (ev) {
      if ((ev.key === 'Enter' || ev.key === ' ') && ev.target && ev.target.getAttribute && ev.target.getAttribute('role') === 'button') {
        ev.preventDefault();
        tapped(ev.target);
      }
    });
  }

  function pageTap(session, uid) {
    addTrace('runtime', 'page_event', { kind: 'tap', uid: uid });
    var body = { pageSessionId: session, nodeId: uid, kind: 'tap' };
    var se = frame.contentDocument.scrollingElement, scroll = se ? [se.scrollLeft, se.scrollTop] : [0, 0];
    return api('/__debug/api/page/event', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json(); })
      .then(function (res) {
        showDiagnostics('page', res.diagnostics);
        addEntries(res.console);
        if (!res.ok) throw fail(res.error.code, res.error.message);
        if (session !== pageSession) return null; // another page opened meanwhile
        state.currentData = res.data || {};
        return loadFrame(res.html).then(function () {
          var now = frame.contentDocument.scrollingElement;
          if (now) { now.scrollLeft = scroll[0]; now.scrollTop = scroll[1]; }
          bindPageTaps();
          return finishRender(null);
        });
      });
  }

  function copy(v) { return JSON.parse(JSON.stringify(v)); }

  function finishRender(commandId) {
    if (commandId) state.current.commandId = commandId; else delete state.current.commandId;
    $('target-label').textContent = state.current.type + ': ' + state.current.id + ' at ' + state.viewport.width + '×' + state.viewport.height;
    markCurrent();
    return postSnapshot(commandId).then(function () { return { rendered: true, target: state.current }; });
  }

  function rerender(commandId) {
    if (!state.current) return Promise.resolve(null);
    if (state.current.type === 'widget') return renderWidget(state.current.id, state.currentData, commandId);
    var q = new URLSearchParams(state.current.query || {}).toString();
    return renderPage(state.current.path + (q ? '?' + q : ''), commandId);
  }

  // -- the DOM snapshot ---------------------------------------------------------------------

  var ROLES = { button: 'button', image: 'img', 'scroll-view': 'region' };
  var SKIP_ATTRS = { 'data-uid': 1, 'data-type': 1, style: 1 };
  var EVENT_ATTR = /^data-(bind|catch)-([a-z0-9_-]+)$/;

  function ownText(el) {
    var s = '';
    el.childNodes.forEach(function (n) { if (n.nodeType === 3) s += n.nodeValue; });
    return s.trim();
  }

  function domTree() {
    var doc = frame.contentDocument;
    if (!doc || !doc.body || !state.current) return null;
    var count = 1;
    var root = { uid: 'root', type: state.current.type, name: state.current.name || state.current.id, attrs: {}, details: {}, children: [] };
    var win = frame.contentWindow;
    function walk(el, parent) {
      for (var c = el.firstElementChild; c; c = el.only ? null : c.nextElementSibling) {
        var uid = c.getAttribute('data-uid');
        if (!uid) { walk(c, parent); continue; }
        if (count >= MAX_NODES) { root.details.truncated = true; return; }
        count += 1;
        var type = c.getAttribute('data-type') || c.tagName.toLowerCase();
        var node = { uid: uid, type: type, attrs: {}, details: {}, children: [] };
        var role = c.getAttribute('role') || ROLES[type];
        if (role) node.role = role;
        var text = ownText(c);
        if (text) node.text = text;
        // The accessible name as the HTML backend gave it: aria-label (a tappable node's text),
        // an image's alt, a button's own text.
        var label = c.getAttribute('aria-label');
        if (label) node.name = label;
        else if (type === 'button') node.name = c.textContent.trim();
        else if (c.tagName === 'IMG' && c.getAttribute('alt')) node.name = c.getAttribute('alt');
        var events = {};
        for (var i = 0; i < c.attributes.length; i++) {
          var a = c.attributes[i];
          var bound = EVENT_ATTR.exec(a.name);
          if (bound) events[bound[1] + bound[2]] = a.value; // data-bind-tap -> bindtap, as WXML wrote it
          if (a.name === 'aria-label' && a.value === node.name) continue; // shown once, as the name
          if (!SKIP_ATTRS[a.name] && a.name !== 'role') node.attrs[a.name] = a.value;
        }
        if (Object.keys(events).length) node.events = events;
        if (c.getAttribute('style')) node.details.style = c.getAttribute('style');
        var cs = win.getComputedStyle(c);
        node.details.tag = c.tagName.toLowerCase();
        node.details.focusable = c.tabIndex >= 0;
        if (cs.display === 'none' || cs.visibility === 'hidden') node.details.hidden = true;
        parent.children.push(node);
        walk(c, node);
      }
    }
    // The Render IR's root element is uid "root": it is the tree's root itself (one uid, one node).
    var tops = Array.prototype.filter.call(doc.body.children, function (c) { return c.hasAttribute('data-uid'); });
    if (tops.length === 1 && tops[0].getAttribute('data-uid') === 'root') {
      var holder = { children: [] };
      walk({ firstElementChild: tops[0], only: true }, holder);
      var top = holder.children[0];
      root.attrs = top.attrs; root.details = top.details;
      if (top.role) root.role = top.role;
      root.children = top.children;
      return root;
    }
    walk(doc.body, root);
    return root;
  }

  function targetsWire() {
    return {
      widgets: state.targets.widgets.map(function (w) { return { widgetId: w.widgetId, name: w.name }; }),
      pages: state.targets.pages.map(function (p) { return { pageId: p.pageId, path: p.path, name: p.name, isHome: !!p.isHome }; }),
    };
  }

  function postSnapshot(commandId) {
    var snap = {
      updatedAtMs: now(),
      mode: state.mode,
      targets: targetsWire(),
      dom: domTree(),
      console: state.console,
      traceEvents: state.traceEvents,
      toolCalls: state.toolCalls,
      context: { consoleId: state.consoleId, viewport: state.viewport, displayScale: state.scale, data: state.currentData, chat: state.chat },
    };
    if (commandId) snap.commandId = commandId;
    if (state.current) snap.currentTarget = state.current;
    return api('/__agent_trace', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(snap) })
      .then(function (r) { if (!r.ok) throw fail('RENDER_FAILED', 'the debugger refused the snapshot: HTTP ' + r.status); });
  }

  // -- inspection ---------------------------------------------------------------------------

  function element(uid) {
    if (!state.current) throw fail('TARGET_NOT_FOUND', 'nothing is rendered');
    var doc = frame.contentDocument;
    var el = uid ? doc.querySelector('[data-uid="' + CSS.escape(String(uid)) + '"]') : null;
    if (!el) throw fail('ELEMENT_NOT_FOUND', 'no element with uid ' + JSON.stringify(uid) + ' in the current target');
    return el;
  }

  function computedStyle(p) {
    var el = element(p.uid);
    var cs = frame.contentWindow.getComputedStyle(el);
    var names = Array.isArray(p.properties) && p.properties.length ? p.properties : Array.prototype.slice.call(cs);
    return { uid: p.uid, computedStyle: names.map(function (n) { return { name: n, value: cs.getPropertyValue(n) }; }) };
  }

  function elementRect(p) {
    // Inside the iframe the coordinates are the device viewport's already: the frame's display
    // scale is a transform outside it, so nothing to remove here.
    var el = element(p.uid);
    // An element that takes part in no layout (display: none, or inside one) has no box to measure.
    if (!el.getClientRects().length) throw fail('INSPECTION_FAILED', 'uid ' + p.uid + ' has no layout box (it or an ancestor is display: none)');
    var r = el.getBoundingClientRect();
    return { uid: p.uid, x: r.x, y: r.y, width: r.width, height: r.height };
  }

  function scrollInfo(el, uid) {
    var doc = frame.contentDocument, isDoc = el === doc.scrollingElement;
    return {
      scrolled: true, uid: uid,
      x: el.scrollLeft, y: el.scrollTop,
      maxX: Math.max(0, el.scrollWidth - el.clientWidth), maxY: Math.max(0, el.scrollHeight - el.clientHeight),
      viewportWidth: isDoc ? frame.contentWindow.innerWidth : el.clientWidth,
      viewportHeight: isDoc ? frame.contentWindow.innerHeight : el.clientHeight,
    };
  }

  function scrollTo(p) {
    if (!state.current) throw fail('TARGET_NOT_FOUND', 'nothing is rendered');
    var doc = frame.contentDocument, win = frame.contentWindow;
    var wantX = typeof p.x === 'number', wantY = typeof p.y === 'number';
    var el, uid;
    if (p.uid) {
      el = element(p.uid); uid = p.uid;
      // The root's own box rarely scrolls; the document around it does.
      if (uid === 'root' && el.scrollWidth <= el.clientWidth && el.scrollHeight <= el.clientHeight) el = doc.scrollingElement;
    }
    else {
      var best = null, bestArea = -1, vw = win.innerWidth, vh = win.innerHeight;
      var all = [doc.scrollingElement].concat(Array.prototype.slice.call(doc.querySelectorAll('[data-uid]')));
      all.forEach(function (c) {
        if (!c) return;
        var rx = c.scrollWidth - c.clientWidth, ry = c.scrollHeight - c.clientHeight;
        var cs = c === doc.scrollingElement ? null : win.getComputedStyle(c);
        var canX = rx > 0 && (!cs || /auto|scroll/.test(cs.overflowX)), canY = ry > 0 && (!cs || /auto|scroll/.test(cs.overflowY));
        var ok = (wantX && canX) || (wantY && canY) || (!wantX && !wantY && (canX || canY));
        if (!ok) return;
        var r = c === doc.scrollingElement ? { left: 0, top: 0, right: vw, bottom: vh } : c.getBoundingClientRect();
        var area = Math.max(0, Math.min(r.right, vw) - Math.max(r.left, 0)) * Math.max(0, Math.min(r.bottom, vh) - Math.max(r.top, 0));
        if (area > bestArea) { best = c; bestArea = area; }
      });
      if (!best) throw fail('SCROLL_FAILED', 'no scrollable container with range on the requested axis');
      el = best;
      uid = el === doc.scrollingElement ? 'root' : el.getAttribute('data-uid');
    }
    var before = scrollInfo(el, uid);
    if ((wantX && before.maxX <= 0) || (wantY && before.maxY <= 0)) throw fail('SCROLL_FAILED', 'uid ' + uid + ' has no scroll range on the requested axis');
    if (wantX) el.scrollLeft = Math.min(Math.max(0, p.x), before.maxX);
    if (wantY) el.scrollTop = Math.min(Math.max(0, p.y), before.maxY);
    return frames2().then(function () { return scrollInfo(el, uid); });
  }

  // The scene the server captures in its own headless page (skillc.server.debugger.screenshot):
  // the target's document as it stands, the device size and every scroll position. The console's
  // display scale and its window size play no part, and any browser can run the console.
  function screenshotScene(p) {
    if (!state.current) throw fail('TARGET_NOT_FOUND', 'nothing is rendered');
    var doc = frame.contentDocument;
    if (!doc || !doc.documentElement) throw fail('SCREENSHOT_FAILED', 'the target has no document to capture');
    if (p.uid) element(p.uid);
    var scrolls = [];
    doc.querySelectorAll('[data-uid]').forEach(function (el) {
      if (el.scrollLeft || el.scrollTop) scrolls.push({ uid: el.getAttribute('data-uid'), x: el.scrollLeft, y: el.scrollTop });
    });
    var se = doc.scrollingElement || doc.documentElement;
    var doctype = doc.doctype ? '<!DOCTYPE ' + doc.doctype.name + '>' : '';
    return { scene: {
      html: doctype + doc.documentElement.outerHTML, width: state.viewport.width, height: state.viewport.height,
      scrollX: se.scrollLeft, scrollY: se.scrollTop, scrolls: scrolls, uid: p.uid || null,
    } };
  }

  function setViewport(p, commandId) {
    var w = p.width, h = p.height;
    if (!(w >= 1 && w <= 9999 && h >= 1 && h <= 9999)) throw fail('VIEWPORT_FAILED', 'width and height must be 1..9999');
    state.viewport = { width: Math.round(w), height: Math.round(h) };
    $('viewport-preset').value = 'custom';
    applyViewport();
    return rerender(commandId).then(function () {
      if (!state.current) return postSnapshot(commandId);
      return null;
    }, function (e) {
      // The size is set, but the target does not render at it.
      throw fail('VIEWPORT_FAILED', 'the current target did not render at ' + state.viewport.width + '×' + state.viewport.height + ': ' + (e.code ? e.code + ': ' : '') + e.message);
    }).then(function () { return { updated: true, viewport: state.viewport }; });
  }

  var chatBusy = false;

  // The chat box's submit flow, for a person and for submit_chat_query alike: the server runs the
  // turn (planner -> the skills' MCP), the console records it, shows the card the turn mounted,
  // and posts the scene before the turn counts as ended.
  function submitChat(p, commandId) {
    if (chatBusy) return Promise.reject(fail('CHAT_BUSY', 'a chat turn is still running'));
    chatBusy = true;
    state.mode = 'chat';
    $('chat-input').value = p.query;
    return api('/__debug/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: p.query }) })
      .then(function (r) {
        if (r.status === 404) throw fail('CHAT_NOT_READY', 'this debug server has no chat simulator');
        return r.json().then(function (res) {
          if (!r.ok || res.error) throw fail((res.error && res.error.code) || 'CHAT_SUBMIT_FAILED', (res.error && res.error.message) || ('HTTP ' + r.status));
          return res;
        });
      })
      .then(function (res) {
        res.query = p.query;
        addTurn(res);
        $('chat-input').value = '';
        var card = (res.cards || []).filter(function (c) { return c.html; }).pop();
        // A call that handed off to a page of the mini program opens it with the handoff's query,
        // as WeChat does; a card the turn mounted after it is what stays on screen.
        var handoff = (res.handoffs || []).filter(function (h) {
          return state.targets.pages.some(function (p) { return p.path === h.path; });
        }).pop();
        var shown = Promise.resolve();
        if (handoff && !card) {
          shown = renderPage(handoff.url || handoff.path, null).catch(showError);
        } else if (card) {
          state.currentData = card.structuredContent || {};
          state.current = { type: 'widget', id: card.widgetId || card.componentPath, name: card.name, path: card.componentPath, cardId: card.cardId, viewport: copy(state.viewport) };
          shown = loadFrame(card.html).then(function () { markCurrent(); });
        }
        return shown.then(function () {
          if (state.current) {
            if (commandId) state.current.commandId = commandId; else delete state.current.commandId;
          }
          return postSnapshot(commandId);
        }).then(function () { return { submitted: true, completed: res.completed, requestId: res.requestId }; });
      })
      .then(function (out) { chatBusy = false; return out; }, function (e) { chatBusy = false; throw e; });
  }

  // -- commands over SSE --------------------------------------------------------------------

  var HANDLERS = {
    // The debugger's own commandId (when it sends one) is what the snapshot must carry.
    render_widget: function (p, id) { return renderWidget(p.widgetId, p.structuredContent || {}, p.commandId || id); },
    render_page: function (p, id) { return renderPage(p.url, p.commandId || id); },
    set_viewport: function (p, id) { return setViewport(p, p.commandId || id); },
    get_computed_style: computedStyle,
    get_element_rect: elementRect,
    scroll_to: scrollTo,
    take_screenshot: screenshotScene,
    submit_chat_query: function (p, id) { return submitChat(p, p.commandId || id); },
  };

  function answer(id, body) {
    body.id = id; body.consoleId = state.consoleId;
    return api('/__debug/answer', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }

  // Commands the server cancelled (they ran past its timeout): id -> function that ends the command.
  var cancels = {}, cancelled = {};

  function run(cmd) {
    if (cancelled[cmd.id]) { delete cancelled[cmd.id]; return Promise.resolve(); }
    var handler = HANDLERS[cmd.name];
    var ctl = typeof AbortController === 'function' ? new AbortController() : null;
    var stop = new Promise(function (resolve) { cancels[cmd.id] = function () { if (ctl) ctl.abort(); resolve('cancelled'); }; });
    var p;
    commandSignal = ctl ? ctl.signal : null;
    try {
      if (!handler) throw fail('INSPECTION_FAILED', 'the console does not know the command ' + cmd.name);
      p = Promise.resolve(handler(cmd.params || {}, cmd.id));
    } catch (e) { p = Promise.reject(e); }
    commandSignal = null;
    // The queue moves on when the command ends or is cancelled, whichever comes first.
    var ended = p.then(function (result) { return { result: result }; }, function (e) { return { error: e }; });
    return Promise.race([ended, stop]).then(function (out) {
      delete cancels[cmd.id];
      if (out === 'cancelled') { addConsole('app', 'warn', 'console', cmd.name + ' cancelled: it ran past its timeout'); return null; }
      if (out.error) return Promise.reject(out.error);
      return out.result;
    }).then(function (result) { return answer(cmd.id, { ok: true, result: result || {} }); },
      function (e) {
        var code = e.code || (/^render_/.test(cmd.name) ? 'RENDER_FAILED' : 'INSPECTION_FAILED');
        return answer(cmd.id, { ok: false, error: { code: code, message: String(e.message || e) } });
      });
  }

  function connect() {
    // ?primary=1: the server's own headless console, which commands prefer over other tabs.
    var query = '?token=' + encodeURIComponent(TOKEN) + (/[?&]primary=1/.test(location.search) ? '&primary=1' : '');
    var es = new EventSource('/__debug/events' + query);
    var queue = Promise.resolve();
    es.addEventListener('hello', function (ev) {
      state.consoleId = JSON.parse(ev.data).consoleId;
      setStatus(true, 'connected');
      api('/__debug/api/console').then(function (r) { return r.json(); })
        .then(function (res) { addEntries(res.console); })
        .catch(function () {})
        .then(function () { return postSnapshot(null); })
        .catch(function () {});
    });
    es.addEventListener('console', function (ev) { addEntries(JSON.parse(ev.data)); });
    // The server's outbox for this page overflowed: older events were dropped (data.dropped in all).
    es.addEventListener('dropped', function (ev) {
      addConsole('app', 'warn', 'console', 'debug channel: ' + JSON.parse(ev.data).dropped + ' events dropped (the page fell behind)', {});
    });
    es.addEventListener('cancel', function (ev) {
      var id = JSON.parse(ev.data).id;
      if (cancels[id]) cancels[id](); else cancelled[id] = true;
    });
    es.addEventListener('command', function (ev) {
      var cmd = JSON.parse(ev.data);
      queue = queue.then(function () { return run(cmd); }).catch(function () {});
    });
    es.onerror = function () { setStatus(false, 'reconnecting…'); };
  }

  // -- start --------------------------------------------------------------------------------

  $('viewport-preset').onchange = function () {
    var v = this.value;
    if (v === 'custom') return;
    var wh = v.split('x');
    setViewport({ width: +wh[0], height: +wh[1] }, null).catch(showError);
  };
  $('vp-width').onchange = $('vp-height').onchange = function () {
    setViewport({ width: +$('vp-width').value, height: +$('vp-height').value }, null).catch(showError);
  };
  $('render-btn').onclick = function () { if (state.current) rerender(null).catch(showError); };
  $('chat').onsubmit = function (ev) {
    ev.preventDefault();
    var q = $('chat-input').value.trim();
    if (q) submitChat({ query: q }, null).catch(showError);
  };
  window.addEventListener('error', function (ev) { addConsole('app', 'error', 'console', ev.message, { url: ev.filename, lineNumber: ev.lineno, columnNumber: ev.colno }); });

  applyViewport();
  api('/__debug/api/targets').then(function (r) { return r.json(); }).then(function (t) {
    state.targets = t;
    listTargets();
    connect();
  });
})();

// skillc card view: an MCP Apps view (SEP-1865) that renders a skill card from Render IR.
// The host delivers the tool result; its _meta["skillc/card"] holds the Render IR document.
// Taps go to the server's app-only tool through the host (tools/call) and come back as
// Render IR patches; a sendFollowUpMessage becomes ui/message, an api/call a tools/call.
// The node -> DOM mapping is the HTML backend's (skillc/backends/html_backend.py), so a card
// looks the same here as in `skillc render --backend html`; its tables arrive as CONFIG.dom.
(function () {
  'use strict'
  var CONFIG = JSON.parse(document.getElementById('skillc-config').textContent)
  var PROTOCOL = '2026-01-26'
  var TAGS = CONFIG.dom.tags
  var CONSUMED = CONFIG.dom.consumedProps
  var SAFE_URL = new RegExp(CONFIG.dom.safeUrl)
  var CSS_PROPERTY = new RegExp(CONFIG.dom.cssProperty)
  var UNSAFE_STYLE_VALUE = new RegExp(CONFIG.dom.unsafeStyleValue)
  var ATTR_NAME = new RegExp(CONFIG.dom.attrName, 'g')
  var root = document.getElementById('card')
  var statusEl = document.getElementById('status')

  var state = { card: null, nodes: new Map(), queue: Promise.resolve(), nextId: 1, pending: new Map(), hostContext: {} }

  // -- JSON-RPC over postMessage ------------------------------------------------------------

  function post (message) { window.parent.postMessage(Object.assign({ jsonrpc: '2.0' }, message), '*') }

  function request (method, params) {
    var id = state.nextId++
    return new Promise(function (resolve, reject) {
      state.pending.set(id, { resolve: resolve, reject: reject })
      post({ id: id, method: method, params: params })
    })
  }

  function notify (method, params) { post({ method: method, params: params || {} }) }

  window.addEventListener('message', function (event) {
    if (event.source !== window.parent) return
    var msg = event.data
    if (!msg || msg.jsonrpc !== '2.0') return
    if (msg.id !== undefined && msg.method === undefined) {
      var waiter = state.pending.get(msg.id)
      if (!waiter) return
      state.pending.delete(msg.id)
      if (msg.error) waiter.reject(new Error(msg.error.message || 'host error'))
      else waiter.resolve(msg.result)
      return
    }
    if (msg.id !== undefined) { answer(msg); return }
    onNotification(msg.method, msg.params || {})
  })

  function answer (msg) {
    if (msg.method === 'ui/resource-teardown') { post({ id: msg.id, result: {} }); return }
    if (msg.method === 'tools/list') { post({ id: msg.id, result: { tools: [] } }); return }
    if (msg.method === 'ping') { post({ id: msg.id, result: {} }); return }
    post({ id: msg.id, error: { code: -32601, message: 'Method not found: ' + msg.method } })
  }

  function onNotification (method, params) {
    if (method === 'ui/notifications/tool-result') { showResult(params); return }
    if (method === 'ui/notifications/tool-cancelled') { setStatus('Cancelled: ' + (params.reason || '')); return }
    if (method === 'ui/notifications/host-context-changed') { applyContext(params); return }
  }

  function applyContext (ctx) {
    Object.assign(state.hostContext, ctx || {})
    var theme = state.hostContext.theme
    if (theme === 'dark' || theme === 'light') document.documentElement.style.colorScheme = theme
    var vars = state.hostContext.styles && state.hostContext.styles.variables
    if (vars) Object.keys(vars).forEach(function (k) { if (vars[k]) document.documentElement.style.setProperty(k, vars[k]) })
  }

  function setStatus (text) { statusEl.textContent = text || '' }

  // -- results --------------------------------------------------------------------------------

  function textOf (result) {
    return (result.content || []).filter(function (b) { return b.type === 'text' }).map(function (b) { return b.text }).join('\n')
  }

  function showResult (result) {
    var meta = result._meta || {}
    if (result.isError) { clear(); setStatus(textOf(result)); reportSize(); return }
    var card = meta['skillc/card']
    if (card && card.document) {
      state.card = card
      render(card.document)
      setStatus('')
      if (card.expired) showExpired(card.expiredText)
    } else if (meta['skillc/fallback']) {
      state.card = null
      renderFallback(meta['skillc/fallback'].card)
      setStatus('')
    } else {
      clear()
      setStatus(textOf(result))
    }
    reportSize()
  }

  function clear () { root.textContent = ''; state.nodes.clear() }

  // -- Render IR -> DOM ---------------------------------------------------------------------

  function render (doc) {
    clear()
    root.appendChild(build(doc.root, null))
  }

  function build (node, parent) {
    var entry = { ir: node, parent: parent, dom: null }
    state.nodes.set(node.id, entry)
    if (node.type === '#text') {
      entry.dom = document.createTextNode(node.props && typeof node.props.text === 'string' ? node.props.text : '')
      return entry.dom
    }
    var el = document.createElement(TAGS[node.type] || 'div')
    entry.dom = el
    setAttributes(el, node)
    if (el.tagName !== 'IMG') {
      (node.children || []).forEach(function (child) { el.appendChild(build(child, node.id)) })
    }
    return el
  }

  function setAttributes (el, node) {
    while (el.attributes.length) el.removeAttribute(el.attributes[0].name)
    var props = node.props || {}
    el.setAttribute('data-uid', node.id)
    el.setAttribute('data-type', node.type)
    if (el.tagName === 'IMG') {
      if (typeof props.src === 'string' && SAFE_URL.test(props.src.trim())) el.setAttribute('src', props.src.trim())
      el.setAttribute('alt', '')
      if (typeof props.mode === 'string') el.setAttribute('data-mode', props.mode)
    }
    if (el.tagName === 'BUTTON') {
      el.setAttribute('type', 'button')
      if (props.disabled === true || props.disabled === 'true' || props.disabled === '') el.setAttribute('disabled', 'disabled')
    }
    var events = node.events || {}
    var names = Object.keys(events).sort()
    names.forEach(function (name) {
      el.setAttribute('data-' + (events[name].catch ? 'catch' : 'bind') + '-' + suffix(name), events[name].handler)
    })
    if (names.length) el.setAttribute('data-dataset', JSON.stringify(events[names[0]].dataset || {}))
    Object.keys(props).sort().forEach(function (name) {
      if (CONSUMED.indexOf(name) >= 0) return
      var value = props[name]
      el.setAttribute('data-prop-' + suffix(name), typeof value === 'string' ? value : JSON.stringify(value))
    })
    var style = node.style || {}
    Object.keys(style).sort().forEach(function (prop) {
      var value = style[prop]
      if (!CSS_PROPERTY.test(prop) || typeof value !== 'string' || UNSAFE_STYLE_VALUE.test(value)) return
      el.style.setProperty(prop, value.trim())
    })
  }

  function suffix (name) { return String(name).toLowerCase().replace(ATTR_NAME, '-').replace(/^-+|-+$/g, '') || 'x' }

  // -- patches (docs/patches.md): applied in order, nodes addressed by id ---------------------

  function applyPatches (patches) {
    patches.forEach(function (op) {
      var entry = op.id !== undefined ? state.nodes.get(op.id) : null
      switch (op.op) {
        case 'setProp': entry.ir.props[op.name] = op.value; refresh(entry); break
        case 'removeProp': delete entry.ir.props[op.name]; refresh(entry); break
        case 'setStyle':
          Object.keys(op.style).forEach(function (k) {
            if (op.style[k] === null) delete entry.ir.style[k]; else entry.ir.style[k] = op.style[k]
          })
          refresh(entry)
          break
        case 'setText': entry.ir.props.text = op.text; entry.dom.textContent = op.text; break
        case 'setEvents':
          if (op.events) entry.ir.events = op.events; else delete entry.ir.events
          refresh(entry)
          break
        case 'remove': {
          var parent = state.nodes.get(op.parent)
          parent.ir.children = parent.ir.children.filter(function (c) { return c.id !== op.id })
          entry.dom.remove()
          forget(entry.ir)
          break
        }
        case 'insert': {
          var into = state.nodes.get(op.parent)
          var dom = build(op.node, op.parent)
          into.ir.children.splice(op.index, 0, op.node)
          into.dom.insertBefore(dom, into.dom.childNodes[op.index] || null)
          break
        }
        case 'move': {
          var owner = state.nodes.get(op.parent)
          var kids = owner.ir.children
          var at = kids.findIndex(function (c) { return c.id === op.id })
          var moved = kids.splice(at, 1)[0]
          kids.splice(op.index, 0, moved)
          owner.dom.removeChild(entry.dom)
          owner.dom.insertBefore(entry.dom, owner.dom.childNodes[op.index] || null)
          break
        }
        case 'replaceRoot':
          state.card.document.root = op.node
          render(state.card.document)
          break
      }
    })
  }

  function refresh (entry) { if (entry.ir.type !== '#text') setAttributes(entry.dom, entry.ir) }

  function forget (node) {
    state.nodes.delete(node.id)
    ;(node.children || []).forEach(forget)
  }

  // -- taps -----------------------------------------------------------------------------------

  function bound (el) {
    for (var at = el; at && at !== root; at = at.parentElement) {
      if (at.hasAttribute('data-bind-tap') || at.hasAttribute('data-catch-tap')) return true
    }
    return false
  }

  root.addEventListener('click', function (e) {
    var target = e.target instanceof Element ? e.target.closest('[data-uid]') : null
    if (!target || !state.card || state.card.expired || !bound(target)) return
    var uid = target.getAttribute('data-uid')
    enqueue(function () { return sendEvent(uid, 'tap', null) })
  })

  function enqueue (job) {
    state.queue = state.queue.then(job).catch(function (err) { setStatus(String(err && err.message || err)) })
    return state.queue
  }

  function sendEvent (nodeId, event, detail) {
    var card = state.card
    var args = { cardId: card.cardId, nodeId: nodeId, event: event }
    if (detail) args.detail = detail
    return request('tools/call', { name: card.eventTool, arguments: args }).then(function (result) {
      if (!result || result.isError) { setStatus(result ? textOf(result) : 'no result'); return }
      var out = result.structuredContent || {}
      applyPatches(out.patches || [])
      reportSize()
      return runActions(out.actions || [])
    })
  }

  function toolFor (apiName) { return (state.card && state.card.tools && state.card.tools[apiName]) || apiName }

  // The server caps a card event's actions (RuntimeConfig.card_max_actions); the view never runs
  // more than that many either, whatever a result says.
  var MAX_ACTIONS = 20

  function runActions (actions) {
    var chain = Promise.resolve()
    actions.slice(0, MAX_ACTIONS).forEach(function (action) {
      chain = chain.then(function () { return runAction(action) })
    })
    return chain
  }

  function runAction (action) {
    var card = state.card
    if (action.type === 'sendFollowUpMessage') {
      var texts = action.content.filter(function (b) { return b.type === 'text' })
      var calls = action.content.filter(function (b) { return b.type === 'api/call' })
      var message = request('ui/message', { role: 'user', content: texts.map(function (b) { return { type: 'text', text: b.text } }) })
      return message.then(function () {
        return calls.reduce(function (p, b) {
          return p.then(function () { return request('tools/call', { name: toolFor(b.data.name), arguments: b.data.arguments || {} }) })
        }, Promise.resolve())
      })
    }
    if (action.type === 'api/call') {
      return request('tools/call', { name: toolFor(action.name), arguments: action.arguments || {} }).then(function (result) {
        // reapplyApiCall re-runs this card's API: a new result for the same component replaces the card.
        var next = result && result._meta && result._meta['skillc/card']
        if (next && next.componentPath === card.componentPath) showResult(result)
      })
    }
    if ((action.type === 'expirePreviousCards' || action.type === 'expireAllCards') && card &&
        (action.expired || []).indexOf(card.cardId) >= 0) {
      card.expired = true
      showExpired(card.expiredText)
    }
    return Promise.resolve()
  }

  function showExpired (text) {
    var veil = document.createElement('div')
    veil.className = 'skillc-expired'
    veil.textContent = text || '服务已过期'
    root.appendChild(veil)
  }

  // hover-class: props.hoverStyle applies while the element is pressed.
  var pressed = null
  root.addEventListener('pointerdown', function (e) {
    var el = e.target instanceof Element ? e.target.closest('[data-uid]') : null
    for (; el && el !== root; el = el.parentElement) {
      var entry = state.nodes.get(el.getAttribute('data-uid'))
      var hover = entry && entry.ir.props && entry.ir.props.hoverStyle
      if (hover) {
        pressed = { el: el, previous: el.getAttribute('style') }
        Object.keys(hover).forEach(function (k) { el.style.setProperty(k, hover[k]) })
        return
      }
    }
  })
  function release () {
    if (!pressed) return
    if (pressed.previous === null) pressed.el.removeAttribute('style'); else pressed.el.setAttribute('style', pressed.previous)
    pressed = null
  }
  ;['pointerup', 'pointercancel', 'pointerleave'].forEach(function (n) { root.addEventListener(n, release) })

  // -- the CardSpec fallback (Adaptive Card subset) ---------------------------------------------

  function renderFallback (card) {
    clear()
    var box = document.createElement('div')
    box.className = 'skillc-fallback'
    ;(card.body || []).forEach(function (el) { box.appendChild(acElement(el)) })
    root.appendChild(box)
  }

  function acElement (el) {
    var node
    if (el.type === 'TextBlock') {
      node = document.createElement(el.size === 'Medium' || el.size === 'Large' ? 'h3' : 'p')
      node.textContent = el.text
    } else if (el.type === 'FactSet') {
      node = document.createElement('dl')
      el.facts.forEach(function (f) {
        var dt = document.createElement('dt'); dt.textContent = f.title; node.appendChild(dt)
        var dd = document.createElement('dd'); dd.textContent = f.value; node.appendChild(dd)
      })
    } else if (el.type === 'Image') {
      node = document.createElement('img')
      if (SAFE_URL.test(el.url)) node.src = el.url
      node.width = 48
    } else {
      node = document.createElement('div')
      var items = el.items || []
      ;(el.columns || []).forEach(function (c) { items = items.concat(c.items || []) })
      items.forEach(function (child) { node.appendChild(acElement(child)) })
    }
    return node
  }

  // -- size -------------------------------------------------------------------------------------

  var sizeQueued = false
  function reportSize () {
    if (sizeQueued || !state.ready) return  // nothing goes to the host before ui/notifications/initialized
    sizeQueued = true
    requestAnimationFrame(function () {
      sizeQueued = false
      var rect = document.documentElement.getBoundingClientRect()
      notify('ui/notifications/size-changed', { width: Math.ceil(rect.width), height: Math.ceil(document.documentElement.scrollHeight) })
    })
  }
  if (window.ResizeObserver) new ResizeObserver(reportSize).observe(document.body)

  // -- start ------------------------------------------------------------------------------------

  window.skillcView = { config: CONFIG, state: state, applyPatches: applyPatches, render: render }

  request('ui/initialize', {
    appInfo: { name: 'skillc-card:' + CONFIG.skill + '/' + CONFIG.componentPath, version: '1' },
    appCapabilities: {},
    protocolVersion: PROTOCOL
  }).then(function (result) {
    applyContext((result && result.hostContext) || {})
    notify('ui/notifications/initialized', {})
    state.ready = true
    reportSize()
  }, function (err) { setStatus('The host refused ui/initialize: ' + err.message) })
})()

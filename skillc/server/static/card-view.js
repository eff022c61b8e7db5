// skillc card view: an MCP Apps view (ext-apps 2026-01-26) that renders skill cards from Render IR.
//
// The host delivers the tool result; its _meta["skillc/card"] holds the Render IR document. The
// view is a small conversation: the first card, then the card of every follow-up the user starts
// by tapping (confirm an order, pay it), stacked below it as WeChat stacks them. Taps go to the
// server's app-only tool through the host (tools/call) and come back as Render IR patches.
//
// One path per api/call (docs/serve.md, "The card conversation"): a card's api/call is a
// tools/call through the host, exactly once, and the user's words go to the model with
// ui/update-model-context, which starts no model turn. A ui/message would start one, and the model
// could call the same tool again (a second payment). Only a follow-up without api/call blocks, or
// a host that cannot call tools, becomes a ui/message.
//
// Two bridges (docs/serve.md, "Hosts"): the MCP Apps one (JSON-RPC over postMessage: Claude, VS
// Code, ChatGPT's MCP Apps mode) and OpenAI's window.openai runtime, when the host injected it
// before this script ran. Either way the host's theme is known before anything is shown, and a
// card is shown only once it is in that theme, so a dark host never sees a light frame.
//
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
  var DRAWING_URL = new RegExp(CONFIG.dom.drawingUrl)
  var CLAMP_LINES = new RegExp(CONFIG.dom.clampLines)
  var ARIA_NAME = new RegExp(CONFIG.dom.ariaName)
  var VIEW_TOOL = 'skillc_card_view'
  // window.openai.callTool carries no _meta: these app-only tools take the card's session as an argument.
  var SESSION_ARG_TOOLS = { skillc_card_event: 1, skillc_card_view: 1, skillc_card_updates: 1, skillc_card_visibility: 1 }
  var OPENAI = window.openai && typeof window.openai === 'object' ? window.openai : null
  // A host that injects window.openai may speak MCP Apps too (ChatGPT does): MCP Apps is used when
  // the host answers ui/initialize within this long, window.openai otherwise.
  var OPENAI_INIT_WAIT_MS = 1000
  var viaOpenAI = false // the bridge in use is window.openai (decided once, at start)
  var MODEL_EVENTS = 20 // what the user did on the cards, the last ones, in the model's summary
  var SUMMARY_TEXT = 300 // characters of each card's text in the model's summary
  var CONSENT_TOOL = 'skillc_consent'
  var CONSENT_META = 'skillc/consent'
  // The server caps a card event's actions (RuntimeConfig.card_max_actions); the view never runs
  // more than that many either, whatever a result says.
  var MAX_ACTIONS = 20
  var MAX_SLOTS = 20 // older cards leave the view; they are expired in any real conversation
  var stack = document.getElementById('card')
  var statusEl = document.getElementById('status')

  var state = {
    slots: [], // {id, el, card, nodes, kind: card|fallback|text|error}
    queue: Promise.resolve(),
    nextId: 1,
    nextSlot: 1,
    pollMs: 1000, // a dynamic card's updates are asked for this often (the server says: pollMs)
    pending: new Map(),
    hostContext: {},
    hostCapabilities: {},
    told: [], // what the user did on the cards, oldest first: the model's summary repeats them all
    shownMeta: null, // window.openai: the toolResponseMetadata already shown
    ready: false
  }

  // -- JSON-RPC over postMessage ------------------------------------------------------------

  function post (message) { window.parent.postMessage(Object.assign({ jsonrpc: '2.0' }, message), '*') }

  function request (method, params) {
    if (viaOpenAI) return openaiRequest(method, params)
    var id = state.nextId++
    return new Promise(function (resolve, reject) {
      state.pending.set(id, { resolve: resolve, reject: reject })
      post({ id: id, method: method, params: params })
    })
  }

  function notify (method, params) {
    if (viaOpenAI) { openaiNotify(method, params || {}); return }
    post({ method: method, params: params || {} })
  }

  // -- window.openai (OpenAI's Apps SDK runtime): the same requests, in its words ------------------

  function openaiRequest (method, params) {
    var o = OPENAI
    var call = function (fn, arg) {
      if (typeof o[fn] !== 'function') return Promise.reject(new Error('This host has no window.openai.' + fn))
      try { return Promise.resolve(o[fn](arg)) } catch (err) { return Promise.reject(err) }
    }
    switch (method) {
      case 'tools/call': {
        var args = Object.assign({}, params.arguments || {})
        var session = params._meta && params._meta['skillc/session']
        if (session && SESSION_ARG_TOOLS[params.name]) args.session = session
        if (typeof o.callTool !== 'function') return Promise.reject(new Error('This host has no window.openai.callTool'))
        return Promise.resolve(o.callTool(params.name, args))
      }
      case 'ui/update-model-context': {
        var text = (params.content || []).map(function (b) { return b.text }).join('\n')
        // The widget state is what the model sees of a widget: one summary, replaced as a whole.
        return call('setWidgetState', { modelContent: text, privateContent: params.structuredContent || null }).then(function () { return {} })
      }
      case 'ui/message':
        return call('sendFollowUpMessage', { prompt: (params.content || []).map(function (b) { return b.text }).join('\n') }).then(function () { return {} })
      case 'ui/open-link':
        return call('openExternal', { href: params.url }).then(function () { return {} })
      default:
        return Promise.reject(new Error('window.openai has no ' + method))
    }
  }

  function openaiNotify (method, params) {
    if (method === 'ui/notifications/size-changed' && typeof OPENAI.notifyIntrinsicHeight === 'function') OPENAI.notifyIntrinsicHeight(params.height)
  }

  // The host context an MCP Apps host would send, from window.openai's globals.
  function openaiContext (globals) {
    var ctx = {}
    if (globals.theme === 'dark' || globals.theme === 'light') ctx.theme = globals.theme
    if (typeof globals.displayMode === 'string') ctx.displayMode = globals.displayMode
    if (typeof globals.locale === 'string') ctx.locale = globals.locale
    if (typeof globals.maxHeight === 'number') ctx.containerDimensions = { maxHeight: globals.maxHeight }
    return ctx
  }

  function openaiCapabilities () {
    var o = OPENAI
    var caps = {}
    if (typeof o.callTool === 'function') caps.serverTools = {}
    if (typeof o.setWidgetState === 'function') caps.updateModelContext = { text: {} }
    if (typeof o.sendFollowUpMessage === 'function') caps.message = { text: {} }
    if (typeof o.openExternal === 'function') caps.openLinks = {}
    return caps
  }

  // toolOutput is the result's structuredContent, toolResponseMetadata its _meta (the card).
  function openaiResult () {
    var meta = OPENAI.toolResponseMetadata
    if (!meta || meta === state.shownMeta) return
    state.shownMeta = meta
    var output = OPENAI.toolOutput
    enqueue(function () { return showResult({ content: [], structuredContent: output || undefined, _meta: meta }, null) })
  }

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
    if (msg.method === 'ui/resource-teardown') { tellVisibility(false); post({ id: msg.id, result: {} }); return }
    if (msg.method === 'ping') { post({ id: msg.id, result: {} }); return }
    post({ id: msg.id, error: { code: -32601, message: 'Method not found: ' + msg.method } })
  }

  function onNotification (method, params) {
    if (method === 'ui/notifications/tool-result') { enqueue(function () { return showResult(params, null) }); return }
    if (method === 'ui/notifications/tool-cancelled') { setStatus('Cancelled' + (params.reason ? ': ' + params.reason : '')); return }
    if (method === 'ui/notifications/host-context-changed') { applyContext(params); enqueue(restyleAll); return }
  }

  // Problems of the view itself reach the host's log (MCP logging), not only the card area.
  function hostLog (level, message) {
    if (!state.ready || !state.hostCapabilities.logging) return
    notify('notifications/message', { level: level, logger: 'skillc-card-view', data: message })
  }

  function setStatus (text) { statusEl.textContent = text || ''; reportSize() }

  // -- host context: theme, style variables, fonts, container -------------------------------

  function applyContext (ctx) {
    Object.keys(ctx || {}).forEach(function (k) { state.hostContext[k] = ctx[k] })
    var html = document.documentElement
    var theme = state.hostContext.theme
    if (theme === 'dark' || theme === 'light') { html.setAttribute('data-theme', theme); html.style.colorScheme = theme }
    var styles = state.hostContext.styles || {}
    var vars = styles.variables
    if (vars) Object.keys(vars).forEach(function (k) { if (vars[k]) html.style.setProperty(k, vars[k]) })
    var fonts = styles.css && styles.css.fonts
    if (typeof fonts === 'string' && fonts && !document.getElementById('__mcp-host-fonts')) {
      var style = document.createElement('style')
      style.id = '__mcp-host-fonts'
      style.textContent = fonts
      document.head.appendChild(style)
    }
    var dims = state.hostContext.containerDimensions || {}
    html.classList.toggle('skillc-fixed-height', typeof dims.height === 'number')
    if (typeof dims.height === 'number') html.style.setProperty('--skillc-container-height', dims.height + 'px')
    reportSize()
  }

  // What the card should look like in this host: its colour scheme and, when the container is
  // narrower (or fixed at another width), the container's width. WeChat lays a card out at the
  // screen width, so the card is rendered again at that width rather than scaled.
  function wantedLook (card) {
    var vp = (card.document && card.document.viewport) || {}
    var want = {}
    var theme = state.hostContext.theme
    if ((theme === 'dark' || theme === 'light') && vp.color_scheme !== theme) want.colorScheme = theme
    var dims = state.hostContext.containerDimensions || {}
    var width = typeof dims.width === 'number' ? dims.width : (typeof dims.maxWidth === 'number' && dims.maxWidth < vp.width ? dims.maxWidth : null)
    if (width !== null && Math.round(width) !== vp.width && width >= 120) want.width = Math.round(width)
    return Object.keys(want).length ? want : null
  }

  function restyle (slot) {
    // Expired cards too: the veil stays, the card under it follows the host's theme.
    var want = slot.card ? wantedLook(slot.card) : null
    if (!want || !canCallTools()) return Promise.resolve()
    var args = Object.assign({ cardId: slot.card.cardId }, want)
    return request('tools/call', inSession(slot.card, VIEW_TOOL, args)).then(function (result) {
      if (!result || result.isError) { hostLog('warning', 'restyle failed: ' + (result ? textOf(result) : 'no result')); return }
      var out = result.structuredContent || {}
      return inOrder(slot, result, out.patches || []).then(function () {
        var vp = slot.card.document.viewport
        if (want.colorScheme) vp.color_scheme = want.colorScheme
        if (want.width) vp.width = want.width
      })
    })
  }

  function restyleAll () {
    return state.slots.reduce(function (p, slot) { return p.then(function () { return restyle(slot) }) }, Promise.resolve())
  }

  function canCallTools () { return !!state.hostCapabilities.serverTools }

  // -- results: each one is a slot in the stack -----------------------------------------------

  function textOf (result) {
    return (result.content || []).filter(function (b) { return b.type === 'text' }).map(function (b) { return b.text }).join('\n')
  }

  // ``after``: the slot whose tap led to this result (a reapplied call replaces it). The first
  // result, and a follow-up for another component, become the next card. ``into``: the slot the
  // result takes the place of (the consent control whose answer it is).
  function showResult (result, after, into) {
    result = result || {}
    var meta = result._meta || {}
    var card = meta['skillc/card']
    if (card && !card.document && card.documentRef) {
      return fetchDocument(card.documentRef).then(function (doc) {
        card.document = doc
        delete card.documentRef
        return showResult(result, after, into)
      })
    }
    var slot
    var consent = meta[CONSENT_META]
    if (!result.isError && consent && typeof consent.token === 'string') {
      slot = place('consent', into)
      drawConsent(slot, consent, after)
      slot.session = meta['skillc/session']  // the answer goes back in the session that asked
    } else if (result.isError) {
      slot = place('error', into)
      slot.el.textContent = textOf(result) || 'The tool failed.'
      slot.el.setAttribute('role', 'alert')
    } else if (card && card.document) {
      var last = state.slots[state.slots.length - 1]
      var replaces = after && after.card && after.card.componentPath === card.componentPath && (after.card.expired || after.reapplied)
      slot = into ? resetSlot(into, 'card') : replaces ? resetSlot(after, 'card') : (last && last.kind === 'card' && last.card && last.card.cardId === card.cardId ? resetSlot(last, 'card') : newSlot('card'))
      slot.card = card
      renderInto(slot, card.document)
      // Not shown until it is in the host's look: the first frame of a card is never the wrong theme.
      if (wantedLook(card) && canCallTools()) slot.el.hidden = true
      slot.el.setAttribute('data-card-id', card.cardId)
      slot.el.setAttribute('data-component', card.componentPath)
      var max = card.dimensions && card.dimensions.maxHeight
      if (typeof max === 'number' && max > 0) slot.el.style.maxHeight = max + 'px' // WeChat clips, never grows
      var min = card.dimensions && card.dimensions.minHeight
      if (typeof min === 'number' && min > 0) slot.el.style.minHeight = min + 'px' // and never goes below 4:1
      if (card.expired) showExpired(slot, card.expiredText)
      follow(slot, card)
    } else if (meta['skillc/fallback']) {
      slot = place('fallback', into)
      renderFallback(slot, meta['skillc/fallback'].card)
    } else {
      slot = place('text', into)
      slot.el.textContent = textOf(result)
      if (consent && consent.declined) slot.el.setAttribute('data-consent', 'declined')
    }
    setStatus('')
    expireFrom(meta['skillc/actions'] || [])
    reportSize()
    if (!slot.card) return Promise.resolve()
    var reveal = function () { if (slot.el.hidden) { slot.el.hidden = false; reportSize() } }
    // A failed restyle still shows the card (in the look it has) rather than nothing.
    return restyle(slot).then(reveal, function (err) { reveal(); throw err })
  }

  // A large card's Render IR comes by reference (an artefact): read through the host, decoded as UTF-8 JSON.
  function fetchDocument (ref) {
    if (!state.hostCapabilities.serverResources) return Promise.reject(new Error('This host cannot read resources, so this large card cannot be shown.'))
    return request('resources/read', { uri: ref.uri }).then(function (read) {
      var blob = read && read.contents && read.contents[0] && read.contents[0].blob
      if (typeof blob !== 'string') throw new Error('The card ' + ref.uri + ' could not be read.')
      var bytes = Uint8Array.from(atob(blob), function (c) { return c.charCodeAt(0) })
      return JSON.parse(new TextDecoder('utf-8').decode(bytes))
    })
  }

  function place (kind, into) { return into ? resetSlot(into, kind) : newSlot(kind) }

  function newSlot (kind) {
    var el = document.createElement('div')
    el.className = 'skillc-slot'
    el.setAttribute('data-kind', kind)
    el.setAttribute('data-slot', String(state.nextSlot))
    var slot = { id: state.nextSlot++, el: el, card: null, nodes: new Map(), kind: kind }
    stack.appendChild(el)
    state.slots.push(slot)
    while (state.slots.length > MAX_SLOTS) {
      var gone = state.slots.shift()
      // A card that leaves the view is no longer shown: its timers pause.
      if (dynamic(gone) && !gone.card.expired && canCallTools()) {
        request('tools/call', inSession(gone.card, gone.card.visibilityTool, { cardId: gone.card.cardId, visible: false })).catch(function () {})
      }
      unfollow(gone)
      gone.el.remove()
    }
    return slot
  }

  function resetSlot (slot, kind) {
    unfollow(slot)
    slot.el.textContent = ''
    slot.el.setAttribute('data-kind', kind)
    slot.el.removeAttribute('role')
    if (slot.kind === 'consent') ['aria-label', 'aria-busy', 'style'].forEach(function (a) { slot.el.removeAttribute(a) })
    slot.el.removeAttribute('data-consent')
    slot.consent = null
    slot.nodes.clear()
    slot.kind = kind
    slot.reapplied = false
    return slot
  }

  function slotOf (el) {
    for (var at = el; at && at !== stack; at = at.parentElement) {
      if (at.classList && at.classList.contains('skillc-slot')) {
        var id = Number(at.getAttribute('data-slot'))
        return state.slots.find(function (s) { return s.id === id }) || null
      }
    }
    return null
  }

  function last () { return state.slots[state.slots.length - 1] || null }

  // -- Render IR -> DOM ---------------------------------------------------------------------

  function renderInto (slot, doc) {
    slot.el.textContent = ''
    slot.nodes.clear()
    slot.el.appendChild(build(slot, doc.root, null))
    label(slot.el)
  }

  // -- accessibility (skillc/backends/html_a11y.py gives the static HTML the same) -------------
  // A tappable node is a button for assistive tech and agents: role, tabindex, a name from its
  // aria-label or its text; an image is named by alt / aria-label, else by the text of the
  // tappable item (or parent) it sits in; aria-hidden or a presentation role keeps alt="".

  // Its text runs joined by one space each (as html_a11y joins them).
  function spoken (el) {
    var walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT)
    var parts = []
    for (var t = walker.nextNode(); t; t = walker.nextNode()) {
      var text = (t.nodeValue || '').replace(/\s+/g, ' ').trim()
      if (text) parts.push(text)
    }
    return parts.join(' ')
  }

  function label (root) {
    root.querySelectorAll('[data-bind-tap],[data-catch-tap]').forEach(function (el) {
      if (el.tagName === 'BUTTON') return
      if (!el.hasAttribute('role')) el.setAttribute('role', 'button')
      el.setAttribute('tabindex', '0')
      if (!el.getAttribute('aria-label')) {
        var name = spoken(el)
        if (name) el.setAttribute('aria-label', name); else el.removeAttribute('aria-label')
      }
    })
    root.querySelectorAll('img[data-uid]').forEach(function (img) {
      var role = img.getAttribute('role')
      if (img.getAttribute('aria-hidden') === 'true' || role === 'presentation' || role === 'none') { img.setAttribute('alt', ''); return }
      var given = img.getAttribute('data-prop-alt') || img.getAttribute('aria-label')
      if (given) { img.setAttribute('alt', given); return }
      var scope = img.closest('[data-bind-tap],[data-catch-tap]') || img.parentElement
      for (var up = 0; scope && up < 4 && !spoken(scope); up++) scope = scope.parentElement
      img.setAttribute('alt', (scope && nearby(img, scope)) || 'image')
    })
  }

  // The first text run after the image in its scope, else the last one before it.
  function nearby (img, scope) {
    var walker = document.createTreeWalker(scope, NodeFilter.SHOW_TEXT)
    var before = null
    for (var t = walker.nextNode(); t; t = walker.nextNode()) {
      var text = (t.nodeValue || '').replace(/\s+/g, ' ').trim()
      if (!text) continue
      if (img.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING) return text
      before = text
    }
    return before
  }

  function build (slot, node, parent) {
    var entry = { ir: node, parent: parent, dom: null }
    slot.nodes.set(node.id, entry)
    if (node.type === '#text') {
      entry.dom = document.createTextNode(node.props && typeof node.props.text === 'string' ? node.props.text : '')
      return entry.dom
    }
    var el = document.createElement(TAGS[node.type] || 'div')
    entry.dom = el
    setAttributes(el, node)
    if (el.tagName !== 'IMG') {
      (node.children || []).forEach(function (child) { el.appendChild(build(slot, child, node.id)) })
      appendPreview(el, node)
    }
    return el
  }

  // map and canvas: the static preview after the node's children, as the HTML backend writes it
  // (skillc/backends/html_previews.py): elements without data-uid, so child indexes still hold.
  function coordinate (v) {
    var t = Number(v).toFixed(6).replace(/0+$/, '').replace(/\.$/, '')
    return t === '-0' || t === '' ? '0' : t
  }

  function previewPart (tag, kind, text) {
    var part = document.createElement(tag)
    part.setAttribute('data-preview', kind)
    if (text !== null) part.textContent = text
    return part
  }

  function appendPreview (el, node) {
    var props = node.props || {}
    if (node.type === 'map') {
      var markers = Array.isArray(props.markers) ? props.markers : []
      var lat = props.latitude
      var lng = props.longitude
      var centred = typeof lat === 'number' && typeof lng === 'number' && Math.abs(lat) <= 90 && Math.abs(lng) <= 180
      var centre = centred ? coordinate(lat) + ', ' + coordinate(lng) : '(no centre)'
      el.appendChild(previewPart('div', 'caption', 'Map ' + centre + ' · ' + markers.length + ' marker' + (markers.length === 1 ? '' : 's')))
      if (!markers.length) return
      var list = previewPart('ol', 'markers', null)
      markers.forEach(function (m) {
        var item = document.createElement('li')
        var where = coordinate(m.latitude) + ', ' + coordinate(m.longitude)
        item.textContent = m.title ? m.title + ' · ' + where : where
        list.appendChild(item)
      })
      el.appendChild(list)
    } else if (node.type === 'canvas') {
      var drawing = props.drawing
      if (drawing && typeof drawing.src === 'string' && DRAWING_URL.test(drawing.src)) {
        var img = previewPart('img', 'drawing', null)
        img.setAttribute('src', drawing.src)
        img.setAttribute('alt', '')
        el.appendChild(img)
      } else {
        el.appendChild(previewPart('div', 'caption', CONFIG.dom.canvasCaption))
      }
    }
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
      var text = typeof value === 'string' ? value : JSON.stringify(value)
      // aria-* from WXML are real attributes (aria-role: role), as the HTML backend writes them.
      if (name === 'aria-role') { if (value !== null && value !== undefined) el.setAttribute('role', text); return }
      if (ARIA_NAME.test(name)) { if (value !== null && value !== undefined) el.setAttribute(name, text); return }
      el.setAttribute('data-prop-' + suffix(name), text)
    })
    var style = clampStyle(node.style || {})
    Object.keys(style).sort().forEach(function (prop) {
      var value = style[prop]
      if (!CSS_PROPERTY.test(prop) || typeof value !== 'string' || UNSAFE_STYLE_VALUE.test(value)) return
      el.style.setProperty(prop, value.trim())
    })
  }

  // browser_style of the HTML backend: a browser clamps with the -webkit-box trio, not -wx-line-clamp.
  function clampStyle (style) {
    var lines = typeof style['-wx-line-clamp'] === 'string' ? style['-wx-line-clamp'].trim() : ''
    if (!CLAMP_LINES.test(lines)) return style
    var out = {}
    Object.keys(style).forEach(function (k) { out[k] = style[k] })
    if (String(out.display || '').trim() !== 'none') out.display = '-webkit-box'
    out['-webkit-box-orient'] = 'vertical'
    out['-webkit-line-clamp'] = lines
    out.overflow = 'hidden'
    return out
  }

  function suffix (name) { return String(name).toLowerCase().replace(ATTR_NAME, '-').replace(/^-+|-+$/g, '') || 'x' }

  // -- patches (docs/patches.md): applied in order, nodes addressed by id ---------------------

  function applyPatches (slot, patches) {
    patches.forEach(function (op) {
      var entry = op.id !== undefined ? slot.nodes.get(op.id) : null
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
          var parent = slot.nodes.get(op.parent)
          parent.ir.children = parent.ir.children.filter(function (c) { return c.id !== op.id })
          entry.dom.remove()
          forget(slot, entry.ir)
          break
        }
        case 'insert': {
          var into = slot.nodes.get(op.parent)
          var dom = build(slot, op.node, op.parent)
          into.ir.children.splice(op.index, 0, op.node)
          into.dom.insertBefore(dom, into.dom.childNodes[op.index] || null)
          break
        }
        case 'move': {
          var owner = slot.nodes.get(op.parent)
          var kids = owner.ir.children
          var at = kids.findIndex(function (c) { return c.id === op.id })
          var moved = kids.splice(at, 1)[0]
          kids.splice(op.index, 0, moved)
          owner.dom.removeChild(entry.dom)
          owner.dom.insertBefore(entry.dom, owner.dom.childNodes[op.index] || null)
          break
        }
        case 'replaceRoot': {
          var veil = slot.el.querySelector('.skillc-expired')
          slot.card.document.root = op.node
          renderInto(slot, slot.card.document)
          if (veil) slot.el.appendChild(veil)
          break
        }
      }
    })
    label(slot.el)
    reportSize()
  }

  function refresh (entry) {
    if (entry.ir.type === '#text') return
    setAttributes(entry.dom, entry.ir)
    if (entry.ir.type !== 'map' && entry.ir.type !== 'canvas') return
    Array.prototype.slice.call(entry.dom.children).forEach(function (child) {
      if (child.hasAttribute('data-preview')) child.remove()
    })
    appendPreview(entry.dom, entry.ir)
  }

  function forget (slot, node) {
    slot.nodes.delete(node.id)
    ;(node.children || []).forEach(function (child) { forget(slot, child) })
  }

  // -- taps -----------------------------------------------------------------------------------

  function bound (el) {
    for (var at = el; at && !(at.classList && at.classList.contains('skillc-slot')); at = at.parentElement) {
      if (at.hasAttribute('data-bind-tap') || at.hasAttribute('data-catch-tap')) return true
    }
    return false
  }

  // Enter or Space on a focused tappable node is a tap, as for a native button.
  stack.addEventListener('keydown', function (e) {
    if (e.key !== 'Enter' && e.key !== ' ') return
    var target = e.target instanceof Element ? e.target : null
    if (!target || target.getAttribute('role') !== 'button' || !bound(target) || target.tagName === 'BUTTON') return
    e.preventDefault()
    target.click()
  })

  stack.addEventListener('click', function (e) {
    var target = e.target instanceof Element ? e.target.closest('[data-uid]') : null
    var slot = target ? slotOf(target) : null
    if (!slot || !slot.card || slot.card.expired || !bound(target)) return
    var uid = target.getAttribute('data-uid')
    enqueue(function () { return sendEvent(slot, uid, 'tap', null) })
  })

  function enqueue (job) {
    state.queue = state.queue.then(job).catch(function (err) {
      var message = String((err && err.message) || err)
      showError(message)
      hostLog('error', message)
    })
    return state.queue
  }

  function showError (message) {
    var slot = newSlot('error')
    slot.el.textContent = message
    slot.el.setAttribute('role', 'alert')
    reportSize()
  }

  // Every call the card makes runs in the card's session (the server refuses a card's tools from
  // any other): the session capability rides in the request's _meta, as docs/serve.md says.
  function inSession (card, name, args) {
    var params = { name: name, arguments: args }
    if (card && typeof card.sessionId === 'string') params._meta = { 'skillc/session': card.sessionId }
    return params
  }

  function sendEvent (slot, nodeId, event, detail) {
    if (!canCallTools()) { showError('This host cannot call tools, so the card cannot react to taps.'); return }
    var card = slot.card
    var args = { cardId: card.cardId, nodeId: nodeId, event: event }
    if (detail) args.detail = detail
    return request('tools/call', inSession(card, card.eventTool, args)).then(function (result) {
      if (!result || result.isError) { showError(result ? textOf(result) : 'The host gave no result.'); return }
      var out = result.structuredContent || {}
      return inOrder(slot, result, out.patches || []).then(function () { return runActions(slot, out.actions || []) })
    })
  }

  // -- dynamic cards (scope.dynamic): timers change the card with no tap ------------------------
  // The card's changes form one numbered stream on the server (taps, restyles and timers alike).
  // The view holds a cursor into it: a tap's patches apply directly when they follow the cursor,
  // otherwise (a timer changed the card meanwhile) the view reads the stream instead. While the
  // card has live timers and the document is visible, the view asks for what changed every
  // pollMs through the app-only tool skillc_card_updates; hidden, it stops asking and tells the
  // server (skillc_card_visibility), which pauses the card's timers until it is shown again.

  function dynamic (slot) { return !!(slot && slot.card && slot.card.updatesTool && slot.cursor !== undefined) }

  function follow (slot, card) {
    if (!card.updatesTool) return
    slot.cursor = card.cursor
    slot.timers = card.pendingTimers || 0
    schedulePoll(slot)
  }

  function unfollow (slot) {
    if (slot.poll) clearTimeout(slot.poll)
    slot.poll = null
    slot.cursor = undefined
  }

  function schedulePoll (slot) {
    if (slot.poll) { clearTimeout(slot.poll); slot.poll = null }
    if (!dynamic(slot) || slot.card.expired || document.hidden || !(slot.timers > 0) || !canCallTools()) return
    slot.poll = setTimeout(function () {
      slot.poll = null
      enqueue(function () { return readUpdates(slot, slot.card.updatesTool, {}) })
    }, state.pollMs)
  }

  function readUpdates (slot, tool, extra) {
    if (!dynamic(slot)) return Promise.resolve()
    var args = Object.assign({ cardId: slot.card.cardId, since: slot.cursor }, extra)
    return request('tools/call', inSession(slot.card, tool, args)).then(function (result) {
      if (!result || result.isError) { hostLog('warning', 'card updates failed: ' + (result ? textOf(result) : 'no result')); return }
      return applyUpdates(slot, result.structuredContent || {})
    }).then(function () { schedulePoll(slot) })
  }

  function applyUpdates (slot, out) {
    if (!dynamic(slot)) return Promise.resolve()
    var chain = Promise.resolve()
    ;(out.updates || []).forEach(function (u) {
      applyPatches(slot, u.patches || [])
      // A tap's actions came with its answer; a timer's arrive only here.
      if (u.kind === 'timer' && u.actions && u.actions.length) chain = chain.then(function () { return runActions(slot, u.actions) })
    })
    if (typeof out.cursor === 'string') slot.cursor = out.cursor
    if (typeof out.timers === 'number') slot.timers = out.timers
    if (typeof out.pollMs === 'number' && out.pollMs >= 250) state.pollMs = out.pollMs
    if (out.expired && !slot.card.expired) {
      slot.card.expired = true
      showExpired(slot, slot.card.expiredText)
    }
    reportSize()
    return chain
  }

  // A tap's or restyle's patches, in stream order (static cards: as they come).
  function inOrder (slot, result, patches) {
    var updates = (result._meta || {})['skillc/updates']
    if (!dynamic(slot) || !updates) { applyPatches(slot, patches); return Promise.resolve() }
    if (typeof updates.timers === 'number') slot.timers = updates.timers
    if (updates.after === slot.cursor) {
      applyPatches(slot, patches)
      slot.cursor = updates.cursor
      schedulePoll(slot)
      return Promise.resolve()
    }
    return readUpdates(slot, slot.card.updatesTool, {})
  }

  function tellVisibility (visible) {
    state.slots.forEach(function (slot) {
      if (!dynamic(slot) || slot.card.expired || !canCallTools()) return
      if (!visible && slot.poll) { clearTimeout(slot.poll); slot.poll = null }
      enqueue(function () { return readUpdates(slot, slot.card.visibilityTool, { visible: visible }) })
    })
  }

  document.addEventListener('visibilitychange', function () { tellVisibility(!document.hidden) })

  function toolFor (card, apiName) { return (card && card.tools && card.tools[apiName]) || apiName }

  function runActions (slot, actions) {
    var chain = Promise.resolve()
    actions.slice(0, MAX_ACTIONS).forEach(function (action) {
      chain = chain.then(function () { return runAction(slot, action) })
    })
    return chain
  }

  function runAction (slot, action) {
    var card = slot.card
    switch (action.type) {
      case 'sendFollowUpMessage': return followUp(slot, action)
      case 'api/call':
        // reapplyApiCall: the card's API again; a new card of the same component replaces this one.
        slot.reapplied = true
        return callTool(slot, toolFor(card, action.name), action.arguments || {})
      case 'updateModelContext':
        return tellSummary(textBlocks(action.content).map(function (b) { return b.text }).join('\n'))
      case 'openDetailPage':
        if (state.hostCapabilities.openLinks) return request('ui/open-link', { url: action.url })
        hostLog('info', 'openDetailPage ' + action.url + ': the host cannot open links')
        return Promise.resolve()
      case 'previewMedia': {
        // The host shows media by opening it; the one shown first is sources[current].
        var media = (action.sources || [])[action.current || 0]
        var url = media && typeof media.url === 'string' ? media.url : ''
        if (state.hostCapabilities.openLinks && /^https?:\/\//.test(url)) return request('ui/open-link', { url: url })
        hostLog('info', 'previewMedia ' + url + ': the host cannot open links')
        return Promise.resolve()
      }
      case 'makePhoneCall': {
        var tel = 'tel:' + String(action.phoneNumber || '').replace(/[^0-9+*#,;]/g, '')
        if (state.hostCapabilities.openLinks) return request('ui/open-link', { url: tel })
        hostLog('info', 'makePhoneCall ' + action.phoneNumber + ': the host cannot open links')
        return Promise.resolve()
      }
      case 'expirePreviousCards':
      case 'expireAllCards':
        expireFrom([action])
        return Promise.resolve()
      default:
        return Promise.resolve()
    }
  }

  function textBlocks (content) {
    return (content || []).filter(function (b) { return b && b.type === 'text' }).map(function (b) { return { type: 'text', text: String(b.text) } })
  }

  function followUp (slot, action) {
    var texts = textBlocks(action.content)
    var calls = (action.content || []).filter(function (b) { return b && b.type === 'api/call' && b.data })
    var words = texts.map(function (b) { return b.text }).join('\n')
    if (!calls.length || !canCallTools()) {
      // Only words, or a host that cannot call tools: the user said something, the model answers.
      var said = texts.slice()
      if (calls.length) {
        said.push({ type: 'text', text: calls.map(function (b) { return '(the card asks to call ' + toolFor(slot.card, b.data.name) + ' with ' + JSON.stringify(b.data.arguments || {}) + ')' }).join('\n') })
      }
      if (!state.hostCapabilities.message) { showError('This host takes no messages from cards.'); return Promise.resolve() }
      return request('ui/message', { role: 'user', content: said })
    }
    return calls.reduce(function (p, b) {
      return p.then(function () {
        var tool = toolFor(slot.card, b.data.name)
        return callTool(slot, tool, b.data.arguments || {}).then(function (result) {
          // The user is asked in the card: the model hears of the call when the user answers.
          if (asking(result, words)) return
          return tellModel(words, tool, b.data.arguments || {}, result)
        })
      })
    }, Promise.resolve())
  }

  // The model learns what the user did on the card and what came of it, without a new turn.
  function tellModel (words, tool, args, result) {
    if (!state.hostCapabilities.updateModelContext) return Promise.resolve()
    var outcome = result ? (result.isError ? 'failed: ' : 'returned: ') + textOf(result) : 'gave no result'
    var text = 'On the ' + CONFIG.skill + ' card the user said: ' + JSON.stringify(words) +
      '. The card called ' + tool + ' ' + JSON.stringify(args) + ', which ' + outcome
    return tellSummary(text)
  }

  // ui/update-model-context replaces what the view told the model before (the host keeps only the
  // last one), so each update is one summary of the whole view: everything the user did on the
  // cards, oldest first, then every card shown now. After three cards the model sees all three.
  function tellSummary (line) {
    if (!state.hostCapabilities.updateModelContext) return Promise.resolve()
    if (line) state.told.push(line)
    if (state.told.length > MODEL_EVENTS) state.told.splice(0, state.told.length - MODEL_EVENTS)
    var cards = state.slots.filter(function (slot) { return slot.kind !== 'consent' }).map(function (slot, i) {
      var card = slot.card
      var what = card ? (card.componentPath || 'card').replace(/^components\//, '').replace(/\/index$/, '') + ' card ' + card.cardId : slot.kind
      var text = spoken(slot.el).slice(0, SUMMARY_TEXT)
      return { n: i + 1, kind: slot.kind, what: what, cardId: card ? card.cardId : null, expired: !!(card && card.expired), text: text }
    })
    var lines = state.told.slice()
    lines.push('The ' + CONFIG.skill + ' view shows ' + cards.length + ' card' + (cards.length === 1 ? '' : 's') + ', oldest first:')
    cards.forEach(function (c) { lines.push(c.n + '. ' + c.what + (c.expired ? ' (expired)' : '') + ': ' + c.text) })
    var params = { content: [{ type: 'text', text: lines.join('\n') }], structuredContent: { events: state.told.slice(), cards: cards } }
    return request('ui/update-model-context', params).catch(function () {})
  }

  function callTool (slot, tool, args) {
    return request('tools/call', inSession(slot.card, tool, args)).then(function (result) {
      return showResult(result, slot).then(function () { return result })
    })
  }

  function expireFrom (actions) {
    actions.forEach(function (action) {
      if (action.type !== 'expirePreviousCards' && action.type !== 'expireAllCards') return
      ;(action.expired || []).forEach(function (cardId) {
        state.slots.forEach(function (slot) {
          if (slot.card && slot.card.cardId === cardId && !slot.card.expired) {
            slot.card.expired = true
            showExpired(slot, slot.card.expiredText)
          }
        })
      })
    })
  }

  function showExpired (slot, text) {
    if (slot.el.querySelector('.skillc-expired')) return
    var veil = document.createElement('div')
    veil.className = 'skillc-expired'
    veil.textContent = text || '服务已过期'
    slot.el.appendChild(veil)
  }

  // hover-class: props.hoverStyle applies while the element is pressed.
  var pressed = null
  stack.addEventListener('pointerdown', function (e) {
    var el = e.target instanceof Element ? e.target.closest('[data-uid]') : null
    var slot = el ? slotOf(el) : null
    for (; slot && el && el !== slot.el; el = el.parentElement) {
      var entry = slot.nodes.get(el.getAttribute('data-uid'))
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
  ;['pointerup', 'pointercancel', 'pointerleave'].forEach(function (n) { stack.addEventListener(n, release) })

  // -- consent in the card (docs/serve.md, "Consent for L3/L4 APIs") ---------------------------
  // A host that cannot elicit gets, for an L3/L4 call, a result that asks the user here. Its
  // consent token (only in _meta, never shown) goes with the user's answer to the app-only tool
  // skillc_consent, through the host: approved, the call runs and its card takes the control's
  // place; declined, nothing runs. Either way the model hears of it as of any other outcome.

  function drawConsent (slot, consent, after) {
    slot.consent = { token: consent.token, tool: String(consent.tool || ''), args: consent.arguments || {}, words: null, after: after || null }
    var tool = slot.consent.tool
    var box = slot.el
    box.setAttribute('role', 'group')
    box.setAttribute('aria-label', 'Consent for ' + tool)
    box.style.cssText = 'font:14px/1.4 var(--font-sans,sans-serif);padding:10px 12px;border:1px solid currentColor;border-radius:8px'
    var ask = document.createElement('p')
    ask.id = 'skillc-consent-' + slot.id
    ask.style.margin = '0 0 6px'
    ask.textContent = tool + ' (risk ' + String(consent.risk || '') + ') needs your consent.'
    box.appendChild(ask)
    if (consent.description) {
      var what = document.createElement('p')
      what.style.margin = '0 0 6px'
      what.textContent = String(consent.description)
      box.appendChild(what)
    }
    var args = document.createElement('pre')
    args.style.cssText = 'margin:0 0 8px;white-space:pre-wrap;word-break:break-all'
    args.textContent = JSON.stringify(slot.consent.args, null, 1)
    box.appendChild(args)
    var buttons = ['Approve', 'Decline'].map(function (label) {
      var button = document.createElement('button')
      button.type = 'button'
      button.textContent = label
      button.setAttribute('data-consent', label.toLowerCase())
      button.setAttribute('aria-describedby', ask.id)
      button.style.marginRight = '8px'
      if (!canCallTools()) button.disabled = true
      box.appendChild(button)
      return button
    })
    if (!canCallTools()) {
      var note = document.createElement('p')
      note.textContent = 'This host cannot call tools, so consent cannot be given in the card.'
      box.appendChild(note)
    }
    buttons.forEach(function (button) {
      button.addEventListener('click', function () {
        if (!slot.consent || slot.consent.pending) return
        slot.consent.pending = true
        box.setAttribute('aria-busy', 'true')
        buttons.forEach(function (b) { b.disabled = true })
        var approve = button.getAttribute('data-consent') === 'approve'
        enqueue(function () { return decide(slot, approve) })
      })
    })
  }

  // A follow-up's result that asks the user: the words that led to it wait with the control.
  function asking (result, words) {
    var consent = result && !result.isError && (result._meta || {})[CONSENT_META]
    if (!consent || typeof consent.token !== 'string') return false
    state.slots.forEach(function (slot) { if (slot.consent && slot.consent.token === consent.token) slot.consent.words = words })
    return true
  }

  function decide (slot, approve) {
    var asked = slot.consent
    var done = function (result) {
      return showResult(result || {}, asked.after, slot).then(function () { return tellConsent(asked, approve, result) })
    }
    return request('tools/call', inSession({ sessionId: slot.session }, CONSENT_TOOL, { token: asked.token, approve: approve })).then(done, function (err) {
      return done({ isError: true, content: [{ type: 'text', text: String((err && err.message) || err) }] })
    })
  }

  function tellConsent (asked, approve, result) {
    if (!state.hostCapabilities.updateModelContext) return Promise.resolve()
    var outcome = result ? (result.isError ? 'failed: ' : 'returned: ') + textOf(result) : 'gave no result'
    var said = asked.words ? ' the user said: ' + JSON.stringify(asked.words) + ', and' : ' the user'
    var text = 'On the ' + CONFIG.skill + ' card' + said + (approve ? ' approved ' : ' declined ') + asked.tool + ' ' +
      JSON.stringify(asked.args) + (approve ? ', which ' + outcome : ': ' + textOf(result || {}))
    return tellSummary(text)
  }

  // -- the CardSpec fallback (Adaptive Card subset) ---------------------------------------------

  function renderFallback (slot, card) {
    var box = document.createElement('div')
    box.className = 'skillc-fallback'
    ;(card.body || []).forEach(function (el) { box.appendChild(acElement(el)) })
    slot.el.appendChild(box)
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

  // -- size: the laid-out height, as ext-apps' App measures it ---------------------------------

  var sizeQueued = false
  var lastSize = null
  function reportSize () {
    if (sizeQueued || !state.ready) return // nothing goes to the host before ui/notifications/initialized
    sizeQueued = true
    requestAnimationFrame(function () {
      sizeQueued = false
      var dims = state.hostContext.containerDimensions || {}
      if (typeof dims.height === 'number') return // a fixed container: the view fills it and scrolls
      var html = document.documentElement
      var before = html.style.height
      html.style.height = 'max-content' // the content's own height, not the iframe's
      var height = Math.ceil(html.getBoundingClientRect().height)
      html.style.height = before
      if (typeof dims.maxHeight === 'number') height = Math.min(height, Math.floor(dims.maxHeight))
      var width = reportedWidth(dims)
      if (lastSize && lastSize.width === width && lastSize.height === height) return
      lastSize = { width: width, height: height }
      notify('ui/notifications/size-changed', { width: width, height: height })
    })
  }
  // The width the view wants: a fixed container's width; otherwise the widest card's layout width
  // (WeChat lays a card out at the screen width), never above the host's maxWidth.
  function reportedWidth (dims) {
    if (typeof dims.width === 'number') return Math.floor(dims.width)
    var natural = 0
    state.slots.forEach(function (slot) {
      var vp = slot.card && slot.card.document && slot.card.document.viewport
      if (vp && typeof vp.width === 'number' && !slot.el.hidden) natural = Math.max(natural, vp.width)
    })
    if (!natural) natural = Math.ceil(window.innerWidth)
    return typeof dims.maxWidth === 'number' ? Math.min(natural, Math.floor(dims.maxWidth)) : natural
  }

  if (window.ResizeObserver) {
    var watcher = new ResizeObserver(function () { reportSize() })
    watcher.observe(document.documentElement)
    watcher.observe(document.body)
  }
  // Card images change the height when they load.
  stack.addEventListener('load', function () { reportSize() }, true)

  // -- start ------------------------------------------------------------------------------------

  window.skillcView = {
    config: CONFIG,
    state: state,
    // One card at a time, for tests of the DOM mapping: render replaces the stack with one card.
    render: function (doc) {
      booted() // no host: nothing waits for a host context
      var slot = state.slots.length ? resetSlot(last(), 'card') : newSlot('card')
      slot.card = { document: doc, cardId: 'local' }
      renderInto(slot, doc)
    },
    applyPatches: function (patches) { applyPatches(last(), patches) },
    measured: function () { return lastSize }
  }

  function booted () { document.documentElement.classList.remove('skillc-booting') }

  // window.openai's globals: the theme is painted from the very start; later changes count only
  // while nothing is decided or once window.openai is the bridge.
  function onGlobals (event) {
    if (state.ready && !viaOpenAI) return
    var globals = (event.detail && event.detail.globals) || {}
    var ctx = openaiContext(globals)
    if (Object.keys(ctx).length) applyContext(ctx)
    if (!viaOpenAI) return
    if (ctx.theme) enqueue(restyleAll)
    if ('toolResponseMetadata' in globals || 'toolOutput' in globals) openaiResult()
  }

  if (OPENAI) {
    applyContext(openaiContext(OPENAI))
    booted()
    window.addEventListener('openai:set_globals', onGlobals)
  }

  var NO_ANSWER = {}
  var initialize = request('ui/initialize', {
    appInfo: { name: 'skillc-card:' + CONFIG.skill + '/' + CONFIG.componentPath, version: '1' },
    // The MCP Apps draft: a view MUST declare the display modes it supports.
    appCapabilities: { availableDisplayModes: ['inline'] },
    protocolVersion: PROTOCOL
  })
  var answered = !OPENAI ? initialize : Promise.race([initialize, new Promise(function (_resolve, reject) {
    setTimeout(function () { reject(NO_ANSWER) }, OPENAI_INIT_WAIT_MS)
  })])
  answered.then(function (result) {
    state.hostCapabilities = (result && result.hostCapabilities) || {}
    // The theme is applied before the document is first shown (the root stays hidden until now).
    applyContext((result && result.hostContext) || {})
    booted()
    notify('ui/notifications/initialized', {})
    state.ready = true
    reportSize()
  }, function (err) {
    if (err !== NO_ANSWER) { booted(); setStatus('The host refused ui/initialize: ' + err.message); return }
    // No MCP Apps host: window.openai is the bridge from now on (a late answer finds no waiter).
    state.pending.clear()
    viaOpenAI = true
    state.hostCapabilities = openaiCapabilities()
    state.ready = true
    openaiResult()
    reportSize()
  })
})()

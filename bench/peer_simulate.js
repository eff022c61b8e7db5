// The peer side of bench/render.py: WeChat's official component test framework
// (miniprogram-simulate on j-component, in jsdom) rendering the same drink-list card.
// Usage: node bench/peer_simulate.js <peers node_modules> <card.wxml> <rounds> [cases] [warm-up rounds]
// Prints one JSON object: per case, median wall and median CPU (process.cpuUsage) milliseconds.
// Without [cases], the five cases of bench/render.py. With it (comma-separated, for
// bench/scorecard.py), only those: load_render_20, render_20, render_<n> (render + attach of a
// component loaded once with n items), replace_<n> (setData of n items, same keys, new prices),
// replace_new_<n> (n items, all keys new), grow_<a>_<b> (setData of b items on a card of a).
// load_render_20 is simulate.load of the template text + render + attach (the like-for-like of
// skillc's cold render), render_20 render + attach of a component loaded once (its warm render).
'use strict'
const path = require('path')
const fs = require('fs')
const modules = path.resolve(process.argv[2])
const wxml = fs.readFileSync(process.argv[3], 'utf8')
const rounds = Number(process.argv[4] || 20)
// The caller's warm-up count, to warm this side as much as its own (default: 3, one for 1000+ items).
const warmupArg = process.argv[6] === undefined ? null : Number(process.argv[6])
const { JSDOM } = require(path.join(modules, 'jsdom'))
const dom = new JSDOM('<!doctype html><html><body></body></html>', { pretendToBeVisual: true })
for (const key of ['window', 'document', 'navigator', 'Node', 'HTMLElement', 'Event', 'CustomEvent', 'MutationObserver', 'getComputedStyle']) {
  // defineProperty, not assignment: Node 21+ has a global navigator with a getter only.
  Object.defineProperty(global, key, { value: key === 'window' ? dom.window : dom.window[key], configurable: true, writable: true })
}
global.requestAnimationFrame = (cb) => setTimeout(cb, 0)
const simulate = require(path.join(modules, 'miniprogram-simulate'))

function drinks (n, priceOffset = 0) {
  const out = []
  for (let i = 0; i < n; i++) {
    out.push({ id: 'd' + i, name: 'Drink ' + i, price: 20 + (i % 13) + priceOffset, image: 'https://img.example/d' + i + '.jpg' })
  }
  return out
}

function median (xs) {
  const s = xs.slice().sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

function time (fn) {
  const c0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  fn()
  const wall = Number(process.hrtime.bigint() - t0) / 1e6
  const c = process.cpuUsage(c0)
  return { wall, cpu: (c.user + c.system) / 1000 }
}

const data = (n) => ({ title: 'Menu', keyword: '', drinks: drinks(n), selectedId: 'd1' })

function mount (n) {
  const id = simulate.load({ template: wxml, data: data(n) })
  const comp = simulate.render(id)
  comp.attach(document.body)
  return comp
}

if (process.argv[5]) {
  runCases(process.argv[5].split(','))
  process.exit(0)
}

function renamed (n, r) {
  return drinks(n).map((d, i) => Object.assign({}, d, { id: 'r' + r + '_' + i }))
}

// Each case: an untimed setup giving the card (or loaded id) and the timed call's argument, the timed
// call, and the teardown; cheap cases get three warm-up rounds, the 1000-item ones one.
function caseOf (name) {
  let m
  if (name === 'load_render_20') return { size: 20, setup: () => null, run: () => mount(20), done: (c) => c.detach() }
  if ((m = /^render_(\d+)$/.exec(name))) {
    const n = Number(m[1])
    const id = simulate.load({ template: wxml, data: data(n) })
    return { size: n, setup: () => null, run: () => { const c = simulate.render(id); c.attach(document.body); return c }, done: (c) => c.detach() }
  }
  if ((m = /^replace_new_(\d+)$/.exec(name))) {
    const n = Number(m[1])
    return { size: n, setup: (r) => [mount(n), renamed(n, r)], run: ([c, d]) => c.setData({ drinks: d }), done: (_, [c]) => c.detach() }
  }
  if ((m = /^replace_(\d+)$/.exec(name))) {
    const n = Number(m[1])
    return { size: n, setup: (r) => [mount(n), drinks(n, r + 1)], run: ([c, d]) => c.setData({ drinks: d }), done: (_, [c]) => c.detach() }
  }
  if ((m = /^grow_(\d+)_(\d+)$/.exec(name))) {
    const a = Number(m[1])
    const b = Number(m[2])
    return { size: b, setup: () => [mount(a), drinks(b)], run: ([c, d]) => c.setData({ drinks: d }), done: (_, [c]) => c.detach() }
  }
  throw new Error('unknown case ' + name)
}

function runCases (names) {
  const out = {}
  for (const name of names) {
    const c = caseOf(name)
    const warmup = warmupArg !== null ? warmupArg : c.size >= 1000 ? 1 : 3
    const samples = []
    for (let r = 0; r < rounds + warmup; r++) {
      const arg = c.setup(r)
      let made
      const t = time(() => { made = c.run(arg) })
      c.done(made, arg)
      if (r >= warmup) samples.push(t)
    }
    // The samples too: a caller interleaving several runs takes the median of them all.
    out[name] = { wall: median(samples.map((x) => x.wall)), cpu: median(samples.map((x) => x.cpu)), walls: samples.map((x) => x.wall), cpus: samples.map((x) => x.cpu) }
  }
  process.stdout.write(JSON.stringify(out) + '\n')
}

const loaded20 = simulate.load({ template: wxml, data: data(20) })
const result = { load_render_20: [], render_20: [], set_price_20: [], set_price_1000: [], replace_1000: [] }
const WARMUP = 3  // let V8 compile the hot paths before measuring, as for our side
for (let r = 0; r < rounds + WARMUP; r++) {
  if (r === WARMUP) for (const k of Object.keys(result)) result[k].length = 0
  let comp
  result.load_render_20.push(time(() => { comp = mount(20) }))
  result.set_price_20.push(time(() => comp.setData({ 'drinks[3].price': 99 + r })))
  comp.detach()
  let warm
  result.render_20.push(time(() => { warm = simulate.render(loaded20); warm.attach(document.body) }))
  warm.detach()
  const big = mount(1000)
  result.set_price_1000.push(time(() => big.setData({ 'drinks[3].price': 99 + r })))
  const replacement = drinks(1000, r + 1)
  result.replace_1000.push(time(() => big.setData({ drinks: replacement })))
  big.detach()
}
const out = {}
for (const k of Object.keys(result)) {
  out[k] = { wall: median(result[k].map((x) => x.wall)), cpu: median(result[k].map((x) => x.cpu)) }
}
process.stdout.write(JSON.stringify(out) + '\n')

// The peer side of bench/cards.py: WeChat's component test framework (miniprogram-simulate on
// j-component, in jsdom) handling taps on the same drink-list card. Each tap is j-component's own
// dispatch of `tap` on a `.drink` item inside the scroll-view (`item.dispatchEvent('tap')`, which
// reaches the item's bindtap through exparser), awaited with setImmediate (j-component dispatches
// on a microtask), then the handler's setData and the DOM update it causes.
// Usage: node bench/peer_tap.js <peers node_modules> <card.wxml> <drinks> <taps>
// Prints one JSON object: median and p95 wall milliseconds per tap, CPU ms per tap (mean), checks.
'use strict'
const path = require('path')
const fs = require('fs')
const modules = path.resolve(process.argv[2])
const wxml = fs.readFileSync(process.argv[3], 'utf8')
const n = Number(process.argv[4] || 3)
const taps = Number(process.argv[5] || 1000)
const { JSDOM } = require(path.join(modules, 'jsdom'))
const dom = new JSDOM('<!doctype html><html><body></body></html>', { pretendToBeVisual: true })
for (const key of ['window', 'document', 'navigator', 'Node', 'HTMLElement', 'Event', 'CustomEvent', 'MutationObserver', 'getComputedStyle']) {
  // defineProperty, not assignment: Node 21+ has a global navigator with a getter only.
  Object.defineProperty(global, key, { value: key === 'window' ? dom.window : dom.window[key], configurable: true, writable: true })
}
global.requestAnimationFrame = (cb) => setTimeout(cb, 0)
const simulate = require(path.join(modules, 'miniprogram-simulate'))

let calls = 0
const drinks = []
for (let i = 0; i < n; i++) drinks.push({ id: 'd' + i, name: 'Drink ' + i, price: 20 + (i % 13), image: 'https://img.example/d' + i + '.jpg' })
const id = simulate.load({
  template: wxml,
  data: { title: 't', keyword: '', drinks, selectedId: '' },
  methods: { onSelect (e) { this.setData({ selectedId: e.currentTarget.dataset.id }); calls++ } }
})
const comp = simulate.render(id)
comp.attach(document.createElement('parent-wrapper'))
const items = comp.querySelectorAll('.drink')
const tick = () => new Promise((resolve) => setImmediate(resolve))

async function main () {
  const times = []
  let cpu = 0
  for (let i = 0; i < taps; i++) {
    const item = items[i % 2]
    const c0 = process.cpuUsage()
    const t0 = process.hrtime.bigint()
    item.dispatchEvent('tap')
    await tick()
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
    const c = process.cpuUsage(c0)
    cpu += (c.user + c.system) / 1000
    const want = 'd' + (i % 2)
    if (comp.instance.data.selectedId !== want || !item.dom.className.includes('drink-selected')) {
      throw new Error(`tap ${i} did not select ${want} (selected ${comp.instance.data.selectedId})`)
    }
  }
  if (calls !== taps) throw new Error(`${calls} handler calls for ${taps} taps`)
  times.sort((a, b) => a - b)
  console.log(JSON.stringify({
    median: times[Math.floor(taps / 2)],
    p95: times[Math.floor(taps * 0.95)],
    cpu_ms: cpu / taps,
    selected: comp.instance.data.selectedId,
    calls,
    items: items.length
  }))
}
main().catch((err) => { console.error(err); process.exit(1) })

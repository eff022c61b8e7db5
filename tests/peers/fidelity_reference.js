// The reference side of the fidelity check (tests/test_fidelity_chromium.py, docs/fidelity.md).
//
// For each card: WeChat's own wcc compiles the WXML (miniprogram-simulate with
// `compiler: 'official'`, which hands wcc's generate function to j-component), the template
// data is applied, and the resulting jsdom DOM of wx-view / wx-text / wx-image ... elements is
// serialised; WeChat's own wcsc compiles the WXSS, and its runtime converts rpx at the given
// screen width. Layout happens later, in the same Chromium that lays out skillc's HTML.
//
// usage: node fidelity_reference.js JOB.json   (prints {"<key>": {"html": ..., "css": ...}})
// JOB: {"width": 375, "root": "<skill dir>", "cards": [{"key", "component": "<abs path without .wxml>", "data"}]}
//
// One skill per process: wcc's generated code caches its compiled ops in one global table indexed
// by file number, so a second skill compiled in the same process reads the first one's ops.
'use strict'

const fs = require('fs')
const os = require('os')
const path = require('path')
const vm = require('vm')
const { spawnSync } = require('child_process')

const HERE = path.join(__dirname, 'node_modules')
const { JSDOM } = require(path.join(HERE, 'jsdom'))

const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))
const HOST_TAG = 'fid-card'

// j-component builds its DOM with the globals a jest jsdom environment would provide.
const dom = new JSDOM('<!doctype html><html><head></head><body></body></html>', { pretendToBeVisual: true })
for (const name of ['window', 'document', 'navigator', 'HTMLElement', 'Node', 'Element', 'Event',
  'CustomEvent', 'MutationObserver', 'requestAnimationFrame']) {
  global[name] = dom.window[name]
}
const simulate = require(path.join(HERE, 'miniprogram-simulate'))

// The template data is given whole (like `skillc render --data`), so the card's own JavaScript
// must not run: its lifetimes would call wx.modelContext, and its `data` defaults would merge in.
// The data is the definition's own, so the first render already has it (wcc's code throws on
// `drinks.length` of undefined data).
const registerComponent = global.Component
let cardData = {}
global.Component = () => registerComponent({ data: cardData })

// wcsc refuses to run from a read-only or non-executable location; a private copy is enough.
function wcscBinary () {
  const name = process.platform === 'darwin' ? 'mac/wcsc' : 'linux/wcsc'
  const src = path.join(HERE, 'miniprogram-compiler', 'bin', name)
  const dst = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'fid-wcsc-')), 'wcsc')
  fs.copyFileSync(src, dst)
  fs.chmodSync(dst, 0o755)
  return dst
}
const WCSC = wcscBinary()

// Runs wcsc's JavaScript output with just enough of a browser for setCssToHead, as the base
// library would at this screen width, and returns the CSS text it injects.
function compileWxss (file, width) {
  const done = spawnSync(WCSC, ['-js', path.basename(file)], { cwd: path.dirname(file), encoding: 'utf8' })
  if (done.status !== 0) throw new Error(`wcsc failed on ${file}: ${done.stderr}`)
  const src = done.stdout.replace(/^%s$/m, '')
  let css = ''
  const node = () => ({ setAttribute () {}, appendChild (t) { css = t.text }, childNodes: [], styleSheet: null })
  vm.runInNewContext(src, {
    window: { screen: { width }, devicePixelRatio: 2 },
    navigator: { userAgent: 'node' },
    document: {
      createElement: node,
      createTextNode: (text) => ({ text }),
      head: { appendChild () {} },
      getElementsByTagName: () => [{ appendChild () {} }],
    },
    console,
  })
  return css
}

const out = {}
for (const card of job.cards) {
  cardData = card.data
  const id = simulate.load(card.component, HOST_TAG, { compiler: 'official', rootPath: job.root })
  const comp = simulate.render(id)
  const parent = document.createElement('div')
  document.body.appendChild(parent)
  comp.attach(parent)
  // j-component isolates styles by prefixing every class with the host tag; wcsc's CSS for the
  // same file is not prefixed, so the prefix comes off again.
  for (const el of parent.querySelectorAll('[class]')) {
    el.setAttribute('class', el.getAttribute('class').split(/\s+/).map((c) => c.replace(`${HOST_TAG}--`, '')).join(' '))
  }
  out[card.key] = {
    html: parent.innerHTML,
    css: compileWxss(`${card.component}.wxss`, job.width),
  }
  parent.remove()
}
process.stdout.write(JSON.stringify(out))

// The inspector's entry: the token form, the views (one per URL fragment), and the clock line.
import { token } from './api.js'
import * as control from './control.js'
import * as requests from './requests.js'
import * as state from './state.js'
import { say } from './views.js'
import * as work from './work.js'

const VIEWS = { requests, state, work, control }
const mounted = new Set()

const $ = (id) => document.getElementById(id)

async function route() {
  const name = location.hash.slice(1) in VIEWS ? location.hash.slice(1) : 'requests'
  for (const v of Object.keys(VIEWS)) {
    $(v).hidden = v !== name
    const link = $(`nav-${v}`)
    if (v === name) link.setAttribute('aria-current', 'page')
    else link.removeAttribute('aria-current')
  }
  const section = $(name)
  if (!mounted.has(name)) {
    mounted.add(name)
    await (name === 'control' ? control.mount(section, requests.forget) : VIEWS[name].mount(section))
  } else if (VIEWS[name].refresh) await VIEWS[name].refresh()
  section.dataset.ready = 'true'
}

function showLogin(message) {
  requests.stop()
  mounted.clear()
  for (const v of Object.keys(VIEWS)) $(v).hidden = true
  document.querySelector('nav').hidden = true
  $('logout').hidden = true
  $('login').hidden = false
  if (message) say(message, true)
  $('token').focus()
}

async function start() {
  try {
    await control.showClock()
  } catch (err) {
    token.clear()
    return showLogin(err.status === 401 ? 'The admin token was refused' : err.message)
  }
  say('')
  $('login').hidden = true
  document.querySelector('nav').hidden = false
  $('logout').hidden = false
  await route()
  // The clock line follows the sandbox time (moved from here, the API or the command line).
  setInterval(() => control.showClock().catch(() => {}), 5000)
}

$('login').addEventListener('submit', (e) => {
  e.preventDefault()
  token.set($('token').value.trim())
  $('token').value = ''
  start()
})
$('logout').addEventListener('click', () => {
  token.clear()
  location.hash = ''
  showLogin()
})
window.addEventListener('hashchange', () => {
  if (token.get()) route().then(() => $('main').focus())
})

if (token.get()) start()
else showLogin()

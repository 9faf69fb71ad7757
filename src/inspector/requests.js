// Requests: the customer API calls of the journal, live (polled with an `after` cursor), filtered, opened.
import { api, query } from './api.js'
import { badge, field, h, json, say } from './views.js'

/** The most calls the page keeps; older ones drop off the list. */
const MAX = 500
const POLL_MS = 1000

let calls = []
let last = 0
/** The journal's count of clears when last read: when it changes (a reset, from anywhere), the list starts again. */
let clears = null
let timer = null
let selected = null
let root = null

const filters = { status: '', operation: '', key: '' }

const matches = (c) =>
  (!filters.status ||
    (filters.status === 'errors' ? c.status >= 400 : String(c.status).startsWith(filters.status[0]))) &&
  (!filters.operation || (c.operation ?? '').toLowerCase().includes(filters.operation.toLowerCase())) &&
  (!filters.key || (c.key_prefix ?? '').startsWith(filters.key))

function row(c) {
  const open = () => show(c)
  return h(
    'tr',
    { 'data-id': c.id, class: selected === c.id ? 'selected' : null },
    h('td', {}, c.time.slice(11, 23)),
    h('td', {}, c.method),
    h('td', { class: 'path' }, h('button', { type: 'button', class: 'link', onclick: open }, c.path)),
    h('td', {}, c.operation ?? '—'),
    h('td', {}, c.key_prefix ? `${c.key_prefix}…` : '—'),
    h('td', {}, badge(c.status)),
    h('td', { class: 'num' }, `${c.duration_ms} ms`),
  )
}

function render() {
  const body = root.querySelector('tbody')
  const shown = calls.filter(matches).reverse()
  body.replaceChildren(
    ...(shown.length ? shown.map(row) : [h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No calls yet'))]),
  )
  root.querySelector('#request-count').textContent = `${shown.length} of ${calls.length} calls`
  const ops = root.querySelector('#operations')
  ops.replaceChildren(
    ...[...new Set(calls.map((c) => c.operation).filter(Boolean))].sort().map((o) => h('option', { value: o })),
  )
}

function show(c) {
  selected = c.id
  const detail = root.querySelector('#request-detail')
  detail.replaceChildren(
    h('h3', { tabindex: -1 }, `${c.method} ${c.path} → ${c.status}`),
    h(
      'p',
      {},
      `${c.time} · ${c.operation ?? 'no operation'} · key ${c.key_prefix ? `${c.key_prefix}…` : 'none'} · ${c.duration_ms} ms · request ${c.request_id}`,
    ),
    h('h4', {}, 'Request headers'),
    json(c.request_headers, 'Request headers'),
    h('h4', {}, 'Request body'),
    json(c.body, 'Request body'),
    h('h4', {}, 'Answer headers'),
    json(c.response_headers, 'Answer headers'),
    h('h4', {}, c.response_truncated ? 'Answer body (cut)' : 'Answer body'),
    json(c.response_body, 'Answer body'),
    h('button', { type: 'button', onclick: () => close() }, 'Close'),
  )
  detail.hidden = false
  detail.querySelector('h3').focus()
  render()
}

function close() {
  const detail = root.querySelector('#request-detail')
  detail.hidden = true
  const back = root.querySelector(`tr[data-id="${selected}"] button`)
  selected = null
  render()
  back?.focus()
}

async function poll() {
  try {
    const data = await api('GET', `/sandbox/journal${query({ after: last || undefined })}`)
    const { entries } = data
    if (clears !== null && data.clears !== clears) forget()
    clears = data.clears
    if (entries.length) {
      calls = calls.concat(entries).slice(-MAX)
      last = entries[entries.length - 1].id
      render()
    }
  } catch (err) {
    say(`Journal: ${err.message}`, true)
    if (err.status === 401) return stop()
  }
  timer = setTimeout(poll, POLL_MS)
}

export function stop() {
  clearTimeout(timer)
  timer = null
}

/** Forgets the calls shown (after a reset, which empties the journal). */
export function forget() {
  calls = []
  selected = null
  if (root) {
    root.querySelector('#request-detail').hidden = true
    render()
  }
}

export function mount(section) {
  root = section
  const input = (name, attrs) =>
    h('input', {
      ...attrs,
      name,
      oninput: (e) => {
        filters[name] = e.target.value.trim()
        render()
      },
    })
  section.replaceChildren(
    h('h2', { id: 'requests-title' }, 'Requests'),
    h(
      'form',
      { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
      field(
        'Status',
        h(
          'select',
          {
            name: 'status',
            onchange: (e) => {
              filters.status = e.target.value
              render()
            },
          },
          h('option', { value: '' }, 'all'),
          h('option', { value: '2xx' }, '2xx'),
          h('option', { value: '4xx' }, '4xx'),
          h('option', { value: '5xx' }, '5xx'),
          h('option', { value: 'errors' }, '4xx and 5xx'),
        ),
      ),
      field('Operation', input('operation', { list: 'operations', placeholder: 'e.g. getDnsRecords' })),
      h('datalist', { id: 'operations' }),
      field('Key prefix', input('key', { placeholder: 'first characters' })),
      h('p', { id: 'request-count', 'aria-live': 'polite' }),
    ),
    h(
      'div',
      { class: 'split' },
      h(
        'div',
        { class: 'scroll' },
        h(
          'table',
          { id: 'request-list' },
          h('caption', {}, 'Customer API calls, newest first (live)'),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Time', 'Method', 'Path', 'Operation', 'Key', 'Status', 'Duration'].map((c) =>
                h('th', { scope: 'col' }, c),
              ),
            ),
          ),
          h('tbody'),
        ),
      ),
      h('section', { id: 'request-detail', class: 'detail', hidden: true, 'aria-label': 'The call opened' }),
    ),
  )
  render()
  if (!timer) poll()
}

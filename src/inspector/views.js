// Small DOM helpers: elements built with textContent only (no HTML from data), tables, JSON blocks.
import { ADMIN, api } from './api.js'

/** An element: `h('td', { class: 'x', onclick }, 'text', child)`. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v)
    else if (v === true) el.setAttribute(k, '')
    else el.setAttribute(k, String(v))
  }
  for (const c of children.flat())
    if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : String(c))
  return el
}

/** Pretty JSON in a <pre>. */
export const json = (value, label) =>
  h('pre', { class: 'json', tabindex: 0, 'aria-label': label ?? 'JSON' }, JSON.stringify(value, null, 2) ?? 'null')

/** A table with a caption; `cells(row)` gives a row's cells (strings or nodes), `onopen(row)` makes rows open. */
export function table(caption, columns, rows, cells, rowAttrs) {
  const body = rows.length
    ? rows.map((r) =>
        h(
          'tr',
          rowAttrs?.(r) ?? {},
          cells(r).map((c) => h('td', {}, c)),
        ),
      )
    : [h('tr', {}, h('td', { colspan: columns.length, class: 'empty' }, 'None'))]
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      {},
      h('caption', {}, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      h('tbody', {}, body),
    ),
  )
}

/** A heading with a link to the raw JSON of the admin route it shows (opened with the token, shown below it). */
export function rawLink(path) {
  const out = h('div', { class: 'raw' })
  const button = h(
    'button',
    {
      type: 'button',
      class: 'link',
      'aria-expanded': 'false',
      onclick: async () => {
        if (out.firstChild) {
          out.replaceChildren()
          button.setAttribute('aria-expanded', 'false')
          return
        }
        try {
          out.replaceChildren(
            h('p', {}, h('code', {}, `GET ${ADMIN}${path}`)),
            json(await api('GET', path, undefined, true)),
          )
        } catch (err) {
          out.replaceChildren(h('p', { class: 'error' }, err.message))
        }
        button.setAttribute('aria-expanded', 'true')
      },
    },
    'raw JSON',
  )
  return [button, out]
}

/** A titled block of the state view: heading, raw JSON link, content. */
export const block = (title, path, ...content) =>
  h('section', { class: 'block' }, h('h3', {}, title, ' ', ...rawLink(path)), ...content)

/** A status as a badge with its class (2xx ok, 4xx warn, 5xx bad). */
export function badge(text, kind) {
  const cls =
    kind ??
    (/^2|^(succeeded|done|active|running_ok)$/.test(String(text))
      ? 'ok'
      : /^4|^(pending|queued|sending|running)$/.test(String(text))
        ? 'warn'
        : /^5|^(failed|quarantined)/.test(String(text))
          ? 'bad'
          : '')
  return h('span', { class: `badge ${cls}` }, String(text))
}

/** Shows a message in the live status line. */
export function say(text, error = false) {
  const el = document.getElementById('status')
  el.textContent = text
  el.className = error ? 'error' : ''
}

/** Runs an action, reporting its error in the status line. */
export async function attempt(fn) {
  try {
    return await fn()
  } catch (err) {
    say(err.message, true)
    return undefined
  }
}

/** A labelled form field. */
export const field = (label, input) => h('label', { class: 'field' }, h('span', {}, label), input)

// State: one account's users and keys, domains with records (and what the built-in DNS server answers), orders and
// their items, VPS with tasks and power state, certificates, invoices, tickets; each with its raw JSON.
import { api, query } from './api.js'
import { attempt, badge, block, field, h, table } from './views.js'

let root = null
let current = null

/** A table over objects: the columns are the keys whose values are scalars (the first `max`). */
function autoTable(caption, rows, max = 7) {
  const keys = []
  for (const r of rows)
    for (const [k, v] of Object.entries(r))
      if (!keys.includes(k) && (v === null || typeof v !== 'object') && keys.length < max) keys.push(k)
  return table(caption, keys, rows, (r) => keys.map((k) => (k === 'status' ? badge(r[k] ?? '') : String(r[k] ?? '—'))))
}

/** The first array among an answer's fields (`{invoices: [...], pagination}` → the invoices). */
const listOf = (data) => Object.values(data ?? {}).find(Array.isArray) ?? []

function domainView(d) {
  const served = d.dns
    ? table(
        `What the built-in DNS server answers for ${d.name}`,
        ['Name', 'Type', 'Answer code', 'Answers'],
        d.dns,
        (a) => [a.name, a.type, badge(a.rcode, a.rcode === 'NOERROR' ? 'ok' : 'bad'), a.answers.join('\n') || '—'],
      )
    : h('p', {}, 'Another DNS driver serves the zones: no built-in answers to show.')
  return h(
    'details',
    { class: 'domain' },
    h(
      'summary',
      {},
      `${d.name} `,
      badge(d.status),
      ` renews ${d.renewal_date}, serial ${d.zone_serial}, ${d.records.length} records`,
    ),
    table(`Records of ${d.name}`, ['Name', 'Type', 'Value', 'TTL'], d.records, (r) => [
      r.name,
      r.type,
      r.value,
      String(r.ttl),
    ]),
    served,
  )
}

function vpsView(v) {
  return h(
    'details',
    { class: 'vps' },
    h('summary', {}, `${v.name} (${v.hostname}) `, badge(v.status), v.rescue ? ' rescue' : ''),
    table(
      `Tasks of ${v.name}, newest first`,
      ['Id', 'Action', 'Status', 'Progress', 'Attempts', 'Error'],
      v.tasks,
      (t) => [String(t.id), t.action, badge(t.status), `${t.progress}%`, String(t.attempts), t.error ?? '—'],
    ),
  )
}

async function orderView(o) {
  const path = `/orders/${o.id}`
  const detail = await api('GET', path)
  return h(
    'details',
    { class: 'order' },
    h('summary', {}, `Order ${o.id} `, badge(o.status), ` ${(o.total_cents / 100).toFixed(2)}, ${o.created}`),
    table(`Items of order ${o.id}`, ['Type', 'Name', 'Status', 'Price', 'Errors'], detail.items, (i) => [
      i.type,
      i.name,
      badge(i.status),
      (i.price_cents / 100).toFixed(2),
      i.errors.map((e) => `${e.code}: ${e.description}`).join('; ') || '—',
    ]),
  )
}

async function show(customerNumber) {
  current = customerNumber
  const out = root.querySelector('#account-state')
  out.replaceChildren(h('p', {}, 'Loading…'))
  await attempt(async () => {
    const base = `/accounts/${customerNumber}`
    const [account, resources, orders, invoices, tickets] = await Promise.all([
      api('GET', base),
      api('GET', `${base}/resources`),
      api('GET', `/orders${query({ account: customerNumber, limit: 25 })}`),
      api('GET', `${base}/invoices`),
      api('GET', `${base}/tickets`),
    ])
    if (current !== customerNumber) return
    out.replaceChildren(
      block(
        `${account.name} (${account.customer_number}) `,
        base,
        h('p', {}, badge(account.status), ` created ${account.created_at}`),
        autoTable('Users', account.users ?? []),
        autoTable('API keys (prefix only)', account.keys ?? []),
      ),
      block(
        'Domains',
        `${base}/resources`,
        ...resources.domains.map(domainView),
        resources.domains.length ? '' : h('p', {}, 'None'),
      ),
      block(
        'Orders',
        `/orders${query({ account: customerNumber, limit: 25 })}`,
        ...(await Promise.all(orders.orders.map(orderView))),
        orders.orders.length ? '' : h('p', {}, 'None'),
      ),
      block('VPS', `${base}/resources`, ...resources.vps.map(vpsView), resources.vps.length ? '' : h('p', {}, 'None')),
      block('Certificates', `${base}/resources`, autoTable('Certificates', resources.certificates)),
      block('Invoices', `${base}/invoices`, autoTable('Invoices', listOf(invoices))),
      block('Tickets', `${base}/tickets`, autoTable('Tickets', listOf(tickets))),
    )
  })
}

export async function refresh() {
  if (!root) return
  const select = root.querySelector('#account')
  const data = await attempt(() => api('GET', '/accounts?limit=100'))
  if (!data) return
  const chosen = current ?? data.accounts[0]?.customer_number
  select.replaceChildren(
    ...data.accounts.map((a) =>
      h(
        'option',
        { value: a.customer_number, selected: a.customer_number === chosen },
        `${a.customer_number} ${a.name}`,
      ),
    ),
  )
  if (chosen !== undefined) await show(Number(chosen))
  else root.querySelector('#account-state').replaceChildren(h('p', {}, 'No accounts: reset the sandbox with a seed.'))
}

export function mount(section) {
  root = section
  section.replaceChildren(
    h('h2', { id: 'state-title' }, 'State'),
    h(
      'form',
      { class: 'filters', onsubmit: (e) => e.preventDefault() },
      field('Account', h('select', { id: 'account', onchange: (e) => show(Number(e.target.value)) })),
      h('button', { type: 'button', onclick: () => refresh() }, 'Reload'),
    ),
    h('div', { id: 'account-state' }),
  )
  return refresh()
}

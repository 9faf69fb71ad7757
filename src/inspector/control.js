// Control: the sandbox clock, faults, reset with a seed, events on demand, the journal.
import { api } from './api.js'
import { attempt, badge, field, h, say, table } from './views.js'

let root = null
let onReset = () => {}

/** The clock line in the header. */
export async function showClock() {
  const c = await api('GET', '/sandbox/clock')
  const days = Math.round((c.offset_seconds / 86400) * 10) / 10
  document.getElementById('clock').textContent =
    `Sandbox time ${c.now} (${days >= 0 ? '+' : ''}${days} days from real time)`
  const out = root?.querySelector('#clock-now')
  if (out) out.textContent = c.now
  return c
}

async function moveClock(body) {
  await attempt(async () => {
    const c = await api('POST', '/sandbox/clock', body)
    say(`Clock at ${c.now}; ${c.jobs_run} jobs ran`)
    root.querySelector('#clock-result').textContent = `${c.jobs_run} jobs ran`
    await showClock()
  })
}

async function listFaults() {
  const { faults } = await api('GET', '/sandbox/faults')
  root.querySelector('#faults').replaceChildren(
    table(`Faults (${faults.length})`, ['Id', 'Target', 'Status', 'Left', 'Fired', 'Only', ''], faults, (f) => [
      String(f.id),
      f.operation ?? `work ${f.work}`,
      f.status === null ? (f.reset ? 'reset' : 'delay') : badge(f.status),
      f.remaining === null ? 'until removed' : String(f.remaining),
      String(f.fired),
      [f.params ? JSON.stringify(f.params) : '', f.customer_number ?? '', f.key_prefix ?? '']
        .filter(Boolean)
        .join(' ') || 'all calls',
      h(
        'button',
        {
          type: 'button',
          'aria-label': `Remove fault ${f.id}`,
          onclick: () =>
            attempt(async () => {
              await api('DELETE', `/sandbox/faults/${f.id}`)
              await listFaults()
            }),
        },
        'Remove',
      ),
    ]),
  )
}

/** The form's fields as an object, without the empty ones; numbers and JSON where the field says so. */
function values(form) {
  const out = {}
  for (const el of form.elements) {
    if (el.type === 'checkbox') {
      if (el.checked) out[el.name] = true
      continue
    }
    if (!el.name || el.value.trim() === '') continue
    const v = el.value.trim()
    out[el.name] = ['int', 'number'].includes(el.dataset.kind)
      ? Number(v)
      : el.dataset.kind === 'json'
        ? JSON.parse(v)
        : v
  }
  return out
}

const submitting = (fn) => (e) => {
  e.preventDefault()
  attempt(() => fn(e.target))
}

export function mount(section, resetHook) {
  root = section
  onReset = resetHook
  const input = (name, attrs = {}) => h('input', { name, ...attrs })
  section.replaceChildren(
    h('h2', { id: 'control-title' }, 'Control'),
    h(
      'div',
      { class: 'cards' },
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'clock-title' },
        h('h3', { id: 'clock-title' }, 'Clock'),
        h('p', {}, 'Now: ', h('output', { id: 'clock-now' })),
        h(
          'form',
          { id: 'advance-form', onsubmit: submitting((f) => moveClock({ advance: values(f).advance })) },
          field('Advance by (30d, 12h, 15m, -1d)', input('advance', { required: true, placeholder: '30d' })),
          h('button', { type: 'submit' }, 'Advance'),
        ),
        h(
          'form',
          { id: 'set-form', onsubmit: submitting((f) => moveClock({ to: values(f).to })) },
          field('Set to (YYYY-MM-DD or ISO 8601)', input('to', { required: true })),
          h('button', { type: 'submit' }, 'Set'),
        ),
        h('p', { id: 'clock-result', 'aria-live': 'polite' }),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'faults-title' },
        h('h3', { id: 'faults-title' }, 'Faults'),
        h(
          'form',
          {
            id: 'fault-form',
            onsubmit: submitting(async (f) => {
              const body = values(f)
              const fault = await api('POST', '/sandbox/faults', body)
              say(`Fault ${fault.id} added`)
              await listFaults()
            }),
          },
          field('Operation (operationId)', input('operation', { placeholder: 'getDnsRecords', list: 'operations' })),
          field('or work', input('work', { placeholder: 'webhooks.deliver' })),
          field('Status', input('status', { 'data-kind': 'int', inputmode: 'numeric', placeholder: '503' })),
          field('Text', input('status_description')),
          field('Times', input('count', { 'data-kind': 'int', inputmode: 'numeric', placeholder: 'until removed' })),
          field(
            'Only these path parameters (JSON)',
            input('params', { 'data-kind': 'json', placeholder: '{"domain": "example.nl"}' }),
          ),
          h(
            'details',
            {},
            h('summary', {}, 'More: chance, delay, account, key, Retry-After, connection reset'),
            field(
              'Chance per call (0 to 1)',
              input('probability', { 'data-kind': 'number', inputmode: 'decimal', placeholder: '1' }),
            ),
            field('Delay (ms)', input('latency_ms', { 'data-kind': 'int', inputmode: 'numeric' })),
            field('Only this customer number', input('customer_number', { 'data-kind': 'int', inputmode: 'numeric' })),
            field('Only this key prefix', input('key_prefix')),
            field('Retry-After (s)', input('retry_after', { 'data-kind': 'int', inputmode: 'numeric' })),
            h(
              'label',
              { class: 'check' },
              h('input', { type: 'checkbox', name: 'reset' }),
              ' Reset the connection instead of answering',
            ),
          ),
          h('button', { type: 'submit' }, 'Add fault'),
          h(
            'button',
            {
              type: 'button',
              onclick: () =>
                attempt(async () => {
                  await api('DELETE', '/sandbox/faults')
                  say('Faults removed')
                  await listFaults()
                }),
            },
            'Clear all',
          ),
        ),
        h('div', { id: 'faults' }),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'event-title' },
        h('h3', { id: 'event-title' }, 'Trigger an event'),
        h(
          'form',
          {
            id: 'event-form',
            onsubmit: submitting(async (f) => {
              const e = await api('POST', '/sandbox/events', values(f))
              say(`Event ${e.id} (${e.type}) sent to ${e.endpoints} endpoints of ${e.customer_number}`)
            }),
          },
          field('Type', input('type', { required: true, placeholder: 'domain.status.changed' })),
          field('Customer number', input('customer_number', { 'data-kind': 'int', inputmode: 'numeric' })),
          field(
            'Data merged over the payload (JSON)',
            input('data', { 'data-kind': 'json', placeholder: '{"status": "active"}' }),
          ),
          h('button', { type: 'submit' }, 'Send event'),
        ),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'reset-title' },
        h('h3', { id: 'reset-title' }, 'Reset'),
        h(
          'p',
          {},
          'Deletes all account data and loads the seed again (or the seed document below); resets the clock, faults and journal.',
        ),
        h(
          'form',
          {
            id: 'reset-form',
            onsubmit: submitting(async (f) => {
              const text = f.elements.seed.value.trim()
              const r = await api('POST', '/sandbox/reset', text ? JSON.parse(text) : null)
              say(
                `Sandbox reset: ${r.accounts} accounts (${r.seed} seed)${r.demo_key ? `, demo key ${r.demo_key}` : ''}`,
              )
              onReset()
              await Promise.all([showClock(), listFaults()])
            }),
          },
          field(
            'Seed document (JSON, optional)',
            h('textarea', { name: 'seed', rows: 4, placeholder: '{"accounts": [...]}' }),
          ),
          h('button', { type: 'submit' }, 'Reset the sandbox'),
        ),
        h(
          'button',
          {
            type: 'button',
            onclick: () =>
              attempt(async () => {
                await api('DELETE', '/sandbox/journal')
                say('Journal cleared')
                onReset()
              }),
          },
          'Clear the request journal',
        ),
      ),
    ),
  )
  return attempt(() => Promise.all([showClock(), listFaults()]))
}

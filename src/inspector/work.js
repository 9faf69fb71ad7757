// Jobs and webhook deliveries: lists with filters, a job's payload and result, a delivery's body, signed headers and
// answer, retry and redeliver.
import { api, query } from './api.js'
import { attempt, badge, field, h, json, rawLink, say, table } from './views.js'

let root = null
const filters = { jobStatus: '', deliveryStatus: '' }

const quarantined = (j) => j.status === 'failed' && (j.last_error ?? '').startsWith('quarantined:')

function detail(title, ...content) {
  const out = root.querySelector('#work-detail')
  out.replaceChildren(
    h('h3', { tabindex: -1 }, title),
    ...content,
    h('button', { type: 'button', onclick: () => (out.hidden = true) }, 'Close'),
  )
  out.hidden = false
  out.querySelector('h3').focus()
}

async function openJob(id) {
  await attempt(async () => {
    const j = await api('GET', `/jobs/${id}`)
    detail(
      `Job ${j.id}: ${j.kind}`,
      h(
        'p',
        {},
        badge(quarantined(j) ? 'quarantined' : j.status),
        ` attempt ${j.attempts} of ${j.max_attempts}, ${j.crashes} crashes, runs at ${j.run_at}`,
      ),
      j.last_error ? h('p', { class: 'error' }, j.last_error) : '',
      h('h4', {}, 'Payload'),
      json(j.payload, 'Payload'),
      h('h4', {}, 'Result'),
      json(j.result, 'Result'),
      ...rawLink(`/jobs/${j.id}`),
      j.status === 'failed' ? h('button', { type: 'button', onclick: () => retry(j.id) }, 'Retry') : '',
    )
  })
}

async function retry(id) {
  await attempt(async () => {
    await api('POST', `/jobs/${id}/retry`)
    say(`Job ${id} queued again`)
    await refresh()
  })
}

async function openDelivery(id) {
  await attempt(async () => {
    const d = await api('GET', `/webhooks/deliveries/${id}`)
    detail(
      `Delivery ${d.id}: ${d.event_type}`,
      h('p', {}, badge(d.status), ` to ${d.url}, account ${d.account_id}, ${d.attempts} attempts`),
      h('h4', {}, 'Answer'),
      h(
        'dl',
        {},
        h('dt', {}, 'Status'),
        h(
          'dd',
          { id: 'delivery-answer' },
          d.response_status === null ? 'none (not reached)' : String(d.response_status),
        ),
        h('dt', {}, 'Error'),
        h('dd', {}, d.last_error ?? '—'),
        h('dt', {}, 'What happened'),
        h('dd', {}, d.error_detail ?? '—'),
        h('dt', {}, 'Took'),
        h('dd', {}, d.duration_ms === null ? '—' : `${d.duration_ms} ms`),
        h('dt', {}, 'Next attempt'),
        h('dd', {}, d.next_attempt_at ?? '—'),
      ),
      h('h4', {}, 'Signed headers of the last attempt'),
      json(d.request_headers, 'Signed headers'),
      h('h4', {}, 'Body'),
      json(d.payload, 'Body'),
      ...rawLink(`/webhooks/deliveries/${d.id}`),
      h('button', { type: 'button', onclick: () => redeliver(d.id) }, 'Redeliver'),
    )
  })
}

async function redeliver(id) {
  await attempt(async () => {
    const d = await api('POST', `/webhooks/deliveries/${id}/redeliver`)
    say(`Delivery ${id} sent again as delivery ${d.id}`)
    await refresh()
  })
}

const opener = (label, fn) => h('button', { type: 'button', class: 'link', onclick: fn }, label)

export async function refresh() {
  if (!root) return
  await attempt(async () => {
    const status = filters.jobStatus === 'quarantined' ? 'failed' : filters.jobStatus
    const [jobs, deliveries] = await Promise.all([
      api('GET', `/jobs${query({ status, limit: 50 })}`),
      api('GET', `/webhooks/deliveries${query({ status: filters.deliveryStatus, limit: 50 })}`),
    ])
    const shownJobs = filters.jobStatus === 'quarantined' ? jobs.jobs.filter(quarantined) : jobs.jobs
    root
      .querySelector('#jobs')
      .replaceChildren(
        table(
          `Jobs (${shownJobs.length} of ${jobs.pagination.total})`,
          ['Id', 'Kind', 'Account', 'Status', 'Attempts', 'Runs at', 'Last error'],
          shownJobs,
          (j) => [
            opener(String(j.id), () => openJob(j.id)),
            j.kind,
            String(j.account_id ?? '—'),
            badge(quarantined(j) ? 'quarantined' : j.status),
            `${j.attempts}/${j.max_attempts}`,
            j.run_at,
            j.last_error ?? '—',
          ],
        ),
      )
    root
      .querySelector('#deliveries')
      .replaceChildren(
        table(
          `Webhook deliveries (${deliveries.pagination.total})`,
          ['Id', 'Event', 'Account', 'Status', 'Attempts', 'Answer', 'Last error'],
          deliveries.deliveries,
          (d) => [
            opener(String(d.id), () => openDelivery(d.id)),
            d.event_type,
            String(d.account_id),
            badge(d.status),
            String(d.attempts),
            d.response_status === null ? '—' : badge(d.response_status),
            d.last_error ?? '—',
          ],
        ),
      )
  })
}

const statusSelect = (name, options) =>
  h(
    'select',
    {
      name,
      onchange: (e) => {
        filters[name] = e.target.value
        refresh()
      },
    },
    h('option', { value: '' }, 'all'),
    options.map((o) => h('option', { value: o }, o)),
  )

export function mount(section) {
  root = section
  section.replaceChildren(
    h('h2', { id: 'work-title' }, 'Jobs & webhooks'),
    h(
      'form',
      { class: 'filters', onsubmit: (e) => e.preventDefault() },
      field('Job status', statusSelect('jobStatus', ['queued', 'running', 'failed', 'quarantined', 'done'])),
      field('Delivery status', statusSelect('deliveryStatus', ['pending', 'sending', 'succeeded', 'failed'])),
      h('button', { type: 'button', onclick: () => refresh() }, 'Reload'),
      h(
        'button',
        {
          type: 'button',
          onclick: () =>
            attempt(async () => {
              const r = await api('POST', '/jobs/run')
              say(`${r.jobs_run} due jobs ran`)
              await refresh()
            }),
        },
        'Run due jobs',
      ),
      h(
        'button',
        {
          type: 'button',
          onclick: () =>
            attempt(async () => {
              const r = await api('POST', '/sandbox/webhooks/flush', { all: true })
              say(`${r.attempts} delivery attempts ran`)
              await refresh()
            }),
        },
        'Flush webhooks',
      ),
    ),
    h(
      'div',
      { class: 'split' },
      h('div', {}, h('div', { id: 'jobs' }), h('div', { id: 'deliveries' })),
      h('section', { id: 'work-detail', class: 'detail', hidden: true, 'aria-label': 'The job or delivery opened' }),
    ),
  )
  return refresh()
}

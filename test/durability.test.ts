import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, processDatabase, request } from './helpers/app.js'
import { spawnServer } from './helpers/process.js'
import { eventually } from './helpers/wait.js'

const KEY = 'durabilityDemoKey0000000001'
const ZONE = 'demo-shop.nl'

// Every write the API acknowledged is still there after the process is killed without warning.
forEachDialect((dialect) => {
  describe(`acknowledged writes survive SIGKILL (${dialect})`, () => {
    it('keeps every acknowledged DNS write of a stream interrupted by SIGKILL', async () => {
      const place = await processDatabase(dialect)
      const env = { ...place.env, HOSTAPI_PORT: '0', HOSTAPI_DNS_PORT: '0', HOSTAPI_DEMO_KEY: KEY, HOSTAPI_JOBS: '0' }
      const first = spawnServer(env)
      try {
        const [, url] = await first.waitFor(/^hostapi listening on (https:\/\/\S+)/)
        const origin = url.replace(/\/api\/v2$/, '')
        const acknowledged: string[] = []
        let stop = false
        // Four writers keep requests in flight while the process is killed.
        const writer = async (w: number) => {
          for (let i = 0; !stop; i++) {
            const name = `w${w}-${i}`
            try {
              const r = await request(origin, 'PATCH', `/api/v2/domains/${ZONE}/dns`, {
                key: KEY,
                body: { record: { type: 'TXT', name, value: `value-${name}`, ttl: 300 } },
              })
              if (r.status === 200) acknowledged.push(name)
              else assert.fail(`write ${name}: ${r.status} ${r.text}`)
            } catch (err) {
              if (!stop) throw err
            }
          }
        }
        const writers = [0, 1, 2, 3].map(writer)
        await eventually(() => acknowledged.length >= 40, { what: '40 writes acknowledged', intervalMs: 5 })
        first.child.kill('SIGKILL')
        stop = true
        await Promise.allSettled(writers)
        assert.equal((await first.exited).signal, 'SIGKILL')

        const second = spawnServer(env)
        try {
          const [, url2] = await second.waitFor(/^hostapi listening on (https:\/\/\S+)/)
          const r = await request(url2.replace(/\/api\/v2$/, ''), 'GET', `/api/v2/domains/${ZONE}/dns`, { key: KEY })
          assert.equal(r.status, 200)
          const stored = new Set(
            (r.body.data.records as { type: string; name: string; value: string }[])
              .filter((x) => x.type === 'TXT')
              .map((x) => `${x.name}=${x.value}`),
          )
          const missing = acknowledged.filter((n) => !stored.has(`${n}.${ZONE}.=value-${n}`))
          assert.deepEqual(missing, [], `${missing.length} of ${acknowledged.length} acknowledged writes lost`)
        } finally {
          second.child.kill('SIGTERM')
          await second.exited
        }
      } finally {
        first.child.kill('SIGKILL')
        await place.remove()
      }
    })
  })
})

import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../src/clock.js'
import type { BuiltinHypervisor } from '../src/drivers/hypervisor/builtin.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeVps } from './helpers/fixtures/vps.js'
import { fingerprintOf, sshKey } from './helpers/admin.js'

// Backups, SSH keys, the firewall and floating IPs of VPS.
forEachDialect((dialect) => {
  describe(`VPS over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    const clock = new ManualClock()
    const drain = () => t.ctx.jobs.drain()
    const hv = () => t.ctx.drivers.hypervisor as BuiltinHypervisor
    const refOf = async (id: number) =>
      (await t.ctx.db.selectFrom('vps').select('instance_ref').where('id', '=', id).executeTakeFirstOrThrow())
        .instance_ref
    const req = (method: string, path: string, body?: unknown, key = a.key) => t.request(method, path, { key, body })
    const bad = (text: string) => ({ status: 400, status_description: text })

    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_SIM_SPEED: '1000000' }, clock })
      a = await t.account('VPS Owner')
      b = await t.account('Other Tenant')
    })
    after(() => t.close())

    describe('backups', () => {
      it('lists backups in `details` (no `data`) with both date_internal forms', async () => {
        const id = await makeVps(t, a, { settle: true })
        const empty = await req('GET', `/vps/${id}/backups`)
        assert.deepEqual(empty.body, {
          status: 200,
          status_description: 'Request successful',
          details: { backups: [], count: 0 },
        })
        const task = await req('POST', `/vps/${id}/backups`)
        assert.equal(task.body.data.task.action, 'backup')
        await drain()
        clock.advance(2 * 86_400_000)
        const r = await req('GET', `/vps/${id}/backups`)
        assert.equal(r.status, 200)
        assert.deepEqual(Object.keys(r.body).sort(), ['details', 'status', 'status_description'])
        const { backups, count } = r.body.details
        assert.equal(count, backups.length)
        const manual = backups.filter((x: { type: string }) => x.type === 'manual')
        const inc = backups.filter((x: { type: string }) => x.type === 'incremental')
        assert.equal(manual.length, 1)
        assert.ok(inc.length >= 1)
        assert.match(manual[0].date_internal, /^\d{10}$/)
        for (const x of inc) assert.match(x.date_internal, /^\d{8}$/)
        for (const x of backups) {
          assert.deepEqual(Object.keys(x).sort(), ['date', 'date_internal', 'key', 'size', 'type'])
          assert.match(x.date, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/)
          assert.ok(Number.isInteger(x.key))
          assert.equal(typeof x.size, 'number')
        }
        assert.equal(inc[0].date.slice(11), '03:00')
        assert.equal(inc[0].date_internal, inc[0].date.slice(0, 10).replace(/-/g, ''))
      })

      it("answers the spec's errors on list backups", async () => {
        const other = await makeVps(t, b)
        assert.deepEqual((await req('GET', '/vps/notanumber/backups')).body, bad('No valid VPS ID provided'))
        assert.deepEqual((await req('GET', '/vps/424242424/backups')).body, bad('No access to this VPS'))
        assert.deepEqual((await req('GET', `/vps/${other}/backups`)).body, bad('No access to this VPS'))
        const noVps = await t.subUser(a, { account: true })
        const mine = await makeVps(t, a)
        assert.deepEqual(
          (await req('GET', `/vps/${mine}/backups`, undefined, noVps.key)).body,
          bad('No access to this VPS'),
        )
        const bearer = await t.request('GET', `/vps/${mine}/backups`, { headers: { authorization: `Bearer ${a.key}` } })
        assert.equal(bearer.status, 200)
      })

      it('restores a backup by key (and type), refusing unknown keys', async () => {
        const id = await makeVps(t, a, { settle: true })
        await req('POST', `/vps/${id}/backups`)
        await drain()
        const [backup] = (await req('GET', `/vps/${id}/backups`)).body.details.backups
        assert.deepEqual(
          (await req('PATCH', `/vps/${id}/backups`, { key: backup.key, type: 'incremental' })).body,
          bad('Backup not found: use a key from GET /vps/{id}/backups'),
        )
        assert.deepEqual(
          (await req('PATCH', `/vps/${id}/backups`, { key: 99999999 })).body,
          bad('Backup not found: use a key from GET /vps/{id}/backups'),
        )
        const r = await req('PATCH', `/vps/${id}/backups`, { key: backup.key, type: 'manual' })
        assert.equal(r.body.data.task.action, 'restore')
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'restoring')
        await drain()
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'running')
      })
    })

    describe('SSH keys', () => {
      it('adds ed25519, ecdsa and rsa ≥ 2048 keys with their SHA256 fingerprint, lists and deletes them', async () => {
        for (const [type, bits] of [
          ['ed25519', 256],
          ['ec', 256],
          ['rsa', 2048],
        ] as const) {
          const line = sshKey(type, bits)
          const r = await req('POST', '/vps/ssh-keys', { name: `key-${type}`, public_key: line })
          assert.equal(r.status, 200, JSON.stringify(r.body))
          assert.equal(r.body.data.fingerprint, fingerprintOf(line))
          assert.equal(r.body.data.type, type === 'ec' ? 'ecdsa' : type)
          assert.equal(r.body.data.bits, bits)
        }
        const list = (await req('GET', '/vps/ssh-keys')).body.data.ssh_keys
        assert.ok(list.length >= 3)
        const del = await req('DELETE', `/vps/ssh-keys/${list[0].id}`)
        assert.deepEqual(del.body, { status: 200, status_description: 'SSH key deleted' })
        assert.deepEqual((await req('DELETE', `/vps/ssh-keys/${list[0].id}`)).body, {
          status: 404,
          status_description: 'SSH key not found',
        })
        assert.ok(
          !(await req('GET', '/vps/ssh-keys', undefined, b.key)).body.data.ssh_keys.some(
            (k: { id: number }) => k.id === list[1].id,
          ),
        )
      })

      it('refuses short RSA keys, garbage, unsupported types and duplicates', async () => {
        assert.deepEqual(
          (await req('POST', '/vps/ssh-keys', { name: 'short', public_key: sshKey('rsa', 1024) })).body,
          bad('RSA keys must have at least 2048 bits'),
        )
        assert.deepEqual(
          (await req('POST', '/vps/ssh-keys', { name: '   ', public_key: sshKey('ed25519') })).body,
          bad('Missing name'),
        )
        const garbage = bad(
          'Invalid public_key: expected one line in OpenSSH format, such as "ssh-ed25519 AAAA… comment"',
        )
        for (const k of ['not a key', 'ssh-ed25519 AAAA', `${sshKey('ed25519')}\n${sshKey('ed25519')}`]) {
          assert.deepEqual((await req('POST', '/vps/ssh-keys', { name: 'x', public_key: k })).body, garbage, k)
        }
        const dsa =
          'ssh-dss AAAAB3NzaC1kc3MAAACBAP1/U4EddRIpUt9KnC7s5Of2EbdSPO9EAMMeP4C2USZpRV1AIlH7WT2NWPq/xfW6MPbLm1Vs14E7gB00b/JmYLdrmVClpJ+f6AR7ECLCT7up1/63xhv4O1fnxqimFQ8E+4P208UewwI1VBNaFpEy9nXzrith1yrv8iIDGZ3RSAHHAAAAFQCXYFCPFSMLzLKSuYKi64QL8Fgc9QAAAIEA9+GghdabPd7LvKtcNrhXuXmUr7v6OuqC+VdMCz0HgmdRWVeOutRZT+ZxBxCBgLRJFnEj6EwoFhO3zwkyjMim4TwWeotUfI0o4KOuHiuzpnWRbqN/C/ohNWLx+2J6ASQ7zKTxvqhRkImog9/hWuWfBpKLZl6Ae1UlZAFMO/7PSSoAAACBAPHnAQpzYCPYj4uAzVUAc/7lSuwFNGPTHtDbvF+ZHm3oA/Hq6vy4CcGpjaz1fzLkbfoj0WQIvLGoQE2tKQaBZTDSqNzVV2H8s1q5a2+YklbyYc0D+0vaWlGNy9QSNvp9X47OPLOUZqRJUGDwCzGdLs2eOyDN/2Q9XN1wJ9Rm7BLm dsa'
        assert.deepEqual(
          (await req('POST', '/vps/ssh-keys', { name: 'dsa', public_key: dsa })).body,
          bad('Unsupported key type: use ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa'),
        )
        const line = sshKey('ed25519', 256, 'first')
        assert.equal((await req('POST', '/vps/ssh-keys', { name: 'once', public_key: line })).status, 200)
        // The same key with another comment is the same key.
        assert.deepEqual(
          (await req('POST', '/vps/ssh-keys', { name: 'twice', public_key: line.replace(/ first$/, ' second') })).body,
          bad('This SSH key has been added already'),
        )
        // Another account may add the same key.
        assert.equal((await req('POST', '/vps/ssh-keys', { name: 'theirs', public_key: line }, b.key)).status, 200)
      })
    })

    describe('firewall', () => {
      it('starts disabled and empty, replaces the rules normalised, at most 50', async () => {
        const id = await makeVps(t, a, { settle: true })
        assert.deepEqual((await req('GET', `/vps/${id}/firewall`)).body.data, { enabled: false, rules: [] })
        const r = await req('PUT', `/vps/${id}/firewall`, {
          enabled: true,
          rules: [
            { direction: 'in', protocol: 'tcp', port: '22', source: '203.0.113.7', description: 'ssh' },
            { protocol: 'tcp', port: '8000-8100', source: '2001:db8::/32' },
            { protocol: 'icmp' },
          ],
        })
        assert.equal(r.status, 200, JSON.stringify(r.body))
        const expected = {
          enabled: true,
          rules: [
            { direction: 'in', protocol: 'tcp', port: '22', source: '203.0.113.7/32', description: 'ssh' },
            { direction: 'in', protocol: 'tcp', port: '8000-8100', source: '2001:db8::/32', description: '' },
            { direction: 'in', protocol: 'icmp', port: null, source: '0.0.0.0/0', description: '' },
          ],
        }
        assert.deepEqual(r.body.data, expected)
        assert.deepEqual((await req('GET', `/vps/${id}/firewall`)).body.data, expected)
        assert.deepEqual((await hv().inspect(await refOf(id)))!.firewall, expected)
        const many = Array.from({ length: 51 }, (_, i) => ({ protocol: 'tcp', port: String(1000 + i) }))
        assert.deepEqual(
          (await req('PUT', `/vps/${id}/firewall`, { enabled: true, rules: many })).body,
          bad('A firewall can have at most 50 rules'),
        )
        assert.equal((await req('PUT', `/vps/${id}/firewall`, { enabled: true, rules: many.slice(0, 50) })).status, 200)
        const cases: Array<[object, string]> = [
          [
            { protocol: 'tcp', port: '70000' },
            'Invalid firewall rule 1: port must be a port (1-65535) or a range such as 8000-8100',
          ],
          [
            { protocol: 'tcp', port: '90-80' },
            'Invalid firewall rule 1: port must be a port (1-65535) or a range such as 8000-8100',
          ],
          [{ protocol: 'icmp', port: '1' }, 'Invalid firewall rule 1: icmp rules have no port'],
          [
            { protocol: 'tcp', source: '10.0.0.300/8' },
            'Invalid firewall rule 1: source must be an IP address or a CIDR range',
          ],
        ]
        for (const [rule, text] of cases)
          assert.deepEqual((await req('PUT', `/vps/${id}/firewall`, { enabled: true, rules: [rule] })).body, bad(text))
        assert.equal(
          (await req('PUT', `/vps/${id}/firewall`, { enabled: true, rules: [{ protocol: 'gre' }] })).status,
          400,
        )
      })
    })

    describe('floating IPs', () => {
      it('reserves, attaches, detaches and deletes; an attached IP cannot be deleted', async () => {
        const id = await makeVps(t, a, { settle: true, location: 'ams' })
        const far = await makeVps(t, a, { settle: true, location: 'rtm' })
        const r = await req('POST', '/vps/floating-ips', { location: 'ams' })
        assert.equal(r.status, 200)
        const f = r.body.data
        assert.equal(f.vps_id, null)
        assert.match(f.ip, /^\d+\.\d+\.\d+\.\d+$/)
        assert.deepEqual(
          (await req('PUT', `/vps/floating-ips/${f.id}/attach`, { vps_id: far })).body,
          bad('The floating IP and the VPS must be in the same location'),
        )
        const at = await req('PUT', `/vps/floating-ips/${f.id}/attach`, { vps_id: id })
        assert.equal(at.body.data.vps_id, id)
        const ips = (await req('GET', `/vps/${id}`)).body.data.ips
        assert.deepEqual(ips[2], { ip: f.ip, version: 4, type: 'floating', reverse: ips[0].reverse })
        assert.equal(
          (await req('PUT', `/vps/${id}`, { 'ip-addresses': [{ ip: f.ip, reverse: 'float.example.com' }] })).status,
          200,
        )
        assert.deepEqual(
          (await req('DELETE', `/vps/floating-ips/${f.id}`)).body,
          bad('The floating IP is attached to a VPS; detach it first'),
        )
        const other = await makeVps(t, a, { settle: true, location: 'ams' })
        assert.deepEqual(
          (await req('PUT', `/vps/floating-ips/${f.id}/attach`, { vps_id: other })).body,
          bad('The floating IP is attached to a VPS; detach it first'),
        )
        assert.equal((await req('PUT', `/vps/floating-ips/${f.id}/detach`)).body.data.vps_id, null)
        assert.deepEqual(
          (await req('PUT', `/vps/floating-ips/${f.id}/detach`)).body,
          bad('The floating IP is not attached to a VPS'),
        )
        assert.deepEqual((await req('DELETE', `/vps/floating-ips/${f.id}`)).body, {
          status: 200,
          status_description: 'Floating IP deleted',
        })
        assert.deepEqual((await req('DELETE', `/vps/floating-ips/${f.id}`)).body, {
          status: 404,
          status_description: 'Floating IP not found',
        })
        assert.deepEqual(
          (await req('POST', '/vps/floating-ips', { location: 'mars' })).body,
          bad('Invalid location: one of ams, rtm'),
        )
        const theirs = (await req('POST', '/vps/floating-ips', { location: 'ams' }, b.key)).body.data
        assert.deepEqual((await req('PUT', `/vps/floating-ips/${theirs.id}/attach`, { vps_id: id })).body, {
          status: 404,
          status_description: 'Floating IP not found',
        })
        const mine = (await req('POST', '/vps/floating-ips', { location: 'ams' })).body.data
        const bVps = await makeVps(t, b, { location: 'ams' })
        assert.deepEqual(
          (await req('PUT', `/vps/floating-ips/${mine.id}/attach`, { vps_id: bVps })).body,
          bad('No access to this VPS'),
        )
        assert.ok(
          (await req('GET', '/vps/floating-ips')).body.data.floating_ips.some((x: { id: number }) => x.id === mine.id),
        )
      })
    })
  })
})

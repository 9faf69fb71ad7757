import { after, before, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { describeWithLxd, startLxd, type Lxd } from './helpers/lxd.js'

const run = promisify(execFile)
const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl lxd-flow'

/** What was measured, printed at the end (the figures of the LXD driver's note). */
const timings: Record<string, number> = {}

// The VPS API on a real LXD: every step goes through the HTTPS API and the task jobs, and is checked on LXD itself
// and from inside the instance. One database dialect: the driver does not depend on it.
describeWithLxd('VPS on a real LXD', () => {
  let lxd: Lxd
  let t: TestApp
  let a: TestAccount
  let id: number
  let ref: string
  // "Outside": a network namespace joined to the host by a veth pair; floating IPs listen on the host's end.
  const tag = randomBytes(3).toString('hex')
  const ns = `hns${tag}`
  const hostEnd = `10.213.${randomBytes(1)[0]}.1`
  const outsideAddr = hostEnd.replace(/\.1$/, '.2')
  const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key: a.key, body })
  const drain = () => t.ctx.jobs.drain()
  const inside = (command: string, input?: string) => lxd.exec(ref, command, input)
  const lxdState = async () => (await lxd.lxc('list', ref, '--format', 'csv', '-c', 's')).trim()

  // hostapi reaches LXD through a socket that relays to it: closing the relay makes LXD unreachable.
  const relayDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-lxd-relay-'))
  const relayPath = path.join(relayDir, 'lxd.socket')
  const conns = new Set<net.Socket>()
  const relay = net.createServer((c) => {
    const up = net.connect(lxd.socket)
    conns.add(c).add(up)
    c.pipe(up).pipe(c)
    const end = () => {
      c.destroy()
      up.destroy()
      conns.delete(c)
      conns.delete(up)
    }
    c.on('error', end).on('close', end)
    up.on('error', end).on('close', end)
  })
  const relayUp = () => new Promise<void>((resolve) => relay.listen(relayPath, resolve))
  const relayDown = () =>
    new Promise<void>((resolve) => {
      relay.close(() => resolve())
      for (const c of conns) c.destroy()
    })

  before(async () => {
    lxd = await startLxd()
    await relayUp()
    await run('ip', ['netns', 'add', ns])
    await run('ip', ['link', 'add', `hv${tag}a`, 'type', 'veth', 'peer', 'name', `hv${tag}b`, 'netns', ns])
    await run('ip', ['addr', 'add', `${hostEnd}/30`, 'dev', `hv${tag}a`])
    await run('ip', ['link', 'set', `hv${tag}a`, 'up'])
    await run('ip', ['-n', ns, 'addr', 'add', `${outsideAddr}/30`, 'dev', `hv${tag}b`])
    await run('ip', ['-n', ns, 'link', 'set', `hv${tag}b`, 'up'])
    await run('ip', ['-n', ns, 'link', 'set', 'lo', 'up'])
    // The accounts' networks are routed (not NATed) from outside: the namespace reaches instances by their address.
    await run('ip', ['-n', ns, 'route', 'add', lxd.tenantSubnets, 'via', hostEnd])
    t = await startTestApp('sqlite', {
      env: {
        ...lxd.env,
        HOSTAPI_LXD_URL: relayPath,
        HOSTAPI_LXD_FLOATING_IPS: hostEnd,
        HOSTAPI_LXD_PRIVATE_NETWORK_PREFIX: `v${tag.slice(0, 5)}`,
      },
    })
    a = await t.account('LXD Owner')
  })
  after(async () => {
    await t?.close()
    await lxd?.close()
    if (relay.listening) await relayDown()
    fs.rmSync(relayDir, { recursive: true, force: true })
    await run('ip', ['link', 'delete', `hv${tag}a`]).catch(() => undefined)
    await run('ip', ['netns', 'delete', ns]).catch(() => undefined)
    console.log(`LXD flow timings (ms): ${JSON.stringify(timings)}`)
  })

  it('orders a VPS: an LXD instance from the image with the plan limits, its hostname and SSH keys inside', async () => {
    const key = await req('POST', '/vps/ssh-keys', { name: 'laptop', public_key: ED25519 })
    assert.equal(key.status, 200, JSON.stringify(key.body))
    const started = Date.now()
    const order = await req('POST', '/vps/order', {
      product_id: 'vps-s',
      image_id: 'busybox-1',
      hostname: 'web1.example.com',
      ssh_key_ids: [key.body.data.id],
    })
    assert.equal(order.status, 200, JSON.stringify(order.body))
    await drain()
    const v = (await req('GET', '/vps')).body.data.vps.find(
      (x: { hostname: string }) => x.hostname === 'web1.example.com',
    )
    assert.equal(v?.status, 'running', JSON.stringify(v))
    timings.orderToRunning = Date.now() - started
    id = v.id
    ref = (await t.ctx.db.selectFrom('vps').select('instance_ref').where('id', '=', id).executeTakeFirstOrThrow())
      .instance_ref
    assert.equal(await lxdState(), 'RUNNING')
    assert.equal((await lxd.lxc('config', 'get', ref, 'limits.cpu')).trim(), '1')
    assert.equal((await lxd.lxc('config', 'get', ref, 'limits.memory')).trim(), '2048MiB')
    assert.match(await lxd.lxc('config', 'device', 'get', ref, 'root', 'size'), /^40GiB/)
    assert.equal((await inside('hostname')).trim(), 'web1.example.com')
    assert.equal((await inside('cat /etc/hostname')).trim(), 'web1.example.com')
    assert.equal((await inside('cat /root/.ssh/authorized_keys')).trim(), ED25519)
    // The address hostapi shows is the instance's own.
    assert.ok((await inside('ip -4 addr show eth0')).includes(`inet ${v.ipv4}/`))
  })

  /** Orders a VPS for `key`'s account and runs its install; its id, LXD name and address. */
  const order = async (key: string, hostname: string) => {
    const r = await t.request('POST', '/vps/order', {
      key,
      body: { product_id: 'vps-s', image_id: 'busybox-1', hostname },
    })
    assert.equal(r.status, 200, JSON.stringify(r.body))
    await drain()
    const row = await t.ctx.db
      .selectFrom('vps')
      .select(['id', 'instance_ref', 'ipv4', 'status'])
      .where('hostname', '=', hostname)
      .executeTakeFirstOrThrow()
    assert.equal(row.status, 'running')
    return row
  }
  /** The body an instance gets from http://<ip>/ (busybox nc, 2 s), or null when nothing answers. */
  const fetchFrom = (instance: string, ip: string) =>
    lxd.exec(instance, `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 ${ip} 80`).then(
      (out) => out.split('\r\n\r\n')[1]?.trim() || null,
      () => null,
    )

  it('keeps accounts apart: each on its own network, unable to reach the other; one account reaches itself', async () => {
    const b = await t.account('LXD Other')
    const mine = await order(a.key, 'web2.example.com')
    const theirs = await order(b.key, 'other.example.com')
    const netOf = async (name: string) => (await lxd.lxc('config', 'device', 'get', name, 'eth0', 'network')).trim()
    assert.equal(await netOf(mine.instance_ref), await netOf(ref))
    assert.notEqual(await netOf(theirs.instance_ref), await netOf(ref))
    // Names on LXD carry no customer data.
    for (const n of [await netOf(ref), await netOf(theirs.instance_ref)]) assert.match(n, /^hta[0-9a-f]{10}$/)
    // The page is written at boot, when the hostname may still be the image's.
    assert.match((await fetchFrom(mine.instance_ref, mine.ipv4)) ?? '', /^hello from /)
    assert.match((await fetchFrom(ref, mine.ipv4)) ?? '', /^hello from /, 'same account: reachable')
    assert.match((await fetchFrom(theirs.instance_ref, theirs.ipv4)) ?? '', /^hello from /)
    assert.equal(await fetchFrom(ref, theirs.ipv4), null, 'another account: unreachable')
    assert.equal(await fetchFrom(theirs.instance_ref, mine.ipv4), null, 'and back')
    // Not even when the other account's firewall is off (it is, by default) or allows the port from anywhere.
    const fw = await t.request('PUT', `/vps/${theirs.id}/firewall`, {
      key: b.key,
      body: { enabled: true, rules: [{ protocol: 'tcp', port: '80', source: '0.0.0.0/0' }] },
    })
    assert.equal(fw.status, 200, JSON.stringify(fw.body))
    assert.equal(await fetchFrom(ref, theirs.ipv4), null)
  })

  it('resets the root password: the hash in the guest matches the password the API returned', async () => {
    const r = await req('POST', `/vps/${id}/reset-password`)
    assert.equal(r.status, 200, JSON.stringify(r.body))
    const password = r.body.data.root_password as string
    const hash = (await inside('awk -F: \'$1 == "root" { print $2 }\' /etc/shadow')).trim()
    const salt = hash.split('$')[2]
    assert.match(hash, /^\$6\$/)
    assert.equal((await inside(`mkpasswd -m sha512 -S ${salt}`, `${password}\n`)).trim(), hash)
    assert.notEqual((await inside(`mkpasswd -m sha512 -S ${salt}`, 'not-the-password\n')).trim(), hash)
  })

  it('changes the hostname inside the guest', async () => {
    const r = await req('PUT', `/vps/${id}/hostname`, { hostname: 'renamed.example.com' })
    assert.equal(r.status, 200, JSON.stringify(r.body))
    assert.equal((await inside('hostname')).trim(), 'renamed.example.com')
    assert.equal((await inside('cat /etc/hostname')).trim(), 'renamed.example.com')
  })

  it('stops, starts and restarts through tasks that end when LXD has done it', async () => {
    assert.equal((await req('POST', `/vps/${id}/stop`)).status, 200)
    await drain()
    assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'stopped')
    assert.equal(await lxdState(), 'STOPPED')
    const started = Date.now()
    assert.equal((await req('POST', `/vps/${id}/start`)).status, 200)
    await drain()
    assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'running')
    timings.startToRunning = Date.now() - started
    assert.equal(await lxdState(), 'RUNNING')
    const boot = (await inside('cat /proc/1/stat')).split(' ')[21]
    assert.equal((await req('POST', `/vps/${id}/restart`)).status, 200)
    await drain()
    assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'running')
    assert.notEqual((await inside('cat /proc/1/stat')).split(' ')[21], boot, 'init started again')
    assert.equal((await req('POST', `/vps/${id}/poweroff`)).status, 200)
    await drain()
    assert.equal(await lxdState(), 'STOPPED')
    assert.equal((await req('POST', `/vps/${id}/start`)).status, 200)
    await drain()
    assert.equal(await lxdState(), 'RUNNING')
  })

  it('backs up to a snapshot and restores it: a file written after the backup is gone', async () => {
    await inside('echo kept > /root/before.txt')
    const started = Date.now()
    const b = await req('POST', `/vps/${id}/backups`)
    assert.equal(b.status, 200, JSON.stringify(b.body))
    await drain()
    const list = (await req('GET', `/vps/${id}/backups`)).body.details
    const manual = list.backups.find((x: { type: string }) => x.type === 'manual')
    assert.ok(manual, JSON.stringify(list))
    timings.backupToRestorable = Date.now() - started
    assert.match(await lxd.lxc('info', ref), /manual-\d+/)
    await inside('echo lost > /root/after.txt')
    const r = await req('PATCH', `/vps/${id}/backups`, { key: manual.key, type: manual.type })
    assert.equal(r.status, 200, JSON.stringify(r.body))
    await drain()
    assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'running')
    assert.equal((await inside('cat /root/before.txt')).trim(), 'kept')
    assert.equal((await inside('ls /root')).includes('after.txt'), false)
  })

  it('routes a floating IP to the instance: a request from outside its network reaches it', async () => {
    const fip = await req('POST', '/vps/floating-ips', { location: 'ams' })
    assert.equal(fip.status, 200, JSON.stringify(fip.body))
    assert.equal(fip.body.data.ip, hostEnd)
    // A request from the namespace (node's fetch, run inside it), as a client outside the instance's network.
    const script = `fetch('http://${hostEnd}/', { signal: AbortSignal.timeout(3000) }).then((r) => r.text()).then((t) => process.stdout.write(t))`
    const get = () =>
      run('ip', ['netns', 'exec', ns, process.execPath, '-e', script]).then(
        (r) => r.stdout.trim(),
        () => null,
      )
    assert.equal(await get(), null, 'nothing answers before the address is routed')
    const at = await req('PUT', `/vps/floating-ips/${fip.body.data.id}/attach`, { vps_id: id })
    assert.equal(at.status, 200, JSON.stringify(at.body))
    assert.equal(await get(), 'hello from renamed.example.com')
    assert.equal((await req('PUT', `/vps/floating-ips/${fip.body.data.id}/detach`)).status, 200)
    assert.equal(await get(), null)
  })

  it('enforces the firewall on traffic from outside: a port outside the rules refused, one a rule allows open', async () => {
    const script = (ip: string) =>
      `fetch('http://${ip}/', { signal: AbortSignal.timeout(3000) }).then((r) => r.text()).then((t) => process.stdout.write(t))`
    const v = await t.ctx.db.selectFrom('vps').select('ipv4').where('id', '=', id).executeTakeFirstOrThrow()
    const get = () =>
      run('ip', ['netns', 'exec', ns, process.execPath, '-e', script(v.ipv4)]).then(
        (r) => r.stdout.trim(),
        () => null,
      )
    const firewall = (rules: unknown[]) => req('PUT', `/vps/${id}/firewall`, { enabled: true, rules })
    assert.equal(await get(), 'hello from renamed.example.com', 'no firewall: open')
    assert.equal((await firewall([{ protocol: 'tcp', port: '22', source: '0.0.0.0/0' }])).status, 200)
    assert.equal(await get(), null, 'port 80 is outside the rules')
    assert.equal((await firewall([{ protocol: 'tcp', port: '80', source: `${outsideAddr}/32` }])).status, 200)
    assert.equal(await get(), 'hello from renamed.example.com', 'a rule allows port 80 from the outside address')
    assert.equal((await firewall([{ protocol: 'tcp', port: '80', source: '192.0.2.0/24' }])).status, 200)
    assert.equal(await get(), null, 'the rule is for another source')
    assert.equal((await req('PUT', `/vps/${id}/firewall`, { enabled: false, rules: [] })).status, 200)
    assert.equal(await get(), 'hello from renamed.example.com', 'firewall off: open again')
  })

  it('keeps a task while LXD is unreachable: requests answer at once, the task retries and ends when LXD is back', async () => {
    await relayDown()
    const started = Date.now()
    const stop = await req('POST', `/vps/${id}/stop`)
    assert.equal(stop.status, 200, JSON.stringify(stop.body))
    assert.equal((await req('GET', `/vps/${id}`)).status, 200)
    assert.equal((await req('GET', '/vps')).status, 200)
    const answered = Date.now() - started
    assert.ok(answered < 3000, `answered in ${answered} ms`)
    timings.requestWhileLxdDown = answered
    const taskJob = t.ctx.services.vps.tasks.taskJob
    // Attempt after attempt (each backoff cut short) while LXD is away: the task waits, with the reason on its job.
    for (let i = 0; i < 5; i++) {
      await t.ctx.jobs.release(taskJob)
      await drain()
    }
    const task = await t.ctx.db
      .selectFrom('vps_tasks')
      .select(['status', 'job_id'])
      .where('vps_id', '=', id)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
    assert.ok(['queued', 'running'].includes(task.status), task.status)
    const job = await t.ctx.jobs.get(task.job_id!)
    assert.equal(job?.status, 'queued')
    assert.match(job?.last_error ?? '', /ENOENT|ECONNREFUSED|connect/)
    assert.equal(await lxdState(), 'RUNNING')
    await relayUp()
    await t.ctx.jobs.release(taskJob)
    await drain()
    assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'stopped')
    assert.equal(await lxdState(), 'STOPPED')
    assert.equal((await req('POST', `/vps/${id}/start`)).status, 200)
    await drain()
    assert.equal(await lxdState(), 'RUNNING')
  })

  it('reinstalls from another image under the same name, keeping the hostname', async () => {
    const r = await req('POST', `/vps/${id}/reinstall`, { image_id: 'busybox-2' })
    assert.equal(r.status, 200, JSON.stringify(r.body))
    await drain()
    const d = (await req('GET', `/vps/${id}`)).body.data
    assert.equal(d.status, 'running')
    assert.equal(d.image.slug, 'busybox-2')
    assert.equal((await lxd.lxc('config', 'get', ref, 'image.description')).trim(), 'Busybox 2')
    assert.equal((await inside('hostname')).trim(), 'renamed.example.com')
  })
})

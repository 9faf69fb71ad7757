import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ApiError } from '../src/errors.js'
import { firstFreeAddress, isHostname, planSubnet } from '../src/modules/vps/network-rules.js'
import { dmyhm } from '../src/modules/vps/vps.common.js'
import { addMonths, periodEnd } from '../src/modules/vps/vps-lifecycle.service.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeVps } from './helpers/fixtures/vps.js'

const refused = (fn: () => unknown, text: string) =>
  assert.throws(fn, (e: unknown) => e instanceof ApiError && e.status === 400 && e.message === text)

describe('billing periods', () => {
  it('adds months on the same day, or the last day of a shorter month', () => {
    assert.equal(addMonths(new Date('2026-01-31T10:00:00Z'), 1).toISOString(), '2026-02-28T10:00:00.000Z')
    assert.equal(addMonths(new Date('2028-01-31T10:00:00Z'), 1).toISOString(), '2028-02-29T10:00:00.000Z')
    assert.equal(addMonths(new Date('2026-03-15T00:00:00Z'), 12).toISOString(), '2027-03-15T00:00:00.000Z')
  })
  it('ends a cancelled VPS at the first period end after now', () => {
    const created = new Date('2026-01-31T10:00:00Z')
    assert.equal(periodEnd(created, 1, new Date('2026-02-01T00:00:00Z')).toISOString(), '2026-02-28T10:00:00.000Z')
    assert.equal(periodEnd(created, 1, new Date('2026-03-30T00:00:00Z')).toISOString(), '2026-03-31T10:00:00.000Z')
    assert.equal(periodEnd(created, 12, new Date('2026-06-01T00:00:00Z')).toISOString(), '2027-01-31T10:00:00.000Z')
  })
})

describe('subnet maths', () => {
  it('fills gateway and DHCP range of a /24 from the CIDR', () => {
    assert.deepEqual(planSubnet({ cidr: '10.10.0.0/24' }, []), {
      cidr: '10.10.0.0/24',
      gateway: '10.10.0.1',
      dhcpStart: '10.10.0.2',
      dhcpEnd: '10.10.0.254',
    })
  })
  it('fills a /28 and a /30', () => {
    assert.deepEqual(planSubnet({ cidr: '192.168.5.16/28' }, []), {
      cidr: '192.168.5.16/28',
      gateway: '192.168.5.17',
      dhcpStart: '192.168.5.18',
      dhcpEnd: '192.168.5.30',
    })
    assert.deepEqual(planSubnet({ cidr: '172.16.0.4/30' }, []), {
      cidr: '172.16.0.4/30',
      gateway: '172.16.0.5',
      dhcpStart: '172.16.0.6',
      dhcpEnd: '172.16.0.6',
    })
  })
  it('fills odd-sized blocks (/23, /27, /21) across octet boundaries', () => {
    assert.deepEqual(planSubnet({ cidr: '10.1.2.0/23' }, []), {
      cidr: '10.1.2.0/23',
      gateway: '10.1.2.1',
      dhcpStart: '10.1.2.2',
      dhcpEnd: '10.1.3.254',
    })
    assert.deepEqual(planSubnet({ cidr: '10.9.8.224/27' }, []), {
      cidr: '10.9.8.224/27',
      gateway: '10.9.8.225',
      dhcpStart: '10.9.8.226',
      dhcpEnd: '10.9.8.254',
    })
    assert.deepEqual(planSubnet({ cidr: '172.31.248.0/21' }, []), {
      cidr: '172.31.248.0/21',
      gateway: '172.31.248.1',
      dhcpStart: '172.31.248.2',
      dhcpEnd: '172.31.255.254',
    })
  })
  it('keeps what is given and leaves the gateway out of a derived range', () => {
    assert.deepEqual(planSubnet({ cidr: '10.0.0.0/24', gateway: '10.0.0.254' }, []), {
      cidr: '10.0.0.0/24',
      gateway: '10.0.0.254',
      dhcpStart: '10.0.0.1',
      dhcpEnd: '10.0.0.253',
    })
    assert.deepEqual(planSubnet({ cidr: '10.0.0.0/24', dhcp_start: '10.0.0.100', dhcp_end: '10.0.0.200' }, []), {
      cidr: '10.0.0.0/24',
      gateway: '10.0.0.1',
      dhcpStart: '10.0.0.100',
      dhcpEnd: '10.0.0.200',
    })
  })
  it('accepts every RFC 1918 block and nothing public', () => {
    for (const cidr of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '172.31.255.252/30'])
      assert.equal(planSubnet({ cidr }, []).cidr, cidr)
    const text = 'Invalid subnet: only private ranges can be used (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)'
    for (const cidr of [
      '8.8.8.0/24',
      '172.32.0.0/24',
      '172.0.0.0/8',
      '192.169.0.0/24',
      '100.64.0.0/24',
      '169.254.0.0/24',
    ])
      refused(() => planSubnet({ cidr }, []), text)
  })
  it("refuses overlaps with the VPC's other subnets", () => {
    const existing = [{ name: 'backend', cidr: '10.10.0.0/24' }]
    refused(
      () => planSubnet({ cidr: '10.10.0.128/25' }, existing),
      'Invalid subnet: it overlaps subnet backend (10.10.0.0/24) of this VPC',
    )
    refused(
      () => planSubnet({ cidr: '10.0.0.0/8' }, existing),
      'Invalid subnet: it overlaps subnet backend (10.10.0.0/24) of this VPC',
    )
    assert.equal(planSubnet({ cidr: '10.10.1.0/24' }, existing).cidr, '10.10.1.0/24')
  })
  it('refuses a gateway or DHCP bound outside the usable addresses, a range out of order, a gateway inside the range', () => {
    refused(
      () => planSubnet({ cidr: '10.0.0.0/24', gateway: '10.0.1.1' }, []),
      'Invalid subnet: gateway must be a usable address inside 10.0.0.0/24 (10.0.0.1 to 10.0.0.254)',
    )
    refused(
      () => planSubnet({ cidr: '10.0.0.0/24', gateway: '10.0.0.0' }, []),
      'Invalid subnet: gateway must be a usable address inside 10.0.0.0/24 (10.0.0.1 to 10.0.0.254)',
    )
    refused(
      () => planSubnet({ cidr: '10.0.0.0/24', gateway: '10.0.0.255' }, []),
      'Invalid subnet: gateway must be a usable address inside 10.0.0.0/24 (10.0.0.1 to 10.0.0.254)',
    )
    refused(
      () => planSubnet({ cidr: '10.0.0.0/24', dhcp_start: '10.0.0.10', dhcp_end: '10.0.1.10' }, []),
      'Invalid subnet: dhcp_end must be a usable address inside 10.0.0.0/24 (10.0.0.1 to 10.0.0.254)',
    )
    refused(
      () => planSubnet({ cidr: '10.0.0.0/24', dhcp_start: '10.0.0.200', dhcp_end: '10.0.0.100' }, []),
      'Invalid subnet: dhcp_start must not come after dhcp_end',
    )
    refused(
      () =>
        planSubnet({ cidr: '10.0.0.0/24', gateway: '10.0.0.50', dhcp_start: '10.0.0.10', dhcp_end: '10.0.0.100' }, []),
      'Invalid subnet: the gateway must not be inside the DHCP range',
    )
    refused(
      () => planSubnet({ cidr: '10.0.0.0/24', gateway: 'ten' }, []),
      'Invalid subnet: gateway must be an IPv4 address',
    )
  })
  it('refuses malformed CIDRs, host bits set and prefixes without room', () => {
    for (const cidr of ['10.0.0.0', '10.0.0/24', '10.0.0.0/33', 'fd00::/64', '010.0.0.0/24', 'abc']) {
      refused(() => planSubnet({ cidr }, []), 'Invalid subnet: cidr must be an IPv4 block such as 10.0.0.0/24')
    }
    refused(
      () => planSubnet({ cidr: '10.0.0.5/24' }, []),
      'Invalid subnet: cidr must start at the network address (10.0.0.0/24)',
    )
    refused(() => planSubnet({ cidr: '10.0.0.0/31' }, []), 'Invalid subnet: the prefix length must be from /8 to /30')
    refused(() => planSubnet({ cidr: '10.0.0.0/7' }, []), 'Invalid subnet: the prefix length must be from /8 to /30')
  })
  it('hands out the lowest free address of the range, never the gateway', () => {
    const plan = { gateway: '10.0.0.1', dhcp_start: '10.0.0.2', dhcp_end: '10.0.0.4' }
    assert.equal(firstFreeAddress(plan, []), '10.0.0.2')
    assert.equal(firstFreeAddress(plan, ['10.0.0.2']), '10.0.0.3')
    assert.equal(firstFreeAddress(plan, ['10.0.0.2', '10.0.0.3', '10.0.0.4']), null)
    assert.equal(
      firstFreeAddress({ gateway: '10.0.0.3', dhcp_start: '10.0.0.2', dhcp_end: '10.0.0.4' }, ['10.0.0.2']),
      '10.0.0.4',
    )
  })
  it('checks hostnames as RFC 1123 does and formats subnet dates DD-MM-YYYY HH:MM', () => {
    for (const h of ['a', 'web-1.example.com', '1host.example', `${'a'.repeat(63)}.com`]) assert.ok(isHostname(h), h)
    for (const h of ['', '-a', 'a-', 'a..b', 'a_b', `${'a'.repeat(64)}.com`, `${'a.'.repeat(127)}ab`])
      assert.ok(!isHostname(h), h)
    assert.equal(dmyhm(new Date('2026-03-04T05:06:07Z')), '04-03-2026 05:06')
  })
})

forEachDialect((dialect) => {
  describe(`VPC and subnets over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    const req = (method: string, path: string, body?: unknown, key = a.key) => t.request(method, path, { key, body })
    const bad = (text: string) => ({ status: 400, status_description: text })
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_SIM_SPEED: '1000000' } })
      a = await t.account()
      b = await t.account()
    })
    after(() => t.close())

    it('creates one VPC per host per account, adds subnets with derived addresses, attaches VPS on that host only', async () => {
      const one = await makeVps(t, a, { host: 'ams-hv01', location: 'ams', settle: true })
      const two = await makeVps(t, a, { host: 'ams-hv01', location: 'ams', settle: true })
      const elsewhere = await makeVps(t, a, { host: 'ams-hv02', location: 'ams', settle: true })

      assert.deepEqual((await req('GET', `/vps/${one}/vpc`)).body, {
        status: 404,
        status_description: "There is no VPC on this VPS's host",
      })
      assert.deepEqual((await req('POST', `/vps/${one}/vpc/subnets`, { cidr: '10.0.0.0/24' })).body, {
        status: 404,
        status_description: "There is no VPC on this VPS's host",
      })
      const vpc = await req('POST', `/vps/${one}/vpc`, { name: 'private' })
      assert.equal(vpc.status, 200)
      assert.deepEqual(
        { ...vpc.body.data, id: 0, created: '' },
        { id: 0, name: 'private', host: 'ams-hv01', created: '', subnets: [] },
      )
      assert.deepEqual(
        (await req('POST', `/vps/${two}/vpc`, { name: 'again' })).body,
        bad("A VPC exists already on this VPS's host"),
      )
      // Another account may have its own VPC on the same host.
      const theirs = await makeVps(t, b, { host: 'ams-hv01', location: 'ams' })
      assert.equal((await req('POST', `/vps/${theirs}/vpc`, { name: 'theirs' }, b.key)).status, 200)

      const s = await req('POST', `/vps/${one}/vpc/subnets`, { name: 'backend', cidr: '10.10.0.0/24' })
      assert.equal(s.status, 200)
      assert.equal(s.body.status_description, 'Subnet created')
      const sub = s.body.data
      assert.deepEqual(
        { ...sub, id: 0, created: '' },
        {
          id: 0,
          name: 'backend',
          cidr: '10.10.0.0/24',
          gateway: '10.10.0.1',
          dhcp_start: '10.10.0.2',
          dhcp_end: '10.10.0.254',
          created: '',
        },
      )
      assert.match(sub.created, /^\d{2}-\d{2}-\d{4} \d{2}:\d{2}$/)
      const small = await req('POST', `/vps/${one}/vpc/subnets`, { cidr: '192.168.7.0/28', gateway: '192.168.7.14' })
      assert.deepEqual(
        { ...small.body.data, id: 0, created: '' },
        {
          id: 0,
          name: '192.168.7.0/28',
          cidr: '192.168.7.0/28',
          gateway: '192.168.7.14',
          dhcp_start: '192.168.7.1',
          dhcp_end: '192.168.7.13',
          created: '',
        },
      )
      assert.deepEqual(
        (await req('POST', `/vps/${two}/vpc/subnets`, { cidr: '10.10.0.64/26' })).body,
        bad('Invalid subnet: it overlaps subnet backend (10.10.0.0/24) of this VPC'),
      )
      assert.deepEqual(
        (await req('POST', `/vps/${one}/vpc/subnets`, { cidr: '1.2.3.0/24' })).body,
        bad('Invalid subnet: only private ranges can be used (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)'),
      )
      assert.deepEqual(
        (await req('POST', `/vps/${one}/vpc/subnets`, { cidr: '10.20.0.0/24', gateway: '10.21.0.1' })).body,
        bad('Invalid subnet: gateway must be a usable address inside 10.20.0.0/24 (10.20.0.1 to 10.20.0.254)'),
      )
      assert.deepEqual(
        (
          await req('POST', `/vps/${one}/vpc/subnets`, {
            cidr: '10.20.0.0/24',
            dhcp_start: '10.20.0.9',
            dhcp_end: '10.20.0.3',
          })
        ).body,
        bad('Invalid subnet: dhcp_start must not come after dhcp_end'),
      )
      assert.equal((await req('POST', `/vps/${one}/vpc/subnets`, {})).body.status_description, 'Missing cidr')
      // The VPS must be on the VPC's host.
      assert.deepEqual(
        (await req('POST', `/vps/${elsewhere}/vpc/subnets`, { cidr: '10.30.0.0/24' })).body,
        bad('The VPS is not on the same host as the VPC'),
      )

      const got = (await req('GET', `/vps/${two}/vpc`)).body.data
      assert.deepEqual(
        got.subnets.map((x: { cidr: string }) => x.cidr),
        ['10.10.0.0/24', '192.168.7.0/28'],
      )

      const at1 = await req('PUT', `/vps/${one}/vpc/subnets/${sub.id}`)
      assert.deepEqual(at1.body.data, {
        vps_id: one,
        subnet_id: sub.id,
        address: '10.10.0.2',
        cidr: '10.10.0.0/24',
        gateway: '10.10.0.1',
      })
      const at2 = await req('PUT', `/vps/${two}/vpc/subnets/${sub.id}`)
      assert.equal(at2.body.data.address, '10.10.0.3')
      assert.equal(
        (await req('PUT', `/vps/${one}/vpc/subnets/${sub.id}`)).body.data.address,
        '10.10.0.2',
        'attaching again answers the same address',
      )
      assert.deepEqual((await req('GET', `/vps/${one}`)).body.data.private_networks, [
        { subnet_id: sub.id, name: 'backend', cidr: '10.10.0.0/24', address: '10.10.0.2' },
      ])
      const inst = await t.ctx.db
        .selectFrom('vps')
        .select('instance_ref')
        .where('id', '=', two)
        .executeTakeFirstOrThrow()
      const nets = JSON.parse(
        (
          await t.ctx.db
            .selectFrom('hv_instances')
            .select('networks')
            .where('id', '=', Number(inst.instance_ref))
            .executeTakeFirstOrThrow()
        ).networks,
      )
      assert.deepEqual(nets, [{ networkId: sub.id, cidr: '10.10.0.0/24', gateway: '10.10.0.1', address: '10.10.0.3' }])
      assert.deepEqual(
        (await req('PUT', `/vps/${elsewhere}/vpc/subnets/${sub.id}`)).body,
        bad('The VPS is not on the same host as the VPC'),
      )
      assert.deepEqual((await req('PUT', `/vps/${one}/vpc/subnets/999999`)).body, {
        status: 404,
        status_description: 'Subnet not found',
      })
      assert.deepEqual((await req('PUT', `/vps/${theirs}/vpc/subnets/${sub.id}`, undefined, b.key)).body, {
        status: 404,
        status_description: 'Subnet not found',
      })
    })

    it('runs out of DHCP addresses in a /30', async () => {
      const one = await makeVps(t, a, { host: 'rtm-hv01', location: 'rtm', settle: true })
      const two = await makeVps(t, a, { host: 'rtm-hv01', location: 'rtm', settle: true })
      await req('POST', `/vps/${one}/vpc`, { name: 'tiny' })
      const sub = (await req('POST', `/vps/${one}/vpc/subnets`, { cidr: '172.20.0.0/30' })).body.data
      assert.equal((await req('PUT', `/vps/${one}/vpc/subnets/${sub.id}`)).body.data.address, '172.20.0.2')
      assert.deepEqual(
        (await req('PUT', `/vps/${two}/vpc/subnets/${sub.id}`)).body,
        bad("No free address left in the subnet's DHCP range"),
      )
    })
  })
})

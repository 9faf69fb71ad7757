import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import ipaddr from 'ipaddr.js'
import fc from 'fast-check'
import { freeSubnet, ipv6Of, poolExcept, tenantDigest } from './lxd-tenant.js'

const toInt = (ip: string) => ip.split('.').reduce((a, o) => a * 256 + Number(o), 0)
const toIp = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.')
const within = (ip: string, cidr: string) => ipaddr.parse(ip).match(ipaddr.parseCIDR(cidr))

/** A pool (`a.b.0.0/bits`) and a subnet prefix inside it with at most 2^10 subnets. */
const poolArb = fc
  .tuple(
    fc.integer({ min: 1, max: 223 }),
    fc.nat(255),
    fc.integer({ min: 8, max: 26 }),
    fc.integer({ min: 1, max: 10 }),
  )
  .map(([a, b, bits, extra]) => {
    const size = 2 ** (32 - bits)
    const base = toInt(`${a}.${b}.0.0`) - (toInt(`${a}.${b}.0.0`) % size)
    return { pool: `${toIp(base)}/${bits}`, base, size, bits, prefix: Math.min(30, bits + extra) }
  })

describe('LXD account networks', () => {
  it('cuts a free subnet from the pool: inside it, aligned, overlapping no used range; null when full', () => {
    fc.assert(
      fc.property(
        poolArb,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 8, max: 32 })), { maxLength: 12 }),
        (p, raw) => {
          const used = raw.map(([o, bits]) => `${toIp(p.base + (o % p.size))}/${bits}`)
          const got = freeSubnet(p.pool, p.prefix, used)
          const size = 2 ** (32 - p.prefix)
          const overlaps = (n: number) =>
            used.some((u) => {
              const [ip, b] = u.split('/')
              const us = 2 ** (32 - Number(b))
              const ub = toInt(ip) - (toInt(ip) % us)
              return n < ub + us && ub < n + size
            })
          const firstFree = Array.from({ length: p.size / size }, (_, i) => p.base + i * size).find((n) => !overlaps(n))
          if (firstFree === undefined) return assert.equal(got, null)
          assert.equal(got, `${toIp(firstFree + 1)}/${p.prefix}`)
        },
      ),
    )
  })

  it('covers the rest of the pool with the other accounts’ ranges: every address but the own subnet, once', () => {
    fc.assert(
      fc.property(poolArb, fc.nat(), fc.nat(), (p, pick, probe) => {
        const size = 2 ** (32 - p.prefix)
        const own = `${toIp(p.base + (pick % (p.size / size)) * size)}/${p.prefix}`
        const others = poolExcept(p.pool, own)
        const ip = toIp(p.base + (probe % p.size))
        const hits = others.filter((c) => within(ip, c)).length
        assert.equal(hits, within(ip, own) ? 0 : 1, `${ip} in ${others.join(',')}`)
      }),
    )
  })

  it('gives the n-th subnet the n-th IPv6 /64 of one /48, outside every other account’s range', () => {
    fc.assert(
      fc.property(poolArb, fc.nat(), fc.nat(), (p, pick, other) => {
        const size = 2 ** (32 - p.prefix)
        const count = Math.min(p.size / size, 65_536)
        const subnetOf = (n: number) => `${toIp(p.base + (n % count) * size + 1)}/${p.prefix}`
        const mine = ipv6Of(p.pool, subnetOf(pick))
        const theirs = ipv6Of(p.pool, subnetOf(other))
        const gw = (x: { gateway: string }) => x.gateway.split('/')[0]
        assert.equal(
          mine.others.some((c) => within(gw(mine), c)),
          false,
        )
        assert.equal(
          mine.others.some((c) => within(gw(theirs), c)),
          pick % count !== other % count,
        )
      }),
    )
  })

  it('names an account on LXD by a digest only', () => {
    assert.match(tenantDigest('42'), /^[0-9a-f]{64}$/)
    assert.notEqual(tenantDigest('42'), tenantDigest('43'))
  })
})

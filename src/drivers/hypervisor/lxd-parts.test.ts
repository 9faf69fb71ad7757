import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { backupsOf, freeIpv4, imagesOf, ipv6For, setupScript, snapshotName } from './lxd-parts.js'

const toInt = (ip: string) => ip.split('.').reduce((a, o) => a * 256 + Number(o), 0)

describe('LXD driver parts', () => {
  it('hands out an address inside the subnet: not the network, broadcast, gateway or a used one', () => {
    fc.assert(
      fc.property(
        fc.tuple(fc.integer({ min: 1, max: 223 }), fc.nat(255), fc.nat(255), fc.nat(255)),
        fc.integer({ min: 22, max: 30 }),
        fc.array(fc.nat(1023), { maxLength: 40 }),
        ([a, b, c, d], bits, usedOffsets) => {
          const size = 2 ** (32 - bits)
          const base = toInt(`${a}.${b}.${c}.${d}`) - (toInt(`${a}.${b}.${c}.${d}`) % size)
          const ipOf = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.')
          const gw = ipOf(base + 1)
          const used = new Set(usedOffsets.map((o) => ipOf(base + (o % size))))
          const ip = freeIpv4(`${gw}/${bits}`, used)
          const free = Array.from({ length: size - 3 }, (_, i) => ipOf(base + 2 + i)).filter((x) => !used.has(x))
          if (free.length === 0) return assert.equal(ip, null)
          assert.equal(ip, free[0])
          const n = toInt(ip!)
          assert.ok(n > base + 1 && n < base + size - 1)
        },
      ),
    )
  })

  it('derives a distinct IPv6 address in the bridge /64 for each IPv4 address of a /16', () => {
    fc.assert(
      fc.property(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255), (c1, d1, c2, d2) => {
        const a = ipv6For('fd42:1:2:3::1/64', `10.0.${c1}.${d1}`)
        const b = ipv6For('fd42:1:2:3::1/64', `10.0.${c2}.${d2}`)
        assert.ok(a.startsWith('fd42:1:2:3::'))
        assert.equal(a === b, c1 === c2 && d1 === d2)
      }),
    )
    assert.equal(ipv6For(undefined, '10.0.0.2'), '')
    assert.equal(ipv6For('none', '10.0.0.2'), '')
  })

  it('reads back the backup key of every snapshot name it makes, and ignores other snapshots', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: 1_000_000_000, max: 2_147_483_647 }),
          fc
            .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
            .map((d) => Number(d.toISOString().slice(0, 10).replaceAll('-', ''))),
        ),
        fc.string(),
        (key, other) => {
          const list = backupsOf([
            { name: snapshotName(key), created_at: '2026-11-27T00:00:00Z', size: 5_000_000 },
            { name: `x${other}`, created_at: '2026-11-27T00:00:00Z' },
          ])
          assert.equal(list.length, 1)
          assert.equal(list[0].key, key)
          assert.equal(list[0].type, key >= 1e9 ? 'manual' : 'incremental')
          assert.equal(list[0].sizeMb, 5)
        },
      ),
    )
  })

  it('maps image aliases to slugs with the declared id, or one derived from the fingerprint', () => {
    const images = imagesOf([
      {
        fingerprint: 'ab'.repeat(32),
        aliases: [{ name: 'debian-12' }],
        properties: { 'hostapi.id': '1', os: 'debian', release: '12', description: 'Debian 12' },
      },
      { fingerprint: '0123456789'.repeat(6), aliases: [{ name: 'custom' }], properties: { 'hostapi.id': 'x' } },
      { fingerprint: 'ff'.repeat(32), aliases: [], properties: {} },
    ])
    assert.deepEqual(images, [
      { id: 1, slug: 'debian-12', name: 'Debian 12', family: 'debian', version: '12' },
      { id: 0x0123456, slug: 'custom', name: 'custom', family: 'linux', version: '0' },
    ])
  })

  it('passes hostname, password and keys to the guest in the environment, never in the command', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.array(fc.string()), (hostname, password, keys) => {
        const run = setupScript({ hostname, password, sshKeys: keys })
        assert.equal(run.environment.HV_HOSTNAME, hostname)
        assert.equal(run.environment.HV_PASSWORD, password)
        const script = run.command.join(' ')
        for (const secret of [password, ...keys].filter((s) => s.length > 8)) assert.ok(!script.includes(secret))
      }),
    )
  })
})

import fc from 'fast-check'

// Generators of addresses and host names for the property tests of the address and webhook URL checks.

const byte = fc.integer({ min: 0, max: 255 })

/** IPv4 addresses in loopback, private, carrier-grade NAT, link-local and `this network` ranges. */
export const privateV4 = fc
  .tuple(fc.constantFrom('0', '10', '127', '100.64', '192.168', '169.254', '172.16', '172.31'), byte, byte, byte)
  .map(([head, ...rest]) => [...head.split('.'), ...rest].slice(0, 4).join('.'))

/** An IPv4 address as the two 16-bit groups of IPv6 text (`127.0.0.1` → `7f00`, `1`), `invert` flipping its bits. */
function groups(v4: string, invert = false): [string, string] {
  const n = v4.split('.').reduce((acc, o) => acc * 256 + Number(o), 0)
  const v = invert ? 0xffffffff - n : n
  return [Math.floor(v / 65536).toString(16), (v % 65536).toString(16)]
}

/** Every IPv6 form that embeds the IPv4 address `v4`, by name. */
export function embeddingForms(v4: string): Record<string, string> {
  const [hi, lo] = groups(v4)
  const [thi, tlo] = groups(v4, true)
  return {
    compatible: `::${v4}`,
    compatibleHex: `::${hi}:${lo}`,
    compatibleLong: `0:0:0:0:0:0:${v4}`,
    mapped: `::ffff:${v4}`,
    mappedHex: `::ffff:${hi}:${lo}`,
    translated: `::ffff:0:${v4}`,
    nat64: `64:ff9b::${v4}`,
    nat64Hex: `64:ff9b::${hi}:${lo}`,
    nat64Local: `64:ff9b:1::${v4}`,
    sixToFour: `2002:${hi}:${lo}::1`,
    teredoClient: `2001:0:4136:e378:8000:63bf:${thi}:${tlo}`,
    teredoServer: `2001:0:${hi}:${lo}:0:0:0:1`,
  }
}

/** `localhost` or a name under it, each letter in either case, with zero to three trailing dots. */
export const localhostName = fc
  .tuple(
    fc.array(fc.stringMatching(/^[a-z0-9]{1,10}$/), { maxLength: 2 }),
    fc.array(fc.boolean(), { minLength: 9, maxLength: 9 }),
    fc.integer({ min: 0, max: 3 }),
  )
  .map(([labels, upper, dots]) => {
    const name = [...'localhost'].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')
    return [...labels, name].join('.') + '.'.repeat(dots)
  })

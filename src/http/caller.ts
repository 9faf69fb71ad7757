import ipaddr from 'ipaddr.js'
import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyRequest } from 'fastify'
import { memoized } from '../lib/memo.js'

/** The caller's address as people write it (an IPv4-mapped IPv6 address becomes plain IPv4). */
export function callerIp(req: FastifyRequest): string {
  return writtenIp(req.ip)
}

/** An address as people write it (what callerIp gives for a request from it). */
export const writtenIp = memoized(writtenForm, 10_000)

function writtenForm(ip: string): string {
  try {
    const addr = ipaddr.parse(ip)
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress())
      return (addr as ipaddr.IPv6).toIPv4Address().toString()
    return addr.toString()
  } catch {
    return ip
  }
}

/** The API key presented in `API-Key` (any case) or `Authorization: Bearer`. */
export function presentedKey(req: { headers: IncomingHttpHeaders }): string | undefined {
  const header = req.headers['api-key']
  const key = Array.isArray(header) ? header[0] : header
  if (key) return key.trim()
  return bearerToken(req.headers.authorization)
}

/** The token of an `Authorization: Bearer <token>` header (scheme in any case); undefined for any other header. */
export function bearerToken(header: string | undefined): string | undefined {
  return header && /^bearer\s+/i.test(header) ? header.replace(/^bearer\s+/i, '').trim() : undefined
}

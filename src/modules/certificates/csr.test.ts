import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { ApiError } from '../../errors.js'
import { generateCsr, parseCsr } from './csr.js'

const opensslCsr = (subj: string, san?: string) =>
  execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', '/dev/null',
    '-subj', subj, ...(san ? ['-addext', `subjectAltName=${san}`] : [])], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })

const rejects = async (csr: string, text: string) => {
  await assert.rejects(parseCsr(csr), (err: unknown) => err instanceof ApiError && err.status === 400 && err.message === text)
}

describe('CSR generation and reading', () => {
  it('generates a 4096-bit RSA request that reads back with its name', async () => {
    const g = await generateCsr({ common_name: 'WWW.Example.com', organization: 'Ex', email: 'a@example.com', country: 'nl', state: 'NH', locality: 'Adam', bits: 4096 })
    const parsed = await parseCsr(g.csr)
    assert.equal(parsed.key, 'RSA 4096')
    assert.deepEqual(parsed.names, ['www.example.com'])
    const text = execFileSync('openssl', ['req', '-noout', '-text'], { input: g.csr, encoding: 'utf8' })
    assert.match(text, /Public-Key: \(4096 bit\)/)
    assert.match(text, /C ?= ?NL/)
  })

  it('reads the common name first, then the other SANs once each, in lower case', async () => {
    const parsed = await parseCsr(opensslCsr('/CN=Example.com', 'DNS:www.example.com,DNS:EXAMPLE.com,DNS:*.example.com'))
    assert.deepEqual(parsed.names, ['example.com', 'www.example.com', '*.example.com'])
    assert.equal(parsed.commonName, 'example.com')
    assert.equal(parsed.key, 'EC P-256')
  })

  it('accepts the NEW CERTIFICATE REQUEST label and CRLF line ends', async () => {
    const csr = opensslCsr('/CN=www.example.com').replace(/CERTIFICATE REQUEST/g, 'NEW CERTIFICATE REQUEST').replace(/\n/g, '\r\n')
    assert.deepEqual((await parseCsr(csr)).names, ['www.example.com'])
  })

  it('refuses IP addresses, names that are not domains and a request without any name', async () => {
    await rejects(opensslCsr('/CN=www.example.com', 'IP:192.0.2.1'), 'Invalid CSR: only DNS names can be certified, not ip 192.0.2.1')
    await rejects(opensslCsr('/CN=www.example.com', 'DNS:under_score.example.com'), 'Invalid CSR: "under_score.example.com" is not a domain name')
    await rejects(opensslCsr('/O=Example'), 'Invalid CSR: it names no domain (set the common name or a subjectAltName)')
    await rejects(opensslCsr('/CN=com'), 'Invalid CSR: the common name "com" is not a domain name')
    await rejects(opensslCsr('/CN=*.*.example.com'), 'Invalid CSR: the common name "*.*.example.com" is not a domain name')
  })
})

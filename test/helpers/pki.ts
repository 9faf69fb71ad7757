import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execFileSync, spawnSync } from 'node:child_process'

/**
 * Runs `openssl verify -purpose <purpose> -CAfile root -untrusted intermediate leaf` and returns its output; throws
 * with openssl's own message when the chain does not verify.
 */
export function opensslVerify(
  root: string,
  intermediate: string,
  leaf: string,
  purpose: string | null = 'sslserver',
): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-pki-'))
  try {
    const file = (name: string, text: string) => {
      const p = path.join(dir, name)
      fs.writeFileSync(p, text)
      return p
    }
    const args = [
      'verify',
      ...(purpose ? ['-purpose', purpose] : []),
      '-CAfile',
      file('root.pem', root),
      '-untrusted',
      file('int.pem', intermediate),
      file('leaf.pem', leaf),
    ]
    const r = spawnSync('openssl', args, { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`openssl verify failed: ${r.stdout}${r.stderr}`)
    return r.stdout.trim()
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** `openssl <args>` with `input` on stdin; stdout. */
export function openssl(args: string[], input: string): string {
  return execFileSync('openssl', args, { input, encoding: 'utf8' })
}

/** A CSR made by openssl for `cn` and `sans` with a new `key` (an oracle independent of hostapi's own generator), PEM. */
export function opensslCsr(cn: string, sans: string[] = [], key = 'ec'): string {
  const args = ['req', '-new', '-newkey', key, ...(key === 'ec' ? ['-pkeyopt', 'ec_paramgen_curve:prime256v1'] : [])]
  args.push('-nodes', '-keyout', '/dev/null', '-subj', `/CN=${cn}`)
  if (sans.length) args.push('-addext', `subjectAltName=${sans.map((s) => `DNS:${s}`).join(',')}`)
  return openssl(args, '')
}

/** The DNS names of a certificate's subjectAltName and its subject CN, as openssl reads them. */
export function certificateNames(pem: string): { cn: string | null; sans: string[] } {
  const subject = openssl(['x509', '-noout', '-subject', '-nameopt', 'RFC2253'], pem)
  const cn = /CN=([^,\n]+)/.exec(subject)?.[1] ?? null
  const ext = openssl(['x509', '-noout', '-ext', 'subjectAltName'], pem)
  const sans = [...ext.matchAll(/DNS:([^,\s]+)/g)].map((m) => m[1])
  return { cn, sans }
}

/** The DNS names a CSR asks for, as openssl reads them. */
export function csrNames(pem: string): { cn: string | null; sans: string[] } {
  const text = openssl(['req', '-noout', '-text', '-nameopt', 'RFC2253'], pem)
  const cn = /Subject:.*?CN=([^,\n]+)/.exec(text)?.[1] ?? null
  const sans = [...text.matchAll(/DNS:([^,\s]+)/g)].map((m) => m[1])
  return { cn, sans }
}

/** True when `privateKey` is the key of the certificate or CSR `pem` (their public keys are equal). */
export function keyMatches(privateKey: string, pem: string, kind: 'x509' | 'req'): boolean {
  const fromKey = openssl(['pkey', '-pubout'], privateKey)
  const fromCert =
    kind === 'x509' ? openssl(['x509', '-noout', '-pubkey'], pem) : openssl(['req', '-noout', '-pubkey'], pem)
  return fromKey.trim() === fromCert.trim()
}

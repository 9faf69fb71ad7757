// The lines `hostapi serve` says once it serves (one process, or the primary of several workers).

/** Says one of the start's lines: its text, and its facts as fields of the JSON line. */
export type Say = (text: string, facts: Record<string, unknown>) => void

/** What the start's lines say: where the server listens, its certificate, demo mode's keys. */
export interface Announcement {
  url: string
  httpUrl: string | null
  adminUrl: string
  tlsSource: string
  sandbox: boolean
  demoKey: string | null
  demoSubUserKey: string | null
  demoAdminToken: string | null
}

/** The start's lines: where it listens, the certificate, the admin API, and demo mode's keys. */
export function announce(server: Announcement, say: Say) {
  say(`hostapi listening on ${server.url}`, { url: server.url })
  if (server.httpUrl) say(`plain HTTP listener on ${server.httpUrl}`, { url: server.httpUrl })
  const docs = `${server.url.replace(/\/api\/v2$/, '')}/docs`
  say(`API docs: ${docs}`, { url: docs })
  say(`TLS certificate: ${server.tlsSource}`, { certificate: server.tlsSource })
  const sandbox = server.sandbox
  say(`Admin API: ${server.adminUrl} (token: npx hostapi admin token create)${sandbox ? ', sandbox mode on' : ''}`, {
    url: server.adminUrl,
    sandbox,
  })
  if (server.demoKey) say(`Demo API key: ${server.demoKey}`, { key: server.demoKey })
  if (server.demoSubUserKey)
    say(`Demo sub-user API key (domains only): ${server.demoSubUserKey}`, { key: server.demoSubUserKey })
  if (server.demoAdminToken) say(`Demo admin token: ${server.demoAdminToken}`, { token: server.demoAdminToken })
}

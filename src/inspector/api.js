// The admin API of this origin, with the admin token the user entered (kept in sessionStorage: this tab only).
export const ADMIN = '/admin/v1'
const KEY = 'hostapi-admin-token'

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
}

/** An admin API error: its status and the envelope's text. */
export class ApiError extends Error {
  constructor(status, text, body) {
    super(text)
    this.status = status
    this.body = body
  }
}

/** Calls the admin API; resolves to the envelope's `data` (or the whole envelope with `whole`). */
export async function api(method, path, body, whole = false) {
  const headers = { authorization: `Bearer ${token.get() ?? ''}`, accept: 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(ADMIN + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  let json = null
  try {
    json = JSON.parse(text)
  } catch {
    throw new ApiError(res.status, `${res.status}: ${text.slice(0, 200)}`, text)
  }
  if (!res.ok) {
    const detail = Array.isArray(json.errors) ? ` (${json.errors.map((e) => e.message ?? e).join('; ')})` : ''
    throw new ApiError(res.status, `${json.status ?? res.status} ${json.status_description ?? ''}${detail}`, json)
  }
  return whole ? json : json.data
}

/** A query string of the set values. */
export const query = (params) => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v))
  const s = q.toString()
  return s ? `?${s}` : ''
}

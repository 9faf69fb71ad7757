import { errors } from '../errors.js'
import { bareHost, isIpLiteral, isLocalhostName, isPublicAddress } from './public-address.js'

/** Which receivers the operator allows besides `https://` URLs of public hosts. */
export interface WebhookUrlRules {
  allowHttp: boolean
  allowPrivate: boolean
}

/** A customer's webhook URL as stored (without its fragment); a 400 for one that could never be delivered to. */
export function parseWebhookUrl(text: string, rules: WebhookUrlRules): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw errors.invalidWebhookUrl('not an absolute URL')
  }
  const { allowHttp, allowPrivate } = rules
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:'))
    throw errors.invalidWebhookUrl(allowHttp ? 'use https:// or http://' : 'use https://')
  if (url.username || url.password) throw errors.invalidWebhookUrl('credentials in the URL are not allowed')
  const host = bareHost(url.hostname)
  const local = isLocalhostName(host) || (isIpLiteral(host) && !isPublicAddress(host))
  if (local && !allowPrivate) throw errors.invalidWebhookUrl('the host is not a public address')
  url.hash = ''
  return url.toString()
}

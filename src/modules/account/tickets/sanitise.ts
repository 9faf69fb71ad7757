import type sanitizeHtml from 'sanitize-html'
import { lazyRequire } from '../../../lazy-require.js'

/** sanitize-html (with its HTML and CSS parsers) is loaded on the first message with markup. */
const sanitizer = lazyRequire<typeof sanitizeHtml>('sanitize-html')

/** The tags a ticket message keeps; every other tag is removed. */
export const ALLOWED_TAGS: readonly string[] = [
  'p',
  'br',
  'hr',
  'b',
  'strong',
  'i',
  'em',
  'u',
  's',
  'sub',
  'sup',
  'small',
  'span',
  'div',
  'a',
  'ul',
  'ol',
  'li',
  'blockquote',
  'pre',
  'code',
  'h1',
  'h2',
  'h3',
  'h4',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
]

/** The attributes a ticket message keeps, by tag. No style, class or event handler: only links keep an address. */
export const ALLOWED_ATTRIBUTES: Record<string, string[]> = {
  a: ['href', 'title', 'rel'],
  td: ['colspan', 'rowspan'],
  th: ['colspan', 'rowspan'],
}

const POLICY: sanitizeHtml.IOptions = {
  allowedTags: [...ALLOWED_TAGS],
  allowedAttributes: ALLOWED_ATTRIBUTES,
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  // Script and style contents are dropped with their tags, never shown as text.
  nonTextTags: [
    'script',
    'style',
    'textarea',
    'option',
    'noscript',
    'iframe',
    'object',
    'embed',
    'svg',
    'math',
    'template',
  ],
  transformTags: {
    a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, rel: 'noopener noreferrer nofollow' } }),
  },
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/**
 * A ticket message as safe HTML: no scripts, event handlers, styles, images or `javascript:`/`data:` links.
 * Text without markup keeps its line breaks.
 */
export function sanitiseMessage(input: string): string {
  const text = input.replace(/\r\n?/g, '\n').trim()
  if (!/<[a-zA-Z!/?]/.test(text)) return escapeHtml(text).replace(/\n/g, '<br />')
  return sanitizer()(text, POLICY).trim()
}

/** Sanitised HTML as plain text (for e-mail). */
export function htmlToText(html: string): string {
  const withBreaks = html.replace(/<br\s*\/?>/gi, '\n').replace(/<\/(p|div|li|h[1-4]|tr|blockquote|pre)>/gi, '\n')
  return sanitizer()(withBreaks, { allowedTags: [], allowedAttributes: {} })
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}

/** True when sanitised HTML shows no text at all. */
export const isBlank = (html: string): boolean =>
  htmlToText(html)
    .replace(/\u00a0/g, ' ')
    .trim() === ''

import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ALLOWED_ATTRIBUTES, ALLOWED_TAGS, htmlToText, isBlank, sanitiseMessage } from './sanitise.js'

const RUNS = { seed: 20261123, numRuns: 400 }

const allowedTags = new Set(ALLOWED_TAGS)

/** Pieces of HTML, hostile and broken, to build messages from. */
const piece = fc.oneof(
  fc.constantFrom(
    '<script>alert(1)</script>',
    '<img src=x onerror=alert(1)>',
    '<a href="javascript:alert(1)">x</a>',
    '<a href="jav&#x61;script:alert(1)">x</a>',
    '<a href=" javascript:x">y</a>',
    '<a href="data:text/html,<script>">d</a>',
    '<a href="//evil.example">p</a>',
    '<a href="https://ok.example" onclick="x">ok</a>',
    '<p style="background:url(javascript:x)">s</p>',
    '<svg><script>x</script></svg>',
    '<math><mi>x</mi></math>',
    '<iframe src=x></iframe>',
    '<!-- c -->',
    '<![CDATA[x]]>',
    '<?xml x?>',
    '<!DOCTYPE html>',
    '</p>',
    '<p',
    '<',
    '>',
    '&',
    '&amp;',
    '&#0;',
    '&#xD800;',
    '"',
    "'",
    '\0',
    '\ud800',
    '\udc00',
    '\r\n',
    '\n',
    '<div><div><div>',
    '<table><tr><td colspan=2 onmouseover=x>t</td></tr></table>',
    '<a title="a&quot;onmouseover=x">t</a>',
    '<style>*{}</style>',
    '<textarea><script>x</script></textarea>',
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
    '<b>bold</b>',
    '<br>',
    '<br/>',
    'é',
    '😀',
    '\u202e',
  ),
  fc.string({ unit: 'binary', maxLength: 20 }),
)
const message = fc.array(piece, { maxLength: 30 }).map((parts) => parts.join(''))

/** Every tag of sanitised output is allowed and carries only its allowed attributes; no script-ish address. */
function assertSafe(html: string) {
  for (const m of html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9]*)((?:"[^"]*"|'[^']*'|[^'">])*)>/g)) {
    const tag = m[1].toLowerCase()
    assert.ok(allowedTags.has(tag), `tag ${tag} in ${html}`)
    for (const a of m[2].matchAll(/([^\s=/"']+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?/g)) {
      assert.ok((ALLOWED_ATTRIBUTES[tag] ?? []).includes(a[1].toLowerCase()), `attribute ${a[1]} of ${tag} in ${html}`)
    }
  }
  for (const h of html.matchAll(/href="([^"]*)"/g)) assert.match(h[1], /^(https?:\/\/|mailto:)/i, `href ${h[1]}`)
}

describe('ticket message sanitiser (properties)', () => {
  it('turns any text into safe HTML, and that HTML into text', () => {
    fc.assert(
      fc.property(fc.oneof(message, fc.string({ unit: 'binary', maxLength: 200 })), (input) => {
        const html = sanitiseMessage(input)
        assert.equal(typeof html, 'string')
        assertSafe(html)
        assert.equal(typeof htmlToText(html), 'string')
        assert.equal(typeof isBlank(html), 'boolean')
        // Sanitising again changes nothing a reader would see as markup.
        assertSafe(sanitiseMessage(html))
      }),
      RUNS,
    )
  })

  it('keeps plain text as text, escaped, with its line breaks', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', ' ', '\n', '&', '"', '>', 'é', '1'), maxLength: 40 }),
        (text) => {
          const html = sanitiseMessage(text)
          assert.equal(htmlToText(html), htmlToText(sanitiseMessage(htmlToText(html))))
          assert.ok(!/<(?!br \/>)/.test(html), html)
        },
      ),
      RUNS,
    )
  })

  it('finishes on deeply nested and very long input', () => {
    const deep = `${'<div>'.repeat(20_000)}x${'</div>'.repeat(20_000)}`
    assert.equal(htmlToText(sanitiseMessage(deep)), 'x')
    const open = '<a href="'.repeat(20_000)
    assert.equal(typeof sanitiseMessage(open), 'string')
    const text = 'a&<'.repeat(100_000)
    assert.equal(typeof sanitiseMessage(text), 'string')
  })
})

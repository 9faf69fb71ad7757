// The PDF's standard fonts (Helvetica) encode WinAnsi only; anything else would print as garbage.
const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ')
const SPECIAL: Record<string, string> = {
  Ł: 'L',
  ł: 'l',
  Đ: 'D',
  đ: 'd',
  Ħ: 'H',
  ħ: 'h',
  ı: 'i',
  Ŀ: 'L',
  ŀ: 'l',
  Ŧ: 'T',
  ŧ: 't',
  ĸ: 'k',
  Ŋ: 'N',
  ŋ: 'n',
}

const inWinAnsi = (c: string): boolean => {
  const code = c.codePointAt(0)
  if (code === undefined) return false
  return (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRA.has(c)
}

/**
 * Text as the PDF's standard fonts can print it: WinAnsi characters as they are, other Latin letters without
 * their accents (`ğ` → `g`, `Ł` → `L`), anything else `?`.
 */
export function pdfText(s: string): string {
  let out = ''
  for (const c of s) {
    if (c === '\n' || c === '\t' || inWinAnsi(c)) {
      out += c
      continue
    }
    const base = c.normalize('NFKD').replace(/\p{M}/gu, '')
    out += base && [...base].every(inWinAnsi) ? base : (SPECIAL[c] ?? '?')
  }
  return out
}

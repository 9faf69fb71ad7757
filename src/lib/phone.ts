/**
 * Telephone numbers as the account profile stores them: `phone_country_code` as `+` and the country
 * calling code (`+31`), `phone` as the national significant number in digits only, without the trunk
 * prefix `0` (`612345678`). Clients send the code with or without `+`, and the number in national form
 * (`06 1234 5678`) or international form (`+31612345678`, `0031612345678`) with or without a code.
 */

/** A phone number in its stored form, the field that is wrong and why, or `missing` (a national number, no code). */
export type PhoneResult =
  | { phone: string; phone_country_code: string }
  | { field: 'phone' | 'phone_country_code'; problem: string }
  | { missing: 'phone_country_code' }

// Two-digit calling codes (ITU-T E.164 zones); the remaining codes of zones 2–9 have three digits, zones 1 and 7 one.
const TWO_DIGIT = new Set([
  20, 27, 30, 31, 32, 33, 34, 36, 39, 40, 41, 43, 44, 45, 46, 47, 48, 49, 51, 52, 53, 54, 55, 56, 57, 58, 60, 61, 62,
  63, 64, 65, 66, 81, 82, 84, 86, 90, 91, 92, 93, 94, 95, 98,
])
// Italy, San Marino and the Vatican keep the leading 0 of a national number in international form.
const KEEPS_ZERO = new Set(['39', '378', '379'])

/** The calling code that starts the digits of an international number (E.164 codes are prefix-free). */
export function callingCodeOf(digits: string): string {
  if (digits.startsWith('1') || digits.startsWith('7')) return digits.slice(0, 1)
  return TWO_DIGIT.has(Number(digits.slice(0, 2))) ? digits.slice(0, 2) : digits.slice(0, 3)
}

/** Brings a profile's phone number and country code to the stored form, or names what is wrong. */
export function normalisePhone(phone: string, countryCode: string | undefined): PhoneResult {
  const code = countryCode?.trim().replace(/^\+/, '')
  if (code !== undefined && !/^[1-9][0-9]{0,3}$/.test(code))
    return { field: 'phone_country_code', problem: 'must be a country calling code such as +31 or 31' }
  const raw = phone.trim()
  const international = raw.startsWith('+') || raw.startsWith('00')
  const digits = raw.replace(/[\s().-]/g, '').replace(/^(\+|00)/, '')
  // A calling code never starts with 0, so an international number's digits start with 1 to 9.
  if (!(international ? /^[1-9][0-9]*$/ : /^[0-9]+$/).test(digits))
    return { field: 'phone', problem: 'must be a telephone number' }
  let cc: string
  let national = digits
  if (international) {
    const found = callingCodeOf(digits)
    if (code !== undefined && code !== found)
      return { field: 'phone', problem: `its country code +${found} differs from phone_country_code +${code}` }
    cc = found
    national = digits.slice(found.length)
  } else if (code === undefined) {
    return { missing: 'phone_country_code' }
  } else cc = code
  // The trunk prefix goes, all of it, so a stored number is stored again unchanged.
  if (!KEEPS_ZERO.has(cc)) national = national.replace(/^0+/, '')
  if (national.length < 4 || national.length + cc.length > 15)
    return { field: 'phone', problem: 'must have 4 to 15 digits with the country code' }
  return { phone: national, phone_country_code: `+${cc}` }
}

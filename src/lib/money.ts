/** Cents as the API shows money: a number with two decimals. */
export const amount = (cents: number): number => Math.round(cents) / 100

/** An amount in euros as a request gives it (12.1) in cents, rounded to the cent. */
export const centsOf = (euros: number): number => Math.round(euros * 100)

/** Cents as text with two decimals and a decimal point (`12.10`). */
export const amountText = (cents: number): string => {
  const sign = cents < 0 ? '-' : ''
  const abs = Math.abs(Math.round(cents))
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`
}

/** VAT on `cents` at `bp` basis points (2100 = 21%), rounded half up to the cent. */
export const vatOf = (cents: number, bp: number): number => Math.round((cents * bp) / 10_000)

/** A percentage (21, 9.5) as basis points. */
export const basisPoints = (percent: number): number => Math.round(percent * 100)

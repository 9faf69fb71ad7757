/** A row with its JSON text columns (those named in J) replaced by their decoded types. */
export type Decoded<R, J> = { [K in keyof R]: K extends keyof J ? J[K] : R[K] }

/**
 * The decoder of one entity's rows: parses the JSON text columns `columns` of whatever the row holds of them
 * (a select may take only some), keeps a null column null and every other column as it is.
 */
export function jsonColumns<J>(...columns: (keyof J & string)[]) {
  return <R extends object>(row: R): Decoded<R, J> => {
    const out: Record<string, unknown> = { ...(row as Record<string, unknown>) }
    for (const c of columns) {
      const text = out[c]
      if (typeof text === 'string') out[c] = JSON.parse(text)
    }
    return out as Decoded<R, J>
  }
}

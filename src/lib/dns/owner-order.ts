/**
 * The key of an owner name in the order of sortRecords, as one string: the labels of the name below the apex
 * (`apex`, stored form), from the last to the first, each followed by U+0001 (below every character a label
 * holds); the apex itself is the empty key. Comparing keys code unit by code unit compares the names as sortRecords
 * does: label by label, a name before the names below it. The database orders a zone's records by it (SQLite
 * through this function, registered as `dns_owner_key`; PostgreSQL by the same expression in SQL).
 */
export const ownerOrderKey = (apex: string, name: string): string =>
  name === apex
    ? ''
    : name
        .slice(0, -(apex.length + 1))
        .split('.')
        .reverse()
        .map((label) => `${label}\u0001`)
        .join('')

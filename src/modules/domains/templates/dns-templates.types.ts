/** A record of a template: the name relative to the zone it is applied to (empty = apex). */
export interface TemplateRecord {
  type: string
  name: string
  value: string
  ttl: number
}

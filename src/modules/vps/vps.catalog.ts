/** A VPS plan that can be ordered. */
export interface VpsProduct {
  id: string
  name: string
  cpu: number
  memory_mb: number
  disk_gb: number
  /** Monthly price in cents, excluding VAT. */
  priceCents: number
  locations: string[]
}

/** The plans on offer. */
export const VPS_PRODUCTS: VpsProduct[] = [
  { id: 'vps-s', name: 'VPS S', cpu: 1, memory_mb: 2048, disk_gb: 40, priceCents: 499, locations: ['ams', 'rtm'] },
  { id: 'vps-m', name: 'VPS M', cpu: 2, memory_mb: 4096, disk_gb: 80, priceCents: 999, locations: ['ams', 'rtm'] },
  { id: 'vps-l', name: 'VPS L', cpu: 4, memory_mb: 8192, disk_gb: 160, priceCents: 1999, locations: ['ams', 'rtm'] },
  { id: 'vps-xl', name: 'VPS XL', cpu: 8, memory_mb: 16384, disk_gb: 320, priceCents: 3999, locations: ['ams'] },
]

/** Billing periods a VPS can be ordered for, in months. */
export const VPS_DURATIONS = [1, 3, 6, 12, 24] as const

export const findProduct = (id: string): VpsProduct | undefined => VPS_PRODUCTS.find((p) => p.id === id)

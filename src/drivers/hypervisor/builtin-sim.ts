import { createHash, randomBytes } from 'node:crypto'
import type { HypervisorHost, OsImage } from './hypervisor.js'

/** Realistic durations of the simulated actions, in milliseconds at speed 1. */
export const SIM_DURATIONS_MS = {
  create: 60_000,
  start: 15_000,
  shutdown: 20_000,
  poweroff: 2_000,
  reboot: 25_000,
  rescue: 30_000,
  reinstall: 90_000,
  backup: 45_000,
  restore: 60_000,
} as const

/** The hosts the simulator runs. */
export const SIM_HOSTS: HypervisorHost[] = [
  { name: 'ams-hv01', location: 'ams' },
  { name: 'ams-hv02', location: 'ams' },
  { name: 'rtm-hv01', location: 'rtm' },
]

/** The images the simulator installs; the ids stay fixed, clients keep them. */
export const SIM_IMAGES: OsImage[] = [
  { id: 1, slug: 'debian-12', name: 'Debian 12 (Bookworm)', family: 'debian', version: '12' },
  { id: 2, slug: 'debian-13', name: 'Debian 13 (Trixie)', family: 'debian', version: '13' },
  { id: 3, slug: 'ubuntu-22.04', name: 'Ubuntu 22.04 LTS', family: 'ubuntu', version: '22.04' },
  { id: 4, slug: 'ubuntu-24.04', name: 'Ubuntu 24.04 LTS', family: 'ubuntu', version: '24.04' },
  { id: 5, slug: 'almalinux-9', name: 'AlmaLinux 9', family: 'almalinux', version: '9' },
  { id: 6, slug: 'rocky-9', name: 'Rocky Linux 9', family: 'rocky', version: '9' },
  { id: 7, slug: 'freebsd-14', name: 'FreeBSD 14', family: 'freebsd', version: '14' },
]

/** 198.18.0.0/15 (benchmarking space) for instances, from its start; floating addresses from 198.19.128.0. */
export function addressAt(base: number, n: number): string {
  const v = base + Math.floor((n - 1) / 254) * 256 + ((n - 1) % 254) + 1
  return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.')
}

/** The block of instance addresses, 198.18.0.0. */
export const INSTANCE_BASE = ((198 << 24) >>> 0) + (18 << 16)
/** The block of floating addresses, 198.19.128.0. */
export const FLOATING_BASE = ((198 << 24) >>> 0) + (19 << 16) + (128 << 8)

/** A salted hash of a simulated machine's password: the simulation keeps no password itself. */
export const simPasswordHash = (secret: string): string => {
  const salt = randomBytes(8).toString('hex')
  return `${salt}:${createHash('sha256')
    .update(salt + secret)
    .digest('hex')}`
}

/**
 * Example request bodies of the customer and admin operations whose body schema carries none, by operationId: the
 * OpenAPI documents show them (plugins/openapi.ts). `test/openapi-examples.test.ts` checks each one against the
 * operation's schema (and sends a customer one to the server with `?test=1`), and fails when an operation with a
 * body has no example.
 */
const RECORD = { type: 'A', name: 'www', value: '203.0.113.10', ttl: 3600 }
const PROFILE = {
  company_name: 'Example BV',
  firstname: 'Jan',
  lastname: 'Jansen',
  street: 'Kerkstraat',
  street_number: '1',
  zipcode: '1011 AB',
  city: 'Amsterdam',
  country: 'NL',
  email: 'jan@example.nl',
  phone_country: '+31',
  phone_area: '20',
  phone_number: '1234567',
}
const CSR =
  '-----BEGIN CERTIFICATE REQUEST-----\nMIIBIjCByQIBADBnMQswCQYDVQQGEwJOTDEW…\n-----END CERTIFICATE REQUEST-----\n'

export const BODY_EXAMPLES: Record<string, unknown> = {
  updateOrder: { cart_id: 1, domain: { transfer_code: 'Ab3-xY9!kQ' } },
  updateDomain: {
    nameservers: ['ns1.example.net', 'ns2.example.net'],
    is_locked: true,
    dnssec: { enabled: 1, flags: 257, alg: 13, protocol: 3, pubKey: 'mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+Gq…' },
    tags: ['production'],
  },
  replaceDnsRecords: {
    records: [
      { type: 'A', name: '@', value: '203.0.113.10', ttl: 3600 },
      { type: 'MX', name: '@', value: '10 mail.example.nl.', ttl: 3600 },
      { type: 'TXT', name: '_acme-challenge', value: 'gfj9Xq…Rg85nM', ttl: 120 },
    ],
  },
  updateDnsRecord: { record: RECORD },
  deleteDnsRecord: { record: { type: 'TXT', name: '_acme-challenge', value: 'gfj9Xq…Rg85nM' } },
  importDnsZoneFile: {
    zone: '$TTL 3600\n@ IN A 203.0.113.10\nwww IN CNAME example.nl.\n@ IN MX 10 mail.example.nl.\n',
  },
  createContactProfile: { name: 'Example BV', profile: { ...PROFILE, defaults: { owner: true } } },
  updateContactProfile: { name: 'Example BV', profile: { ...PROFILE, city: 'Rotterdam', zipcode: '3011 AA' } },
  createNameserverProfile: {
    alias: 'own-ns',
    nameservers: ['ns1.example.net', { hostname: 'ns2.example.nl', ipv4: '192.0.2.53', ipv6: '2001:db8::53' }],
    set_as_default: true,
  },
  updateNameserverProfile: { nameservers: ['ns1.example.net', 'ns2.example.net'], set_as_default: false },
  createDnsTemplate: {
    alias: 'web',
    default: 0,
    records: [
      { type: 'A', name: '', value: '203.0.113.10' },
      { type: 'MX', name: '', value: 'mail.example.net.', priority: 10 },
    ],
  },
  updateDnsTemplate: { alias: 'web', records: [{ type: 'A', name: 'www', value: '203.0.113.11', ttl: 3600 }] },
  orderDomain: { domain: 'example.nl', type: 'register', period: 1, nameserver: 'own-ns', profile: { owner: 12 } },
  orderCertificate: { product_id: 1, duration: 1 },
  generateCsr: {
    common_name: 'www.example.nl',
    organization: 'Example BV',
    email: 'ssl@example.nl',
    country: 'NL',
    state: 'Noord-Holland',
    locality: 'Amsterdam',
    key_type: 'ec',
  },
  requestCertificate: { csr: CSR, validation_method: 'dns', auto_setup_dns: true },
  confirmProfileEmail: { token: 'c0ffee2a9b7e4d51' },
  addSshKey: { name: 'laptop', public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO0u1Vd4dX… jan@laptop' },
  reserveFloatingIp: { location: 'ams' },
  attachFloatingIp: { vps_id: 501 },
  updateVpsFirewall: {
    enabled: true,
    rules: [
      { direction: 'in', protocol: 'tcp', port: '22', source: '198.51.100.0/24', description: 'SSH from the office' },
      { direction: 'in', protocol: 'tcp', port: '443' },
      { direction: 'in', protocol: 'icmp' },
    ],
  },
  createVpc: { name: 'backend' },
  addVpcSubnet: { name: 'app', cidr: '10.10.0.0/24', gateway: '10.10.0.1' },
  orderVps: { product_id: 'vps-m', image_id: 'debian-12', hostname: 'web1.example.nl', location: 'ams' },
  updateVps: { 'ip-addresses': [{ ip: '203.0.113.20', reverse: 'web1.example.nl' }] },
  setVpsRescue: { enable: true },
  reinstallVps: { image_id: 'debian-12', ssh_key_ids: [7] },
  setVpsHostname: { hostname: 'web1.example.nl' },
  restoreVpsBackup: { key: 1764201600, type: 'incremental' },
  // The admin API.
  adminCreateAccount: {
    name: 'Example B.V.',
    email: 'owner@example.nl',
    firstname: 'Jan',
    lastname: 'Jansen',
    key: { label: 'ci', allowed_ips: ['203.0.113.0/24'] },
  },
  adminCreateUser: { email: 'dns@example.nl', firstname: 'Dana', lastname: 'Records', permissions: ['domains'] },
  adminCreateKey: { label: 'deploy', expires_at: '2027-12-31', allowed_ips: ['203.0.113.7'] },
  adminSetKeyWhitelist: { allowed_ips: ['203.0.113.7', '198.51.100.0/24'] },
  adminSetKeyExpiry: { expires_at: '2027-12-31' },
  adminResyncDns: { domains: ['example.nl'] },
  adminReserveName: { reason: 'Trademark of a customer' },
  adminAnswerTicket: { message: 'The zone is published again.', author: 'Support', close: false },
  adminAddCommission: { order_nr: 5012, sale_amount: 12.1, commission_amount: 1.21, sub_id: 'newsletter' },
  adminRejectCommission: { reason: 'The order was cancelled' },
  adminPayOutCommissions: { reference: 'PAYOUT-2026-11', invoice_nr: 'AFF-2026-0011' },
  sandboxMoveClock: { advance: '30d' },
  sandboxAddFault: { operation: 'getDnsRecords', status: 503, probability: 0.5, count: 3 },
  sandboxFlushWebhooks: { all: true },
}

/**
 * The one error type of the API. The HTTP status is derived from the kind; the texts live in
 * `errors` below, so a grep here finds every error text the API can return.
 */
export type ErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'headers_too_large'
  | 'request_timeout'
  | 'rate_limited'
  | 'internal'
  | 'bad_gateway'
  | 'unavailable'
  | 'gateway_timeout'

const statusOf: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  headers_too_large: 431,
  request_timeout: 408,
  rate_limited: 429,
  internal: 500,
  bad_gateway: 502,
  unavailable: 503,
  gateway_timeout: 504,
}

/** The statuses sandbox fault injection can answer with. */
export const FAULT_STATUSES = [400, 401, 403, 404, 409, 429, 500, 502, 503, 504] as const
export type FaultStatus = (typeof FAULT_STATUSES)[number]
const faultKinds: Record<FaultStatus, ErrorKind> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  429: 'rate_limited',
  500: 'internal',
  502: 'bad_gateway',
  503: 'unavailable',
  504: 'gateway_timeout',
}
const defaultFaultText: Record<FaultStatus, string> = {
  400: 'Bad request',
  401: 'No valid API key set',
  403: 'Access denied',
  404: 'Endpoint not found',
  409: 'Conflict',
  429: 'Rate limit exceeded',
  500: 'Error',
  502: 'Bad gateway',
  503: 'Service unavailable',
  504: 'Gateway timeout',
}

export interface FieldError {
  field: string
  message: string
}

export class ApiError extends Error {
  readonly status: number
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly fields?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    // An answer, not a fault: no stack is captured (that was a tenth of the time of a flood of 404s).
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    super(message)
    Error.stackTraceLimit = limit
    this.status = statusOf[kind]
  }
}

const bad = (text: string, fields?: FieldError[]) => new ApiError('bad_request', text, fields)
/** A text quoting customer input, cut to 1,000 characters (a 10 MB value is not echoed back whole). */
const clip = (text: string) => (text.length > 1000 ? `${text.slice(0, 999)}\u2026` : text)
const dnsRecord = (record: string, problem: string) => bad(clip(`Invalid DNS record ${record}: ${problem}`))
const csr = (problem: string) => bad(`Invalid CSR: ${problem}`)
const csrField = (field: string, problem: string) => bad(`Invalid ${field}: ${problem}`)

/** `Retry-After` of the 503 answered while the database cannot be reached: a failover takes seconds. */
export const DATABASE_RETRY_AFTER_SECONDS = 2

/** Factories for every error of the API, with the specification's own texts. */
export const errors = {
  sslRequired: () => bad('SSL connection is required'),
  wrongMethod: () => bad('Wrong request method'),
  endpointNotFound: () => new ApiError('not_found', 'Endpoint not found'),
  invalidJson: () => bad('Invalid JSON body'),
  validation: (text: string, fields: FieldError[]) => bad(text, fields),
  bodyTooLarge: () => new ApiError('payload_too_large', 'Request body too large'),
  invalidUrl: () => bad('Invalid URL: a path has a malformed percent-encoding (%XX) or is not UTF-8'),
  pathSegmentTooLong: (max: number) =>
    new ApiError('uri_too_long', `URI too long: a path segment may have at most ${max} characters`),
  unsupportedEncoding: (encoding: string) =>
    new ApiError(
      'unsupported_media_type',
      `Unsupported Content-Encoding: ${encoding.slice(0, 40)} (send the body uncompressed)`,
      undefined,
      {
        'accept-encoding': 'identity',
      },
    ),
  headersTooLarge: () => new ApiError('headers_too_large', 'Request headers too large'),
  requestTimeout: () => new ApiError('request_timeout', 'Request timeout: the request was not received in time'),
  nulInUrl: () => bad('Invalid URL: NUL (%00) is not allowed'),
  /** A JSON body nested deeper than HOSTAPI_JSON_MAX_DEPTH, refused before it is parsed. */
  jsonTooDeep: (max: number) => bad(`Invalid JSON body: nested deeper than ${max} levels`),
  nulInBody: () => bad('Invalid JSON body: text must not contain NUL (\\u0000)'),
  shuttingDown: () => new ApiError('unavailable', 'Service unavailable: the server is shutting down'),
  /** The database cannot be reached or takes no writes (a failover): nothing of the request was acknowledged. */
  databaseUnavailable: () =>
    new ApiError('unavailable', 'Service unavailable: the database cannot be reached, try again shortly', undefined, {
      'retry-after': String(DATABASE_RETRY_AFTER_SECONDS),
    }),
  malformedRequest: () => bad('Malformed HTTP request'),
  unknownMethod: () => bad('Malformed HTTP request: unknown method'),

  noValidApiKey: () => new ApiError('unauthorized', 'No valid API key set'),
  apiKeyExpired: () => new ApiError('unauthorized', 'API key has expired'),
  ipNotWhitelisted: (ip: string) =>
    new ApiError('unauthorized', `Remote IP address is not found in the API key whitelist (${ip})`),
  accessDenied: () => new ApiError('forbidden', 'Access denied'),
  noAccessToVps: () => bad('No access to this VPS'),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError('rate_limited', 'Rate limit exceeded', undefined, { 'retry-after': String(retryAfterSeconds) }),

  pageOutOfRange: () => bad('Page out of range'),
  invalidPage: () =>
    bad('Invalid page: must be an integer >= 1', [{ field: 'page', message: 'must be an integer >= 1' }]),
  invalidLimit: (max: number) =>
    bad(`Invalid limit: must be an integer from 1 to ${max}`, [
      { field: 'limit', message: `must be an integer from 1 to ${max}` },
    ]),
  invalidIdempotencyKey: () => bad('Invalid Idempotency-Key: 1 to 255 visible ASCII characters'),
  idempotencyConflict: () => new ApiError('conflict', 'Idempotency key reused with a different request'),
  idempotencyInProgress: () => new ApiError('conflict', 'A request with this Idempotency-Key is still being processed'),

  /** A DNS record failed validation; `record` names it (`TXT _acme-challenge.example.com`). */
  invalidDnsRecord: dnsRecord,
  dnsRecordTypeRequired: () => dnsRecord('(no type)', 'type is required'),
  dnsRecordTypeUnsupported: (type: string, types: readonly string[]) =>
    dnsRecord(type, `unsupported type (use one of ${types.join(', ')})`),
  /** A record selector of `PATCH /domains/{domain}/dns` without `value`; `record` names it (`TXT @`). */
  dnsRecordValueRequired: (record: string) => dnsRecord(record, 'value is required (null deletes the record set)'),
  cnameNotUnique: (name: string) => dnsRecord(`CNAME ${name}`, 'a name can have only one CNAME record'),
  cnameNotAlone: (name: string, others: string[]) =>
    dnsRecord(`CNAME ${name}`, `a CNAME must be the only record at its name (also has ${others.join(', ')})`),
  dnsTemplateNameNotRelative: (record: string) =>
    dnsRecord(record, 'template names are relative to the domain (use "" or "@" for the apex)'),
  /** A zone file import failed at one line. */
  invalidZoneFile: (line: number, problem: string) => bad(clip(`Invalid zone file: line ${line}: ${problem}`)),
  /** A zone file import over the configured size (HOSTAPI_ZONE_MAX_BYTES). */
  zoneFileTooLarge: (maxBytes: number) =>
    new ApiError('payload_too_large', `Zone file too large: at most ${maxBytes} bytes`),
  /** A zone import or record replace with more records than a zone may hold (HOSTAPI_ZONE_MAX_RECORDS). */
  tooManyDnsRecords: (max: number) => bad(`Too many DNS records: at most ${max} per zone`),
  /** A record set larger than the DNS server behind hostapi takes in one change (PowerDNS's request size limit). */
  dnsRecordSetTooLarge: (set: string, bytes: number, max: number) =>
    bad(
      clip(
        `DNS record set ${set} is too large: it takes ${bytes} bytes in a change to the DNS server, which accepts at most ${max} bytes`,
      ),
    ),
  /** Every zone worker is busy and the queue of large DNS changes is full (HOSTAPI_ZONE_QUEUE). */
  zoneWorkBusy: (retryAfterSeconds: number) =>
    new ApiError('unavailable', 'Too many large DNS changes in progress, try again shortly', undefined, {
      'Retry-After': String(retryAfterSeconds),
    }),

  /** The ticket sanitiser's worker is busy and its queue of long messages is full. */
  sanitiserBusy: (retryAfterSeconds: number) =>
    new ApiError('unavailable', 'Too many long messages being processed, try again shortly', undefined, {
      'Retry-After': String(retryAfterSeconds),
    }),

  // Domains, DNS, domain profiles, availability and orders.
  noAccessToResource: () => bad('You have no access to this resource'),
  invalidDomainName: () => bad('Invalid domain name'),
  noDomainSet: () => bad('No domain set'),
  emptyExtension: () => bad('Your domain request contains an empty extension'),
  unknownExtension: (ext: string) => bad(`The extension .${ext} is not offered`),
  extensionNotFound: () => new ApiError('not_found', 'Extension not found'),
  domainLocked: () => bad('The domain is locked; unlock it to get the auth code'),
  cancellationPending: () => bad('A cancellation of this domain is already pending'),
  noPendingCancellation: () => bad('There is no pending cancellation for this domain'),
  nameserverXorProfile: () => bad('Set either nameserver (a profile alias) or nameservers, not both'),
  nameserverCount: () => bad('A domain needs 2 to 13 nameservers'),
  invalidNameserver: (host: string) => bad(`Invalid nameserver hostname: ${host}`),
  invalidNameserverIpv4: (host: string, ip: string) => bad(`Invalid nameserver hostname: ${host} (ipv4 ${ip})`),
  invalidNameserverIpv6: (host: string, ip: string) => bad(`Invalid nameserver hostname: ${host} (ipv6 ${ip})`),
  invalidTag: (tag: string) => bad(`Invalid tag "${tag}": use a-z, 0-9, dot, underscore and dash`),
  forwarderType: () => bad('Invalid forwarder: type must be 301, 302 or 303'),
  forwarderUrlRequired: () => bad('Invalid forwarder: url is required'),
  forwarderUrl: () => bad('Invalid forwarder: url must be an http or https URL'),
  dnssecFlags: () => bad('Invalid dnssec: flags must be 256 (ZSK) or 257 (KSK)'),
  dnssecAlgorithm: (allowed: readonly number[]) => bad(`Invalid dnssec: alg must be one of ${allowed.join(', ')}`),
  dnssecProtocol: () => bad('Invalid dnssec: protocol must be 3'),
  dnssecPubKey: () => bad('Invalid dnssec: pubKey must be the base64 public key'),
  dnssecPubKeyForm: (alg: number, form: string) => bad(`Invalid dnssec: pubKey must be ${form} for alg ${alg}`),
  noNameserverAlias: () => bad('No nameserver alias set'),
  nameserversNotFound: () => new ApiError('not_found', 'Nameservers name not found'),
  nameserverAliasTaken: () => bad('A nameserver profile with this alias exists already'),
  nameserverProfileReadOnly: () => bad('The built-in nameserver profile cannot be changed or deleted'),
  invalidNameserverAlias: () => bad('Invalid alias: use 1 to 64 characters of a-z, 0-9, dot, underscore and dash'),
  contactNotFound: () => new ApiError('not_found', 'Contact profile not found'),
  /** A contact profile without a required field, such as `profile.firstname`. */
  contactFieldMissing: (field: string) =>
    bad(`Missing profile.${field}`, [{ field: `profile.${field}`, message: 'is required' }]),
  contactInUse: () => bad('The contact profile is in use by a domain and cannot be deleted'),
  dnsTemplateNotFound: () => new ApiError('not_found', 'DNS template not found'),
  dnsTemplateAliasMissing: () => bad('Missing alias', [{ field: 'alias', message: 'is required' }]),
  dnsTemplateAliasEmpty: () =>
    bad('Invalid alias: must not be empty', [{ field: 'alias', message: 'must not be empty' }]),
  /** A registration period outside what the extension offers. */
  invalidPeriod: (extension: string, min: number, max: number) =>
    bad(`Invalid period: .${extension} can be registered for ${min} to ${max} years`, [
      { field: 'period', message: `must be from ${min} to ${max}` },
    ]),
  domainNotAvailable: () => bad('This domain is not available for registration'),
  domainNotTransferable: () => bad('This domain is not registered elsewhere; order it with type register'),
  domainAlreadyOrdered: () => bad('This domain is already in an open order'),
  premiumPriceNotAccepted: (price: string) =>
    bad(`This is a premium domain: set accept_premium_price to ${price} to accept its register price`),
  orderNotFound: () => new ApiError('not_found', 'Order not found'),
  orderCompleted: () => bad('This order is already completed'),
  orderCancelled: () => bad('This order is cancelled'),
  orderBeingProcessed: () => bad('This order is being processed; try again when its job has ended'),
  cartItemNotFound: () => bad('The order has no service with this cart_id'),
  cartItemDone: () => bad('This service of the order is already delivered'),

  // Account: profile, payment methods, invoices, users, API keys, tickets; affiliate.
  accountNotFound: () => new ApiError('not_found', 'Account not found'),
  companyReadOnly: () => bad('The company name cannot be changed through the API; contact support'),
  /** A profile phone number that cannot be brought to its stored form. */
  invalidPhone: (field: string, problem: string) => bad(`Invalid ${field}: ${problem}`, [{ field, message: problem }]),
  /** A national phone number sent without its country calling code. */
  missingPhoneCountryCode: () =>
    bad('Missing phone_country_code: required unless phone is in international form (+31…)', [
      { field: 'phone_country_code', message: 'is required unless phone is in international form' },
    ]),
  invalidEmailToken: () => bad('Invalid or expired verification code'),
  paymethodChoice: () =>
    bad('Set either default_paymethod_id (an id from the list of payment methods) or paymethod: bank_transfer'),
  unknownPaymethod: (id: string) => bad(`Unknown payment method: ${id}`),
  invoiceNotFound: () => new ApiError('not_found', 'Invoice not found'),
  userNotFound: () => new ApiError('not_found', 'User not found'),
  apiKeyNotFound: () => new ApiError('not_found', 'API key not found'),
  apiKeyAmbiguous: () => new ApiError('not_found', 'Several keys match; use the key id'),
  apiKeyExists: () => bad('This API key exists already'),
  invalidIpEntry: (entry: string) => bad(`Invalid IP address or CIDR range: ${entry}`),
  emailTaken: () => bad('A user with this e-mail address already exists'),
  passwordMismatch: () => bad('password and password_confirm do not match'),
  weakPassword: (problem: string) => bad(`The password is too weak: ${problem}`),
  tooManyNewUsers: (retryAfterSeconds: number, perHour: number) =>
    new ApiError('rate_limited', `Rate limit exceeded: at most ${perHour} new users per account per hour`, undefined, {
      'retry-after': String(retryAfterSeconds),
    }),
  mainUserPermissions: () => bad('The permissions of the main user cannot be reduced'),
  cannotGrantPermission: (name: string) => bad(`You cannot grant a permission you do not have yourself: ${name}`),
  cannotRevokePermission: (name: string) => bad(`You cannot revoke a permission you do not have yourself: ${name}`),
  mainUserChangedByMainUserOnly: () => new ApiError('forbidden', 'Only the main user can change the main user'),
  unknownPermission: (name: string) =>
    bad(`Invalid permissions.${name}: is not a known name`, [
      { field: `permissions.${name}`, message: 'is not a known name' },
    ]),
  ticketNotFound: () => new ApiError('not_found', 'Ticket not found'),
  ticketClosed: () => bad('This ticket is closed; open a new ticket'),
  emptyMessage: () => bad('The message is empty once unsafe HTML is removed'),
  commissionNotFound: () => new ApiError('not_found', 'Commission not found'),
  affiliatePaymentNotFound: () => new ApiError('not_found', 'Payment not found'),
  commissionPaidOut: () => bad('A paid-out commission cannot be rejected'),

  // Webhooks.
  webhookNotFound: () => new ApiError('not_found', 'Webhook not found'),
  webhookDeliveryNotFound: () => new ApiError('not_found', 'Delivery not found'),
  tooManyWebhooks: (max: number) => bad(`Too many webhook endpoints: at most ${max} per account`),
  invalidWebhookUrl: (reason: string) => bad(`Invalid url: ${reason}`, [{ field: 'url', message: reason }]),
  webhookEventNotPermitted: (event: string, area: string) =>
    bad(`Invalid events: ${event} needs the ${area} permission`, [
      { field: 'events', message: `${event} needs the ${area} permission` },
    ]),

  // VPS: instances, tasks, SSH keys, firewall, VPC and subnets, floating IPs.
  noValidVpsId: () => bad('No valid VPS ID provided'),
  vpsLocked: () => bad('VPS is locked by a running task'),
  vpsWrongState: (text: string) => bad(text),
  vpsActionFailed: (text: string) => bad(`The hypervisor refused the action: ${text}`),
  vpsCancellationPending: () => bad('A cancellation of this VPS is already pending'),
  vpsNoCancellationPending: () => bad('There is no pending cancellation for this VPS'),
  vpsUnknownImage: () => bad('Unknown image_id: see GET /vps/images'),
  vpsUnknownProduct: () => bad('Unknown product_id: see GET /vps/products'),
  vpsUnknownLocation: (allowed: string[]) => bad(`Invalid location: this product is offered in ${allowed.join(', ')}`),
  vpsInvalidDuration: (allowed: readonly number[]) => bad(`Invalid duration: one of ${allowed.join(', ')} months`),
  vpsMissingName: () => bad('Missing name'),
  floatingIpUnknownLocation: (allowed: string[]) => bad(`Invalid location: one of ${allowed.join(', ')}`),
  vpsInvalidHostname: () =>
    bad(
      'Invalid hostname: labels of letters, digits and hyphens, at most 63 characters each and 253 in all (RFC 1123)',
    ),
  vpsInvalidReverse: (ip: string) =>
    bad(`Invalid reverse name for ${ip}: must be a hostname such as server.example.com`),
  vpsIpNotOwned: (ip: string) => bad(`IP address ${ip} does not belong to this VPS`),
  vpsBackupNotFound: () => bad('Backup not found: use a key from GET /vps/{id}/backups'),
  sshKeyUnknown: (id: number) => bad(`Unknown SSH key id ${id}: see GET /vps/ssh-keys`),
  sshKeyInvalid: () =>
    bad('Invalid public_key: expected one line in OpenSSH format, such as "ssh-ed25519 AAAA… comment"'),
  sshKeyType: () => bad('Unsupported key type: use ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa'),
  sshKeyTooShort: () => bad('RSA keys must have at least 2048 bits'),
  sshKeyDuplicate: () => bad('This SSH key has been added already'),
  sshKeyNotFound: () => new ApiError('not_found', 'SSH key not found'),
  firewallTooManyRules: (max: number) => bad(`A firewall can have at most ${max} rules`),
  firewallRule: (n: number, problem: string) => bad(`Invalid firewall rule ${n}: ${problem}`),
  vpcNotFound: () => new ApiError('not_found', "There is no VPC on this VPS's host"),
  vpcExists: () => bad("A VPC exists already on this VPS's host"),
  vpcOtherHost: () => bad('The VPS is not on the same host as the VPC'),
  subnetInvalid: (problem: string) => bad(`Invalid subnet: ${problem}`),
  subnetOverlap: (other: string) => bad(`Invalid subnet: it overlaps subnet ${other} of this VPC`),
  subnetNotFound: () => new ApiError('not_found', 'Subnet not found'),
  subnetFull: () => bad("No free address left in the subnet's DHCP range"),
  floatingIpNotFound: () => new ApiError('not_found', 'Floating IP not found'),
  floatingIpAttached: () => bad('The floating IP is attached to a VPS; detach it first'),
  floatingIpNotAttached: () => bad('The floating IP is not attached to a VPS'),
  floatingIpLocation: () => bad('The floating IP and the VPS must be in the same location'),

  // Certificates.
  certificateNotFound: () => new ApiError('not_found', 'Certificate not found'),
  certificateProductNotFound: () => bad('Unknown certificate product'),
  certificateDuration: (allowed: number[]) =>
    bad(`Invalid duration: this product can be ordered for ${allowed.join(' or ')} year(s)`),
  certificateAlreadyRequested: () => bad('This certificate has already been requested'),
  certificatePackageEnded: () => bad('The period of this certificate package has ended'),
  /** A CSR whose public key is refused; `problem` is the key check's own text. */
  invalidCsr: csr,
  csrUnreadable: () => csr('it is not a readable PKCS#10 request'),
  csrNotPem: () => csr('expected a PEM block -----BEGIN CERTIFICATE REQUEST-----'),
  csrSignature: () => csr('its signature does not verify'),
  csrCommonNameNotDomain: (quotedName: string) => csr(`the common name ${quotedName} is not a domain name`),
  csrNonDnsName: (type: string, value: string) =>
    csr(`only DNS names can be certified, not ${type} ${value.slice(0, 100)}`),
  csrNameNotDomain: (quotedName: string) => csr(`${quotedName} is not a domain name`),
  csrNoName: () => csr('it names no domain (set the common name or a subjectAltName)'),
  csrTooManyNames: (max: number) => bad(`This product covers at most ${max} domain name(s)`),
  csrWildcardNotCovered: () => bad('This product does not cover wildcard names'),
  approverEmailRequired: () => bad('Missing approver_email: it is required for validation_method email'),
  certificateRefused: (reason: string) => bad(reason),
  invalidCommonName: () => bad('Invalid common_name: must be a domain name such as www.example.com or *.example.com'),
  invalidCountry: () => bad('Invalid country: must be a two-letter ISO 3166 code such as NL'),
  invalidCsrEmail: () => bad('Invalid email: must be an e-mail address'),
  csrFieldNotUnicode: (field: string) => csrField(field, 'it is not valid Unicode text (a lone UTF-16 surrogate)'),
  csrFieldForbidden: (field: string) =>
    csrField(field, 'control characters, bidi overrides and noncharacters are not allowed'),
  csrFieldEmpty: (field: string) => csrField(field, 'must not be empty'),
  csrFieldTooLong: (field: string, max: number) => csrField(field, `at most ${max} characters`),
  bitsOnlyForRsa: () => bad('bits applies to key_type rsa only'),

  // Operating: the admin API and sandbox mode.
  noValidAdminToken: () => new ApiError('unauthorized', 'No valid admin token set'),
  adminJobNotFound: () => new ApiError('not_found', 'Job not found'),
  adminJobNotRetryable: (status: string) => bad(`Only a failed job can be retried (this one is ${status})`),
  /** A failed job's retry while a job of its key (a recurring job's next run, an order's processing) is queued. */
  adminJobKeyQueued: (key: string) => bad(`A job of the same key (${key}) is queued already: it does this job's work`),
  adminMessageNotFound: () => new ApiError('not_found', 'Message not found'),
  adminMessageNotResendable: (status: string) =>
    bad(`Only a message the relay refused can be resent (this one is ${status})`),
  adminFaultNotFound: () => new ApiError('not_found', 'Fault not found'),
  adminUnknownOperation: (operation: string) =>
    bad(`Unknown operation: ${operation} (use an operationId of the customer API)`),
  adminFaultTarget: () => bad('Set either operation or work'),
  adminUnknownWork: (work: string, known: readonly string[]) =>
    bad(`Unknown work: ${work} (use one of ${known.join(', ')})`),
  adminWorkFaultField: (field: string) =>
    bad(`${field} applies to faults of an operation only: work fails as its outside party fails it`),
  adminInvalidDuration: () => bad('Invalid advance: use a number and a unit, such as 30d, 12h, 15m or 45s'),
  adminInvalidTime: (field: string) => bad(`Invalid ${field}: use YYYY-MM-DD or an ISO 8601 time`),
  adminNothingToPay: () => bad('There is no approved, unpaid commission to pay out'),
  adminTokenNotFound: () => new ApiError('not_found', 'Admin token not found'),
  adminInvalidExtension: () => bad('Invalid extension: labels of a-z, 0-9 and hyphens, such as com or co.uk'),
  adminPeriodRange: () => bad('min_period must not be above max_period'),
  adminPremiumNameNotFound: () => new ApiError('not_found', 'Premium name not found'),
  adminReservedNameNotFound: () => new ApiError('not_found', 'Reserved name not found'),
  adminClockMove: () => bad('Set either advance or to'),
  adminInvalidSeed: (problems: string[]) => bad(`Invalid seed: ${problems.join('; ')}`),
  adminUnknownEventType: (type: string, known: readonly string[]) =>
    bad(`Unknown event type: ${type}. Known types: ${known.join(', ')}`),
  adminNameTheAccount: (accounts: number) =>
    bad(`There are ${accounts} accounts: name the one to send the event to with customer_number`),
  adminNoAccount: () => bad('There is no account to send the event to: create one or reset the sandbox'),
  dnsResyncUnsupported: () =>
    bad('The DNS driver serves the zones from the database itself: there is nothing to resync'),
  /** An answer injected by sandbox fault injection; `status` is one of FAULT_STATUSES. */
  injectedFault: (status: FaultStatus, text?: string, retryAfterSeconds?: number) =>
    new ApiError(
      faultKinds[status],
      text ?? defaultFaultText[status],
      undefined,
      retryAfterSeconds === undefined ? undefined : { 'retry-after': String(retryAfterSeconds) },
    ),

  /** A 4xx Fastify raised itself, its own text passed through; every other error has a named factory above. */
  fastifyClientError: (text: string) => bad(text),
  internal: () => new ApiError('internal', 'Error'),
}

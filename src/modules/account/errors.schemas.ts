/** The shared error answers, for the account and affiliate routes that import them from here. */
export { ErrorAnswer, errorsFor, PAGED } from '../../http/error-responses.js'

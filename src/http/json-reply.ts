import type { FastifyReply } from 'fastify'
import { asJsonText, jsonObjectOf, jsonTextOf, type JsonText } from '../lib/json-text.js'
import { REQUEST_SUCCESSFUL } from './schemas.js'

/**
 * The success envelope around `data` given as JSON text (a read built by the database, see ARCHITECTURE.md,
 * "Reads as one JSON value"): the text ok() gives once the route's serializer has written it.
 */
export const okJson = (data: JsonText, text = REQUEST_SUCCESSFUL): JsonText =>
  jsonObjectOf([
    ['status', asJsonText('200')],
    ['status_description', jsonTextOf(text)],
    ['data', data],
  ])

/**
 * Sends `body` as the answer, as it is: Fastify's serializer leaves a string with a JSON content type alone, so
 * the route's response schema still documents the answer (the OpenAPI document) but does not write it; the text
 * matches what the schema would have written (test/json-reads.test.ts compares them over generated data).
 */
export const sendJson = (reply: FastifyReply, body: JsonText): FastifyReply =>
  reply.type('application/json; charset=utf-8').send(body)

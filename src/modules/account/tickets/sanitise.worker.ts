// Ticket messages sanitised in a worker thread (see sanitise-pool.ts): sanitize-html takes seconds on 64 KiB of
// nested tags, which must not hold the event loop every tenant's requests share.
import { htmlToText, sanitiseMessage } from './sanitise.js'

/** Messages to sanitise; `text` asks for each one's plain text (for e-mail) as well. */
export interface SanitiseTask {
  inputs: string[]
  text: boolean
}

/** Each message as safe HTML, and as plain text when asked. */
export interface Sanitised {
  html: string
  text: string | null
}

/** Sanitises inline (short messages) or in a worker (long ones). */
export function sanitiseAll(task: SanitiseTask): Sanitised[] {
  return task.inputs.map((input) => {
    const html = sanitiseMessage(input)
    return { html, text: task.text ? htmlToText(html) : null }
  })
}

export default sanitiseAll

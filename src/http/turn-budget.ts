import { setImmediate as checkPhase } from 'node:timers/promises'

/**
 * The event loop's time the requests read in one turn may take, together: past it, a request
 * waits for a later turn, after other sockets have been read. A client that sends a thousand
 * requests at once (on a thousand connections) had them all handled in one turn, each a few
 * milliseconds for a large entity list: one turn of 1.7–8.3 s, every other client waiting, until
 * the load limit answered 503 (a black-box attacker's session, 2026-11-28). A small request is a
 * few tens of microseconds: a turn of them stays far below it.
 */
export const TURN_BUDGET_MS = 10

let turnStartedAt = 0
let turnMarked = false
const unmark = (): void => { turnMarked = false }

/**
 * Whether the requests handled in this turn of the event loop have spent its budget. The first
 * request of a turn marks its start (a turn ends at the next check phase, where requests made
 * to wait go on, each turn as many as its budget allows, at least one).
 */
export function turnBudgetSpent (): boolean {
  const now = performance.now()
  if (!turnMarked) {
    turnMarked = true
    turnStartedAt = now
    setImmediate(unmark)
    return false
  }
  return now - turnStartedAt > TURN_BUDGET_MS
}

/** Waits for a turn whose budget is not spent, when this one's is; true when it waited. */
export async function waitForTurnBudget (): Promise<boolean> {
  if (!turnBudgetSpent()) return false
  do await checkPhase()
  while (turnBudgetSpent())
  return true
}

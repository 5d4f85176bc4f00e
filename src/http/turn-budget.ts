/**
 * The event loop's time the requests read in one turn may take, together: once they have taken
 * it, a request waits in line, and the requests waiting go on in order, one a turn, with the
 * sockets read between them. A client that sends a thousand requests at once (on a thousand
 * connections) had them all handled in one turn, each a few milliseconds for a large entity
 * list: one turn of 1.7–8.3 s, every other client waiting, until the load limit answered 503 (a
 * black-box attacker's session, 2026-11-28). A small request is a few tens of microseconds: a
 * turn of them stays far below it. The check is made before a request starts: the last one let
 * in may run past it.
 */
export const TURN_BUDGET_MS = 10

let turnStartedAt = 0
let turnMarked = false
const unmark = (): void => { turnMarked = false }

/** Requests waiting for their turn, in the order they came (a review found that requests retrying on their own could be passed over for good). */
const waiting: Array<() => void> = []
let releaseScheduled = false

function releaseNext (): void {
  releaseScheduled = false
  waiting.shift()?.()
  if (waiting.length > 0) {
    releaseScheduled = true
    setImmediate(releaseNext)
  }
}

/**
 * Whether a request must wait for a later turn: the requests handled in this turn of the event
 * loop have spent its budget, or others wait already. The first request of a turn marks its
 * start (a turn ends at the next check phase).
 */
export function turnBudgetSpent (): boolean {
  if (waiting.length > 0) return true
  const now = performance.now()
  if (!turnMarked) {
    turnMarked = true
    turnStartedAt = now
    setImmediate(unmark)
    return false
  }
  return now - turnStartedAt > TURN_BUDGET_MS
}

/** Waits in line for a turn when turnBudgetSpent says so; true when it waited. */
export async function waitForTurnBudget (): Promise<boolean> {
  if (!turnBudgetSpent()) return false
  await new Promise<void>((resolve) => {
    waiting.push(resolve)
    if (!releaseScheduled) {
      releaseScheduled = true
      setImmediate(releaseNext)
    }
  })
  return true
}

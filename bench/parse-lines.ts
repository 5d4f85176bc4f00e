import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'

/**
 * The load's ceiling: read an NDJSON file line by line and JSON.parse each line, nothing else.
 * Prints the seconds it took. `node --import tsx bench/parse-lines.ts FILE`
 */
const file = process.argv[2]
if (file === undefined) throw new Error('usage: parse-lines.ts FILE')
const started = performance.now()
let parsed = 0
for await (const line of createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity })) {
  if (line.trim() === '') continue
  JSON.parse(line)
  parsed++
}
console.log(JSON.stringify({ lines: parsed, seconds: (performance.now() - started) / 1000 }))

/** A histogram's series: its bucket counts, sum and count, for one set of label values. */
export interface HistogramSeries {
  /** Counts per upper bound (the last: above every bound, +Inf). */
  readonly buckets: Float64Array
  sum: number
  count: number
}

/**
 * A Prometheus histogram for the request path: a series is fetched once per label values and then
 * observed with a bucket search and three additions. prom-client's own Histogram validates and
 * hashes the labels on every observation (a child from `labels()` too), which was measurable on
 * every request. Registered in a prom-client Registry (`registerMetric`), which calls `get()` when
 * /metrics is read and formats the result like its own histograms.
 */
export class CheapHistogram<Label extends string> {
  readonly name: string
  readonly help: string
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly #labelNames: readonly Label[]
  readonly #bounds: readonly number[]
  readonly #series = new Map<string, { labels: Record<Label, string>, series: HistogramSeries }>()

  constructor (options: { name: string, help: string, labelNames: readonly Label[], buckets: readonly number[] }) {
    this.name = options.name
    this.help = options.help
    this.#labelNames = options.labelNames
    this.#bounds = [...options.buckets].sort((a, b) => a - b)
  }

  /** The series of these label values (in labelNames order), made on first use: keep it, observe it. */
  series (...values: string[]): HistogramSeries {
    const key = values.join('\u0000')
    let entry = this.#series.get(key)
    if (entry === undefined) {
      const labels = Object.fromEntries(this.#labelNames.map((name, i) => [name, values[i] ?? ''])) as Record<Label, string>
      entry = { labels, series: { buckets: new Float64Array(this.#bounds.length + 1), sum: 0, count: 0 } }
      this.#series.set(key, entry)
    }
    return entry.series
  }

  observe (series: HistogramSeries, value: number): void {
    const bounds = this.#bounds
    let i = 0
    while (i < bounds.length && value > bounds[i]!) i++
    series.buckets[i]!++
    series.sum += value
    series.count++
  }

  /** What prom-client's Registry formats. */
  async get (): Promise<{ name: string, help: string, type: string, aggregator: string, values: Array<{ metricName: string, labels: Record<string, string | number>, value: number }> }> {
    const values: Array<{ metricName: string, labels: Record<string, string | number>, value: number }> = []
    for (const { labels, series } of this.#series.values()) {
      let cumulative = 0
      this.#bounds.forEach((bound, i) => {
        cumulative += series.buckets[i]!
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: bound }, value: cumulative })
      })
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: series.count })
      values.push({ metricName: `${this.name}_sum`, labels, value: series.sum })
      values.push({ metricName: `${this.name}_count`, labels, value: series.count })
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values }
  }
}

import { maskWebhookUrl } from '../domain/index.js';
import type { Logger } from '../log.js';
import { endpointLabel, setCircuitState } from '../metrics.js';
import { Coalescer } from './coalescer.js';
import {
  type CircuitOpened,
  type EndpointResult,
  endpointFailuresRecord,
} from './ledger/circuits.js';
import { deliveryOutcomesRecord, type OutcomeEntry } from './ledger/outcomes.js';
import type { LedgerDb } from './ledger/rows.js';

export interface OutcomeWriterOptions {
  db: LedgerDb;
  /** Recorded as `delivered_by`. */
  deliveredBy: string;
  circuitFailures: number;
  /** Seconds an open circuit waits before its probe (already scaled). */
  probeSeconds: number;
  logger?: Logger | undefined;
}

/**
 * Writes attempts' outcomes, the writes of concurrent attempts sharing statements: one for
 * the ledger's entries (each on its own claim only) and the circuits of the endpoints that
 * answered, and, only when some failed or throttled, one more for those (in parallel). Logs
 * and gauges the circuits that open and close.
 */
export class OutcomeWriter {
  private readonly writes: Coalescer<
    { entry: OutcomeEntry; endpoint: EndpointResult | null },
    boolean
  >;

  constructor(private readonly options: OutcomeWriterOptions) {
    this.writes = new Coalescer(async (items) => {
      const results = items.flatMap((item) => (item.endpoint ? [item.endpoint] : []));
      const troubled = results.filter(
        (r) => r.result === 'failed' || (r.result === 'throttled' && r.hold_seconds !== null),
      );
      const failing = new Set(troubled.map((r) => r.endpoint));
      const answered = [
        ...new Set(
          results
            .filter((r) => r.result === 'ok' && !failing.has(r.endpoint))
            .map((r) => r.endpoint),
        ),
      ];
      const [written, opened] = await Promise.all([
        deliveryOutcomesRecord(
          options.db,
          items.map((item) => item.entry),
          answered,
          options.deliveredBy,
        ),
        endpointFailuresRecord(options.db, troubled, options.circuitFailures, options.probeSeconds),
      ]);
      this.logCircuits(opened, written.closed);
      const landed = new Set(written.recorded);
      const late = items.length - landed.size;
      if (late > 0) {
        options.logger?.info(
          { discarded: late },
          'outcomes of lapsed claims discarded: their deliveries were taken over',
        );
      }
      return items.map((item) => landed.has(item.entry.id));
    });
  }

  /**
   * Records one attempt's outcome; resolves with whether it landed (false: its claim had
   * lapsed and was taken over, so the successor's outcome stands). Rejects when the database
   * does: the claim then lapses and the delivery is sent again.
   */
  write(entry: OutcomeEntry, endpoint: EndpointResult | null): Promise<boolean> {
    return this.writes.submit({ entry, endpoint });
  }

  private logCircuits(opened: CircuitOpened[], closed: string[]): void {
    const logger = this.options.logger;
    for (const circuit of opened) {
      setCircuitState({ endpoint: endpointLabel(circuit.endpoint), state: 'open' });
      // the reason names the URL masked; a throttle's says `retrying at …`
      logger?.warn(
        {
          endpoint: maskWebhookUrl(circuit.endpoint),
          probeAt: circuit.probe_at,
          reason: circuit.reason,
        },
        'endpoint failing or throttling: circuit open',
      );
    }
    for (const endpoint of closed) {
      setCircuitState({ endpoint: endpointLabel(endpoint), state: 'closed' });
      logger?.info({ endpoint: maskWebhookUrl(endpoint) }, 'endpoint answering: circuit closed');
    }
  }
}

// Owns draining the usage-event outbox (shared/billing/usage-outbox.ts) into MongoDB from a worker process:
// one consumer per process in a shared consumer group, batches written with insertMany (unordered; a duplicate
// _id means "already written"), then added to the usage counter documents (shared/billing/usage-counters.ts:
// one lease per owner and one update per owner and month in the batch, idempotent per request id), and XACK +
// XDEL only for entries MongoDB holds in both (a billed call leaves its customer's undrained index in the same
// step). A dead consumer's unacknowledged entries are taken over with
// XAUTOCLAIM once idle for OUTBOX_CLAIM_IDLE_MS, so a restart reconciles the outbox. A batch is acknowledged
// before the next one is written: the counters' replay check relies on it.
// The outbox is one stream per partition (shared/redis-partitions.ts): a drainer reads them all in each pass (on one
// Redis in one blocking command; on a Redis Cluster, which holds them on different primaries, one command each without
// BLOCK, polling again after blockMs when all were empty); a
// batch gathers entries of every stream and each is acknowledged in its own. The stream of the layout before
// partitions is read too while it exists (checked at start), so an upgrade loses no event.
// A Redis that restarts empty while a batch is held takes the batch's entries and group with it: the drainer tells
// that from a takeover by the stream's epoch (usage-outbox.ts outboxEpochKey), counts the events it holds, and has
// the credit ledger add the billed ones to the month's hash (credit-ledger.ts addOrphanedCalls).
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Models } from '../../shared/db/models';
import type { Logger } from '../../shared/logger';
import { OUTBOX_GROUP, outboxEpochKey, outboxKey, parseOutboxEntries, undrainedKey, usageDocOf, type OutboxEntry } from '../../shared/billing/usage-outbox';
import { UsageCounters, type Holding, type OrphanedCount } from '../../shared/billing/usage-counters';
import { CreditLedger } from '../../shared/billing/credit-ledger';
import { dayOf, systemClock } from '../../shared/billing/month';
import type { FaultHook } from './fault-hook';
import { allPartitionPrefixes } from '../../shared/redis-partitions';
import { isCluster } from '../../shared/redis';

export interface UsageDrainerOptions {
  /** A connection of its own: XREADGROUP BLOCK holds it on one Redis. Worker role (waits for Redis to come back). */
  redis: Redis;
  prefix: string;
  models: Models;
  log: Logger;
  claimIdleMs: number;
  fault?: FaultHook;
  batchSize?: number;
  /** How long a drainer waits before it reads again when every stream was empty. */
  blockMs?: number;
  /** Default USAGE_BATCH_WINDOW_MS. */
  batchWindowMs?: number;
  /** Default USAGE_BATCH_MAX_WAIT_MS. */
  batchMaxWaitMs?: number;
  /** Default USAGE_BATCH_MIN_RATE_PER_S. */
  batchMinRatePerS?: number;
}

/**
 * Under load the drainer waits this long after a new entry for more before it writes: one insertMany per window
 * instead of one per event (per-event writes cost the document store ~3 CPU-ms per answered call at c=16).
 */
export const USAGE_BATCH_WINDOW_MS = 500;
/**
 * ...and holds its batch one window more for as long as entries keep arriving, up to this long: during a burst the
 * drainers' writes (insertMany, one counter update per customer and batch, and the document store's CPU for them,
 * which the burst's requests need) wait until it ends, and each customer's counters are
 * updated once for all its calls in the batch. An event then reaches MongoDB at most this much later; usage counts
 * are served from Redis, not from these documents.
 */
export const USAGE_BATCH_MAX_WAIT_MS = 10_000;
/**
 * Load = entries arriving in the outbox at this rate or more (all producers together, from the stream's own count).
 * A trickle is written at once: an event waits in Redis only while that saves writes, since the outbox is only as
 * durable as Redis, and a Redis that restarts empty (no persistence) loses what was not drained yet.
 */
export const USAGE_BATCH_MIN_RATE_PER_S = 16;
/** The span the arrival rate is measured over. */
const RATE_SPAN_MS = 1000;
/** Entries one batch holds at most: one drainer's share of a burst held for USAGE_BATCH_MAX_WAIT_MS (~30/s x 10 s), with room. */
const BATCH_SIZE = 500;

const DUPLICATE_KEY = 11000;

/** The command's reply, or null when its stream has no consumer group (a Redis that came back empty). */
async function unlessNoGroup<T>(reply: Promise<T>): Promise<T | null> {
  try {
    return await reply;
  } catch (err) {
    if (/NOGROUP/.test((err as Error).message)) return null;
    throw err;
  }
}

/**
 * An outbox entry, the stream it came from (its partition's `home` prefix) and that stream's epoch when it was read
 * (usage-outbox.ts outboxEpochKey; null: none, Redis was losing its data then).
 */
type StreamEntry = OutboxEntry & { home: string; epoch: string | null };
const RETRY_AFTER_FAILURE_MS = 1000;

export class UsageDrainer {
  readonly consumer = `drainer-${randomUUID()}`;
  /** The partitions whose streams it drains (their prefixes), and the deployment prefix while its old stream exists. */
  private homes: string[];
  /** On a cluster the streams are read one command each, without BLOCK. */
  private readonly onCluster: boolean;
  private readonly counters: UsageCounters;
  /** Adds the calls counted after Redis lost their entries to the month's credit hash. */
  private readonly credits: CreditLedger;
  private running = false;
  private loop: Promise<void> | null = null;
  private lastClaimAt = 0;
  /** Set after a failed write: re-read this consumer's own unacknowledged entries before new ones. */
  private retryOwn = false;
  /** The outbox's count of entries ever added, [when read, count], over the last RATE_SPAN_MS and one before. */
  private readonly added: Array<[number, number]> = [];
  /** Ends a batch window early (stop). */
  private wake: (() => void) | null = null;

  constructor(private readonly o: UsageDrainerOptions) {
    this.homes = allPartitionPrefixes(o.prefix);
    this.onCluster = isCluster(o.redis);
    this.counters = new UsageCounters(o.redis, o.prefix, o.models);
    this.credits = new CreditLedger(o.redis, o.prefix, o.models, systemClock);
  }

  async start(): Promise<void> {
    if ((await this.o.redis.exists(outboxKey(this.o.prefix))) === 1) this.homes = [...this.homes, this.o.prefix];
    await this.ensureGroup();
    this.running = true;
    this.loop = this.run();
  }

  /** Creates the stream, its group and its epoch if missing (first start, or a Redis that came back empty). */
  private async ensureGroup(): Promise<void> {
    for (const home of this.homes) {
      try {
        await this.o.redis.xgroup('CREATE', outboxKey(home), OUTBOX_GROUP, '0', 'MKSTREAM');
      } catch (err) {
        if (!/BUSYGROUP/.test((err as Error).message)) throw err;
      }
      await this.o.redis.set(outboxEpochKey(home), randomUUID(), 'NX');
    }
  }

  /** The entries with their streams' epochs, read once the entries are (one read per stream that gave any). */
  private async withEpochs(entries: Array<OutboxEntry & { home: string }>): Promise<StreamEntry[]> {
    const homes = [...new Set(entries.map((e) => e.home))];
    const epochs = await Promise.all(homes.map((home) => this.o.redis.get(outboxEpochKey(home))));
    const of = new Map(homes.map((home, i) => [home, epochs[i]!]));
    return entries.map((e) => ({ ...e, epoch: of.get(e.home) ?? null }));
  }

  /** Stops reading; first writes what is already in the outbox (a last non-blocking pass), so a clean stop leaves nothing. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    try {
      for (const from of ['0', '>'] as const) {
        for (let entries = await this.read(from, false); entries.length > 0; entries = from === '0' ? [] : await this.read(from, false)) {
          await this.write(entries, from === '0');
        }
      }
    } catch (err) {
      this.o.log.warn({ err }, 'usage outbox: last pass before stopping failed; another drainer will take the entries over');
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        if (Date.now() - this.lastClaimAt >= this.o.claimIdleMs / 2) await this.claimAbandoned();
        const from = this.retryOwn ? '0' : '>';
        const entries = await this.read(from);
        if (entries.length === 0) {
          if (from === '>' && this.onCluster) await this.pause(this.o.blockMs ?? 1000);
          continue;
        }
        // New entries are this drainer's from the first: kept through the batch windows, then while written.
        const batch = from === '0' ? entries : await this.holdWhile(entries, () => this.withRestOfWindow(entries));
        await this.write(batch, from === '0');
      } catch (err) {
        if (!this.running) return;
        if (/NOGROUP/.test((err as Error).message)) {
          // A Redis that came back empty. On a cluster the other streams' reads of this pass may have delivered
          // entries, now this consumer's: read them again from its own pending ones.
          this.retryOwn = true;
          await this.ensureGroup().catch(() => undefined);
          continue;
        }
        this.o.log.warn({ err }, 'usage outbox: drain pass failed; retrying');
        await new Promise((r) => setTimeout(r, RETRY_AFTER_FAILURE_MS));
      }
    }
  }

  /**
   * Under load, waits out the batch window (unless the batch is full or the drainer stops) and adds what arrived
   * meanwhile, window after window while entries keep arriving, up to USAGE_BATCH_MAX_WAIT_MS; otherwise the
   * entries are written at once.
   */
  private async withRestOfWindow(entries: StreamEntry[]): Promise<StreamEntry[]> {
    const size = this.o.batchSize ?? BATCH_SIZE;
    const windowMs = this.o.batchWindowMs ?? USAGE_BATCH_WINDOW_MS;
    const maxWaitMs = this.o.batchMaxWaitMs ?? USAGE_BATCH_MAX_WAIT_MS;
    if (entries.length >= size || windowMs <= 0 || !this.running) return entries;
    // A Redis that lost the streams meanwhile (restarted empty) fails these reads: the entries held are written now.
    const rate = await this.arrivalsPerS().catch(() => 0);
    if (rate < (this.o.batchMinRatePerS ?? USAGE_BATCH_MIN_RATE_PER_S)) return entries;
    const started = Date.now();
    let batch = entries;
    for (;;) {
      await this.pause(windowMs);
      const more = await unlessNoGroup(this.read('>', false, size - batch.length));
      if (more === null) return batch;
      batch = batch.concat(more);
      const quiet = more.length === 0;
      if (quiet || batch.length >= size || !this.running || Date.now() - started + windowMs > maxWaitMs) return batch;
    }
  }

  /** Waits `ms`, or until stop. */
  private async pause(ms: number): Promise<void> {
    if (!this.running) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = null;
  }

  /**
   * Entries added to the outbox per second by every producer, all streams together (XINFO STREAM's entries-added,
   * Redis 7), over the last RATE_SPAN_MS: each drainer reads only its share of the streams, so its own reads would
   * understate the load.
   */
  private async arrivalsPerS(): Promise<number> {
    const counts = await Promise.all(
      this.homes.map(async (home) => {
        const info = (await this.o.redis.call('XINFO', 'STREAM', outboxKey(home))) as unknown[];
        const at = info.indexOf('entries-added');
        return at === -1 ? 0 : Number(info[at + 1]);
      }),
    );
    const now = Date.now();
    const count = counts.reduce((a, b) => a + b, 0);
    this.added.push([now, count]);
    // Keep one sample at or before the span's start, as the reference.
    while (this.added.length > 2 && this.added[1]![0] <= now - RATE_SPAN_MS) this.added.shift();
    const [refAt, refCount] = this.added[0]!;
    return refAt === now ? 0 : ((count - refCount) * 1000) / Math.max(now - refAt, RATE_SPAN_MS / 4);
  }

  /**
   * Reads every stream, up to `count` entries from each. On one Redis: all streams in one command, blocking up to
   * blockMs for new entries, so an event is drained as soon as it is added (an event still in the outbox is lost if
   * Redis restarts empty). On a cluster the streams sit on different primaries: one command each, sent together,
   * without BLOCK (the loop polls).
   */
  private async read(from: '0' | '>', block = true, count = this.o.batchSize ?? BATCH_SIZE): Promise<StreamEntry[]> {
    const groups = this.onCluster ? this.homes.map((home) => [home]) : [this.homes];
    const blocking = block && from === '>' && !this.onCluster;
    const replies = await Promise.all(
      groups.map(async (homes) => {
        const keys = new Map(homes.map((home) => [outboxKey(home), home]));
        const args: Array<string | number> = ['GROUP', OUTBOX_GROUP, this.consumer, 'COUNT', count];
        if (blocking) args.push('BLOCK', this.o.blockMs ?? 1000);
        args.push('STREAMS', ...keys.keys(), ...homes.map(() => from));
        const reply = (await this.o.redis.call('XREADGROUP', ...args)) as Array<[string, Array<[string, string[] | null]>]> | null;
        return (reply ?? []).flatMap(([key, entries]) => parseOutboxEntries(entries).map((e) => ({ ...e, home: keys.get(key)! })));
      }),
    );
    if (from === '0') this.retryOwn = false;
    const entries = replies.flat();
    return entries.length === 0 ? [] : await this.withEpochs(entries);
  }

  /** Takes over entries another consumer read but never acknowledged (it died, or its write failed long ago). */
  private async claimAbandoned(): Promise<void> {
    this.lastClaimAt = Date.now();
    for (const home of this.homes) await this.claimAbandonedOf(home);
  }

  private async claimAbandonedOf(home: string): Promise<void> {
    const key = outboxKey(home);
    let cursor = '0-0';
    do {
      const reply = (await this.o.redis.call(
        'XAUTOCLAIM',
        key,
        OUTBOX_GROUP,
        this.consumer,
        this.o.claimIdleMs,
        cursor,
        'COUNT',
        this.o.batchSize ?? BATCH_SIZE,
      )) as [string, Array<[string, string[] | null]>, string[]?];
      cursor = reply[0];
      const claimed = await this.withEpochs(parseOutboxEntries(reply[1]).map((e) => ({ ...e, home })));
      if (claimed.length > 0) {
        this.o.log.info({ entries: claimed.length }, 'usage outbox: took over entries of a consumer that stopped');
        await this.write(claimed, true);
      }
      // Entries deleted while pending (reply[2]) are dropped from the PEL by XAUTOCLAIM itself.
    } while (cursor !== '0-0' && this.running);
    await this.forgetIdleConsumers(key);
  }

  /** Removes consumers with nothing pending that have been idle for a long time (stopped processes). */
  private async forgetIdleConsumers(key: string): Promise<void> {
    const raw = (await this.o.redis.call('XINFO', 'CONSUMERS', key, OUTBOX_GROUP)) as Array<Array<string | number>>;
    for (const fields of raw) {
      const info: Record<string, string | number> = {};
      for (let i = 0; i + 1 < fields.length; i += 2) info[String(fields[i])] = fields[i + 1]!;
      if (info.name !== this.consumer && Number(info.pending) === 0 && Number(info.idle) > 10 * this.o.claimIdleMs) {
        await this.o.redis.call('XGROUP', 'DELCONSUMER', key, OUTBOX_GROUP, String(info.name));
      }
    }
  }

  /**
   * Writes a batch (events, then counters); acknowledges (and removes) exactly the entries MongoDB now holds. An
   * event whose insert failed is neither counted nor acknowledged (it is retried). A failed counter step is
   * retried on the same batch before anything else is written: the counters recognise a replay only of this
   * consumer's last write to them.
   */
  private async write(entries: StreamEntry[], replayable: boolean): Promise<void> {
    await this.holdWhile(entries, () => this.writeHeld(entries, replayable));
  }

  /**
   * Keeps the entries this drainer holds (in a batch window, or writing) its own: every third of
   * OUTBOX_CLAIM_IDLE_MS it resets their idle time (XCLAIM to itself, JUSTID: no delivery counted). Without it, a
   * batch held or written longer than the claim idle time (a slow store: counter updates under load) is taken over
   * by another drainer, the two then wait on each other's counter leases, and the batch is retried over and over.
   * A drainer that dies stops renewing, so its entries are still taken over after the
   * idle time.
   */
  private async holdWhile<T>(entries: StreamEntry[], work: () => Promise<T>): Promise<T> {
    const byStream = byHome(entries);
    const renew = () =>
      Promise.all(
        [...byStream].map(([home, held]) =>
          this.o.redis.call('XCLAIM', outboxKey(home), OUTBOX_GROUP, this.consumer, 0, ...held.map((e) => e.streamId), 'JUSTID').catch((err: unknown) => {
            this.o.log.warn({ err }, 'usage outbox: could not renew the entries being written');
          }),
        ),
      );
    const timer = setInterval(() => void renew(), Math.max(50, Math.floor(this.o.claimIdleMs / 3)));
    try {
      return await work();
    } finally {
      clearInterval(timer);
    }
  }

  private async writeHeld(entries: StreamEntry[], replayable: boolean): Promise<void> {
    const docs = entries.map((e) => ({ ...usageDocOf(e), counted: true }));
    const failed = new Set<number>();
    const duplicates: string[] = [];
    try {
      await this.o.models.UsageEvent.collection.insertMany(docs as never[], { ordered: false });
    } catch (err) {
      const e = err as { writeErrors?: unknown; code?: number };
      const writeErrors = (Array.isArray(e.writeErrors) ? e.writeErrors : e.writeErrors ? [e.writeErrors] : []) as Array<{ index: number; code: number }>;
      if (writeErrors.length === 0 && e.code !== DUPLICATE_KEY) {
        this.retryOwn = true;
        throw err; // nothing known written: keep every entry pending, retry
      }
      for (const w of writeErrors) {
        if (w.code !== DUPLICATE_KEY) failed.add(w.index);
        else duplicates.push(docs[w.index]!._id);
      }
      if (failed.size > 0) {
        this.retryOwn = true;
        this.o.log.warn({ failed: failed.size, of: entries.length }, 'usage outbox: some events not written; retrying them');
      }
    }
    const held = entries.filter((_, i) => !failed.has(i));
    if (held.length === 0) return;
    // Entries another drainer took over while this one could not reach Redis: theirs to count and acknowledge.
    const lost = new Set<string>();
    await this.countWithRetry(held, replayable, this.holding(held, lost));
    // A duplicate may be an event written before counters existed (replayed now): it is counted now, so the
    // backfill must not add it again. By `_id`, one at a time: rare, and any other filter is a scan on FerretDB.
    for (const id of duplicates) await this.o.models.UsageEvent.updateOne({ _id: id, counted: { $ne: true } }, { $set: { counted: true } });
    this.o.fault?.('in_drainer');
    // Per stream, one transaction: its keys and its customers' undrained indexes share the partition's slot.
    const billed = new Map<string, { customerId: string; month: string }>();
    docs.forEach((doc: Record<string, unknown>, i) => {
      const { service, billable, customerId, month } = doc;
      if (failed.has(i) || service !== 'liveness' || billable !== true || typeof customerId !== 'string' || typeof month !== 'string') return;
      billed.set(entryId(entries[i]!), { customerId, month });
    });
    await Promise.all(
      [...byHome(held.filter((e) => !lost.has(entryId(e))))].map(([home, done]) => {
        const key = outboxKey(home);
        const ids = done.map((e) => e.streamId);
        const ack = this.o.redis
          .multi()
          .xack(key, OUTBOX_GROUP, ...ids)
          .xdel(key, ...ids);
        // With the acknowledgement, each billed call leaves its customer's undrained index (credit-ledger.ts rebuilds).
        for (const e of done) {
          const call = billed.get(entryId(e));
          if (call) ack.hdel(undrainedKey(home, call.customerId, call.month), e.requestId);
        }
        return ack.exec();
      }),
    );
  }

  /**
   * The counters' ownership check (asked under each owner's lease): which of `entries` are still pending under this
   * consumer, and whether any was delivered more than once. A drainer cut off from Redis longer than the claim idle
   * time comes back holding entries that another drainer took over (XAUTOCLAIM), wrote, counted and perhaps
   * acknowledged: counting them as new ones ('>') would count them twice. The others go to `lost` (by entryId).
   * Unless Redis lost them: a stream with no group, or whose epoch is not the one an entry was read under, came back
   * empty since (restarted without persistence). Nobody else can count those entries; this drainer, which holds
   * their events, counts them (`orphaned`; as replays, so an id a document already holds is skipped).
   */
  private holding(entries: StreamEntry[], lost: Set<string>): Holding {
    return async (requestIds) => {
      const wanted = new Set(requestIds);
      const asked = entries.filter((e) => wanted.has(e.requestId));
      const deliveries = new Map<string, number>();
      /** Per stream: its epoch now, or null when it has no group (Redis lost it). */
      const epochs = new Map<string, string | null>();
      await Promise.all(
        [...byHome(asked)].map(async ([home, inStream]) => {
          const ids = inStream.map((e) => e.streamId).sort(byStreamId);
          const pending = this.o.redis.call('XPENDING', outboxKey(home), OUTBOX_GROUP, ids[0]!, ids[ids.length - 1]!, ids.length + 1000, this.consumer);
          const [epoch, reply] = await Promise.all([
            this.o.redis.get(outboxEpochKey(home)),
            unlessNoGroup(pending as Promise<Array<[string, string, number, number]>>),
          ]);
          epochs.set(home, reply === null ? null : epoch);
          for (const [id, , , n] of reply ?? []) deliveries.set(`${home}|${id}`, Number(n));
        }),
      );
      const held = new Set<string>();
      const orphaned = new Set<string>();
      let redelivered = false;
      for (const e of asked) {
        const n = deliveries.get(entryId(e));
        if (n !== undefined) {
          held.add(e.requestId);
          if (n > 1) redelivered = true;
          continue;
        }
        const epoch = epochs.get(e.home);
        if (epoch === null || epoch !== e.epoch) {
          held.add(e.requestId);
          orphaned.add(e.requestId);
          redelivered = true;
          continue;
        }
        lost.add(entryId(e));
      }
      if (lost.size > 0) this.o.log.info({ entries: lost.size }, 'usage outbox: entries taken over by another drainer meanwhile; left to it');
      if (orphaned.size > 0)
        this.o.log.warn({ entries: orphaned.size }, 'usage outbox: Redis lost these entries (restarted empty); counting them from the batch');
      return { held, redelivered, orphaned };
    };
  }

  /** Adds billed calls counted after Redis lost their entries to their month's credit hash (credit-ledger.ts). */
  private async creditOrphans(c: OrphanedCount): Promise<void> {
    if (c.service !== 'liveness') return;
    const calls = c.events.filter((e) => e.billable).map((e) => ({ requestId: e.requestId, overage: e.overage, day: dayOf(e.at) }));
    await this.credits.addOrphanedCalls(c.owner, c.month, c.rev, calls);
  }

  /** `replayable`: the entries were delivered before (taken over, or re-read): the counters check for replays. */
  private async countWithRetry(entries: StreamEntry[], replayable: boolean, holding: Holding): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.counters.apply(this.consumer, entries, replayable || attempt > 0, 4, holding, (c) => this.creditOrphans(c));
        return;
      } catch (err) {
        this.retryOwn = true;
        if (!this.running) throw err; // stopping: the entries stay pending, and another drainer takes them over
        this.o.log.warn({ err }, 'usage outbox: counting a batch failed; retrying it');
        await new Promise((r) => setTimeout(r, RETRY_AFTER_FAILURE_MS));
      }
    }
  }
}

/** An entry's id across streams: stream ids are unique only within their stream. */
function entryId(e: StreamEntry): string {
  return `${e.home}|${e.streamId}`;
}

/** Stream ids in stream order (milliseconds, then sequence). */
function byStreamId(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number) as [number, number];
  const [bm, bs] = b.split('-').map(Number) as [number, number];
  return am - bm || as - bs;
}

/** Entries grouped by their stream. */
function byHome(entries: StreamEntry[]): Map<string, StreamEntry[]> {
  const out = new Map<string, StreamEntry[]>();
  for (const e of entries) {
    const list = out.get(e.home);
    if (list) list.push(e);
    else out.set(e.home, [e]);
  }
  return out;
}

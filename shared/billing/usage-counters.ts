// Owns the usage counter documents: one per owner (a customer's liveness calls, one emotion token's calls) and UTC
// month, holding the month's billable calls, overage, calls per UTC day, per API key, audio seconds and the last
// call per key. The usage drainer (workers/runtime/usage-drainer.ts) adds each outbox entry to them; the credit
// ledger's cold rebuild and the console read them by `_id`, one or two documents however long the history.
// One writer at a time per owner (a short Redis lease) and, per consumer, the request ids of its last write
// (`applied`, skipped when a drainer killed before its XACK has its entries taken over), because upstream FerretDB 1.24
// loses concurrent updates to one document (docs/billing.md, "Credits"). A consumer writes a document again only
// after acknowledging its previous batch, so every applied-but-unacknowledged id is in the document. Under the lease
// a drainer first asks the outbox which of its entries it still holds (`Holding`): a drainer cut off from Redis and
// the store for longer than the claim idle time comes back with entries another drainer took over, counted and
// perhaps acknowledged meanwhile, and must count none of those again.
// Single-document updates only: the same on MongoDB 7.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Models, UsageCounterDoc } from '../db/models';
import { usageDocOf, type OutboxEntry } from './usage-outbox';
import { luaScript } from '../redis-script';
import { dayOf } from './month';

export type UsageService = 'liveness' | 'emotion';

/** The month document of an owner: `liveness:<customerId>:<YYYY-MM>` or `emotion:<tokenId>:<YYYY-MM>`. */
export function counterId(service: UsageService, owner: string, month: string): string {
  return `${service}:${owner}:${month}`;
}

/** How far back the console looks for a key's last call (one document per month, by `_id`). */
const LAST_USE_MONTHS = 13;
/** One in this many first writes of a document by a drainer reads it to prune applied lists. */
const PRUNE_EVERY = 8;
/** Bound of the drainer's memory of documents it has written. */
const KNOWN_MAX = 100_000;
/** What a month document starts with (fields an upsert's first update does not set). */
const EMPTY_COUNTER = { used: 0, overage: 0, calls: 0, audioSeconds: 0, daily: {}, keys: {}, last: {}, applied: {}, backfilled: false };

/** A consumer's applied ids are kept this long after its last write: far past any takeover (OUTBOX_CLAIM_IDLE_MS). */
const APPLIED_KEEP_MS = 3600_000;
/** The lease outlives one read and one update by far; a writer stalled longer than this could overlap the next. */
const COUNTER_LEASE_MS = 10_000;
/** How long a writer waits for another one's lease before it gives up the pass (its entries stay pending). */
const LEASE_WAIT_MS = 5_000;
const LEASE_POLL_MS = 5;

const RELEASE_LEASE = luaScript('counter-lease-release-1');

class CounterLeaseBusyError extends Error {
  constructor(owner: string) {
    super(`usage counter of ${owner} stayed leased by another drainer`);
    this.name = 'CounterLeaseBusyError';
  }
}

/**
 * Of a batch's events (by request id), the ones whose outbox entries the writing consumer still holds, and whether
 * any of those was delivered more than once (another consumer may have counted it: the document's applied lists
 * are read first). Asked under the owner's lease, so no other consumer counts the held ones before this write.
 */
export type Holding = (requestIds: string[]) => Promise<{ held: Set<string>; redelivered: boolean; orphaned?: Set<string> }>;

/**
 * Events counted after Redis lost their outbox entries (`orphaned` by the holding check), by month document, with
 * the document's revision once it held them: the drainer has the credit ledger add them to the month's hash
 * (credit-ledger.ts, addOrphanedCalls) before the owner's lease is released.
 */
export interface OrphanedCount {
  service: UsageService;
  owner: string;
  month: string;
  rev: number;
  events: CountedEvent[];
}

/** One counted event, as the counters see it. */
export interface CountedEvent {
  requestId: string;
  service: UsageService;
  owner: string;
  month: string;
  billable: boolean;
  overage: boolean;
  at: Date;
  keyId: string | null;
  audioSeconds: number;
}

/** What an outbox entry adds to a counter; null when it has no owner (nothing to count it under). */
function countedEventOf(entry: OutboxEntry): CountedEvent | null {
  const d = usageDocOf(entry) as ReturnType<typeof usageDocOf> & {
    service?: UsageService;
    customerId?: string | null;
    keyId?: string | null;
    tokenId?: string | null;
    month?: string;
    billable?: boolean;
    overage: boolean;
    at: Date;
    verdict?: { duration?: unknown } | null;
  };
  return countedEventOfDoc(d);
}

/** The same for a stored usage event (the backfill). */
function countedEventOfDoc(d: {
  _id: string;
  service?: string;
  customerId?: string | null;
  keyId?: string | null;
  tokenId?: string | null;
  month?: string;
  billable?: boolean;
  overage?: boolean | null;
  at: Date;
  verdict?: unknown;
}): CountedEvent | null {
  const service = d.service === 'liveness' || d.service === 'emotion' ? d.service : null;
  const owner = service === 'liveness' ? d.customerId : d.tokenId;
  // Liveness counts the ledger's credits: only billed calls (the only liveness events there are).
  if (!service || !owner || !d.month || (service === 'liveness' && !d.billable)) return null;
  const duration = Number((d.verdict as { duration?: unknown } | null)?.duration);
  return {
    requestId: d._id,
    service,
    owner,
    month: d.month,
    billable: !!d.billable,
    overage: !!d.overage,
    at: d.at,
    keyId: d.keyId ?? null,
    audioSeconds: Number.isFinite(duration) && duration > 0 ? duration : 0,
  };
}

/** Key ids become field names: ours are UUIDs; anything a path could misread ('.', '$') is counted in the totals only. */
const FIELD_NAME = /^[\w-]+$/;

/** The `$inc` of a set of events on their month document. */
function incrementsOf(events: CountedEvent[]): Record<string, number> {
  const inc: Record<string, number> = {};
  const add = (field: string, n: number) => {
    if (n !== 0) inc[field] = (inc[field] ?? 0) + n;
  };
  for (const e of events) {
    add('calls', 1);
    add('used', e.billable ? 1 : 0);
    add('overage', e.overage ? 1 : 0);
    add('audioSeconds', e.audioSeconds);
    add(`daily.${dayOf(e.at)}`, 1);
    if (e.keyId && FIELD_NAME.test(e.keyId)) add(`keys.${e.keyId}`, 1);
  }
  return inc;
}

/** The `$max` of a set of events on their month document: the last call per key ('token' for an emotion token). */
function lastUsesOf(events: CountedEvent[]): Record<string, Date> {
  const max: Record<string, Date> = {};
  for (const e of events) {
    if (e.service === 'liveness' && !(e.keyId && FIELD_NAME.test(e.keyId))) continue;
    const field = `last.${e.service === 'liveness' ? e.keyId : 'token'}`;
    if (!max[field] || max[field] < e.at) max[field] = e.at;
  }
  return max;
}

/** Request ids a counter document already holds from writes not yet acknowledged in the outbox. */
export function appliedIds(doc: Pick<UsageCounterDoc, 'applied'> | null | undefined): Set<string> {
  const out = new Set<string>();
  for (const v of Object.values((doc?.applied ?? {}) as Record<string, { ids?: string[] }>)) for (const id of v.ids ?? []) out.add(id);
  return out;
}

/**
 * The last call per key id ('token' for an emotion token), from `month` back at most LAST_USE_MONTHS month
 * documents (by `_id`, newest first, stopping once every asked key is found): older than that shows as none.
 */
export async function lastUses(models: Models, service: UsageService, owner: string, month: string, keys: string[]): Promise<Record<string, Date>> {
  const found: Record<string, Date> = {};
  let [y, m] = month.split('-').map(Number) as [number, number];
  for (let i = 0; i < LAST_USE_MONTHS && keys.some((k) => !found[k]); i++) {
    const id = counterId(service, owner, `${y}-${String(m).padStart(2, '0')}`);
    const doc = await models.UsageCounter.findById(id, { last: 1 }).lean();
    for (const [k, at] of Object.entries((doc?.last ?? {}) as Record<string, Date>)) if (!found[k]) found[k] = new Date(at);
    [y, m] = m === 1 ? [y - 1, 12] : [y, m - 1];
  }
  return found;
}

export interface BackfillResult {
  /** Events written before counters existed. */
  events: number;
  /** Month documents they belong to. */
  documents: number;
  /** Documents completed by this run. */
  written: number;
  /** Documents an earlier run completed (skipped). */
  alreadyDone: number;
}

export class UsageCounters {
  /** Month documents this instance has written: only a first write may read one to prune it. */
  private readonly known = new Set<string>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly models: Models,
  ) {}

  /** The month document, or null when nothing was counted for that owner and month. */
  async month(service: UsageService, owner: string, month: string): Promise<UsageCounterDoc | null> {
    return await this.models.UsageCounter.findById(counterId(service, owner, month)).lean();
  }

  /**
   * Adds the entries to their owners' counters for `consumer`: under each owner's lease, one update per month
   * document (upserted). `replayable`: the entries may have been delivered before (taken over, or re-read after a
   * failure), so each document is read first and the ids its applied lists hold are skipped; entries read for
   * the first time ('>') cannot be in any counter, and skip that read (except one in PRUNE_EVERY first writes of
   * a document by this instance, which reads it to drop applied lists of consumers gone for APPLIED_KEEP_MS). Owners are written
   * `parallel` at a time. Throws when a write fails: nothing is then acknowledged, and the retry skips what
   * was written. `holding` (the drainer's): only the entries the consumer still holds are counted; those it says
   * Redis lost (`orphaned`) go to `onOrphaned` once counted, with the revision of the write that counted them (one
   * that skips them as counted before reports none: their revision is not known).
   */
  async apply(
    consumer: string,
    entries: OutboxEntry[],
    replayable: boolean,
    parallel = 4,
    holding?: Holding,
    onOrphaned?: (counted: OrphanedCount) => Promise<void>,
  ): Promise<void> {
    const byOwner = new Map<string, CountedEvent[]>();
    for (const entry of entries) {
      const e = countedEventOf(entry);
      if (!e) continue;
      const k = `${e.service}:${e.owner}`;
      const list = byOwner.get(k);
      if (list) list.push(e);
      else byOwner.set(k, [e]);
    }
    const groups = [...byOwner.values()];
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(parallel, groups.length) }, async () => {
        while (next < groups.length) await this.applyOwner(consumer, groups[next++]!, replayable, holding, onOrphaned);
      }),
    );
  }

  private async applyOwner(
    consumer: string,
    events: CountedEvent[],
    replayable: boolean,
    holding?: Holding,
    onOrphaned?: (counted: OrphanedCount) => Promise<void>,
  ): Promise<void> {
    const { service, owner } = events[0]!;
    const byMonth = new Map<string, CountedEvent[]>();
    for (const e of events) byMonth.set(e.month, [...(byMonth.get(e.month) ?? []), e]);
    await this.withLease(`${service}:${owner}`, async () => {
      let replay = replayable;
      let held: Set<string> | null = null;
      let orphaned = new Set<string>();
      if (holding) {
        const h = await holding(events.map((e) => e.requestId));
        held = h.held;
        replay ||= h.redelivered;
        orphaned = h.orphaned ?? orphaned;
      }
      for (const [month, monthEvents] of byMonth) {
        const mine = held ? monthEvents.filter((e) => held.has(e.requestId)) : monthEvents;
        if (mine.length === 0) continue;
        const withRev = mine.some((e) => orphaned.has(e.requestId));
        const { rev, fresh } = await this.applyMonth(consumer, service, owner, month, mine, replay, withRev);
        const lost = fresh.filter((e) => orphaned.has(e.requestId));
        if (lost.length > 0) await onOrphaned?.({ service, owner, month, rev: rev!, events: lost });
      }
    });
  }

  /**
   * Counts the events the document does not hold yet (`fresh`, returned). `withRev`: also returns the document's
   * revision after the update (else undefined, and the update is a plain one).
   */
  private async applyMonth(
    consumer: string,
    service: UsageService,
    owner: string,
    month: string,
    events: CountedEvent[],
    replayable: boolean,
    withRev = false,
  ): Promise<{ rev: number | undefined; fresh: CountedEvent[] }> {
    const _id = counterId(service, owner, month);
    const now = Date.now();
    let fresh = events;
    let expired: string[] = [];
    // The read that drops applied lists of consumers gone for APPLIED_KEEP_MS costs as much as the update; one in
    // PRUNE_EVERY first writes per instance keeps those lists short without doubling a spread batch's writes.
    const prune = !this.known.has(_id) && Math.random() < 1 / PRUNE_EVERY;
    if (this.known.size >= KNOWN_MAX) this.known.clear();
    this.known.add(_id);
    if (replayable || prune) {
      const doc = (await this.models.UsageCounter.findById(_id, { applied: 1 }).lean()) as Pick<UsageCounterDoc, 'applied'> | null;
      const held = appliedIds(doc);
      fresh = events.filter((e) => !held.has(e.requestId));
      expired = Object.entries((doc?.applied ?? {}) as Record<string, { at?: number }>)
        .filter(([name, v]) => name !== consumer && (v.at ?? 0) < now - APPLIED_KEEP_MS)
        .map(([name]) => `applied.${name}`);
    }
    // This consumer's record: every id of this write (skipped or new), so a crash before the XACK is covered.
    const rev = await this.write(
      { _id, service, owner, month },
      incrementsOf(fresh),
      lastUsesOf(fresh),
      { [`applied.${consumer}`]: { ids: events.map((e) => e.requestId), at: now } },
      expired,
      withRev,
    );
    return { rev, fresh };
  }

  /**
   * One upserting update of a month document; fields a new document lacks start at zero / empty. `withRev`: as a
   * findOneAndUpdate, returning the revision it left (else undefined).
   */
  private async write(
    meta: { _id: string; service: UsageService; owner: string; month: string },
    inc: Record<string, number>,
    last: Record<string, Date>,
    set: Record<string, unknown>,
    unset: string[] = [],
    withRev = false,
  ): Promise<number | undefined> {
    const touched = [...Object.keys(inc), ...Object.keys(last), ...Object.keys(set)];
    const untouched = (field: string) => !touched.some((p) => p === field || p.startsWith(`${field}.`));
    const zero: Record<string, unknown> = { service: meta.service, owner: meta.owner, month: meta.month };
    for (const [field, value] of Object.entries(EMPTY_COUNTER)) if (untouched(field)) zero[field] = value;
    const update = {
      $inc: { ...inc, rev: 1 },
      $setOnInsert: zero,
      ...(Object.keys(last).length > 0 ? { $max: last } : {}),
      ...(Object.keys(set).length > 0 ? { $set: set } : {}),
      ...(unset.length > 0 ? { $unset: Object.fromEntries(unset.map((f) => [f, ''])) } : {}),
    };
    const collection = this.models.UsageCounter.collection;
    if (!withRev) {
      await collection.updateOne({ _id: meta._id } as never, update, { upsert: true });
      return undefined;
    }
    // No projection: FerretDB 1.24's findAndModify does not take one (the document is one month's counters).
    const after = await collection.findOneAndUpdate({ _id: meta._id } as never, update, { upsert: true, returnDocument: 'after' });
    return Number((after as { rev?: unknown } | null)?.rev ?? 0);
  }

  /**
   * Adds the usage events written before counters existed (`counted` not true) to their month documents, once:
   * each document so completed is marked `backfilled`, in the same update, under the owner's lease, and is
   * skipped by a later run. So the backfill can be stopped and run again (it resumes), and run while drainers
   * write (they count only events they write themselves, marked `counted`). Reads the events once, as a scan:
   * an operator's one-time step, never a request's.
   */
  async backfill(progress: (done: number, of: number) => void = () => undefined): Promise<BackfillResult> {
    const months = new Map<string, { service: UsageService; owner: string; month: string; inc: Record<string, number>; last: Record<string, Date> }>();
    let events = 0;
    const cursor = this.models.UsageEvent.find(
      { counted: { $ne: true } },
      { service: 1, customerId: 1, keyId: 1, tokenId: 1, month: 1, billable: 1, overage: 1, at: 1, verdict: 1 },
    )
      .lean()
      .cursor();
    for await (const doc of cursor) {
      const e = countedEventOfDoc(doc);
      if (!e) continue;
      events++;
      const id = counterId(e.service, e.owner, e.month);
      let m = months.get(id);
      if (!m) months.set(id, (m = { service: e.service, owner: e.owner, month: e.month, inc: {}, last: {} }));
      for (const [field, n] of Object.entries(incrementsOf([e]))) m.inc[field] = (m.inc[field] ?? 0) + n;
      for (const [field, at] of Object.entries(lastUsesOf([e]))) if (!m.last[field] || m.last[field] < at) m.last[field] = at;
    }
    const result: BackfillResult = { events, documents: months.size, written: 0, alreadyDone: 0 };
    for (const [_id, m] of months) {
      await this.withLease(`${m.service}:${m.owner}`, async () => {
        const doc = await this.models.UsageCounter.findById(_id, { backfilled: 1 }).lean();
        if (doc?.backfilled) {
          result.alreadyDone++;
          return;
        }
        await this.write({ _id, service: m.service, owner: m.owner, month: m.month }, m.inc, m.last, { backfilled: true });
        result.written++;
      });
      progress(result.written + result.alreadyDone, months.size);
    }
    return result;
  }

  /** Runs `write` while holding the owner's lease (waiting up to LEASE_WAIT_MS for another writer's). */
  async withLease<T>(owner: string, write: () => Promise<T>): Promise<T> {
    const key = `${this.prefix}:usage-counter-lease:${owner}`;
    const token = randomUUID();
    const giveUpAt = Date.now() + LEASE_WAIT_MS;
    while ((await this.redis.set(key, token, 'PX', COUNTER_LEASE_MS, 'NX')) !== 'OK') {
      if (Date.now() >= giveUpAt) throw new CounterLeaseBusyError(owner);
      await new Promise((r) => setTimeout(r, LEASE_POLL_MS));
    }
    try {
      return await write();
    } finally {
      await RELEASE_LEASE.run(this.redis, [key], [token]);
    }
  }
}

// Owns the MongoDB collections, their indexes and the start-up data migration they need (credential digests). No write relies on a multi-document transaction: each
// document's update is atomic on its own (FerretDB 1.x and MongoDB 7 alike), and an operation that touches
// several (a plan change and its fee record, the drainer's insertMany, retention's deleteMany) writes them in
// turn. Expiring data (sessions, links, idempotency) lives in Redis, not here.
import { Schema, type Connection, type InferSchemaType, type Model } from 'mongoose';
import { PLAN_IDS } from '../billing/plans';
import { dbDeadlinePlugin } from './deadline-scope';

const accountSchema = new Schema(
  {
    _id: { type: String, required: true }, // the customer UUID
    email: { type: String, required: true, unique: true, lowercase: true, trim: true },
    company: { type: String, default: '' },
    website: { type: String, default: '' },
    firstName: { type: String, default: '' },
    lastName: { type: String, default: '' },
    plan: { type: String, enum: PLAN_IDS, required: true },
    /** Enterprise contract limit; null = the plan's monthly calls. */
    monthlyLimit: { type: Number, default: null },
    hardCap: { type: Boolean, required: true },
    /** pending: registered, not yet activated; suspended/cancelled accounts get 403 on the API. */
    status: { type: String, enum: ['pending', 'active', 'suspended', 'cancelled'], required: true },
    /** A downgrade or cancellation waiting for the month end. */
    scheduledChange: {
      // changeId: the plan change (entitlement event) whose fee record is voided if this change never happens.
      type: new Schema(
        { plan: { type: String, default: null }, cancel: Boolean, effectiveMonth: String, requestedAt: Date, changeId: { type: String, default: null } },
        { _id: false },
      ),
      default: null,
    },
    /**
     * The marketplace subscription id (as in `marketplace`), top level so that looking an account up by it uses
     * its index on FerretDB 1.24 too, which answers a dotted path (`marketplace.subscriptionId`) with a scan.
     * Null for an account without a subscription.
     */
    subscriptionId: { type: String, default: null },
    marketplace: {
      type: new Schema(
        {
          accountId: String,
          subscriptionId: String,
          /**
           * The newest entitlement event applied (the subscription's high-water mark, written in the same update
           * as the change it makes) with the effects still to complete: shared/marketplace/apply-entitlement.ts.
           */
          lastEvent: { type: Schema.Types.Mixed, default: null },
        },
        { _id: false },
      ),
      default: null,
    },
    /**
     * A request made in the console that applies only when the marketplace confirms it (a signed event): kind
     * `plan` (a change to `plan`), `cancel` (end the subscription at the month end) or `withdraw_scheduled`
     * (keep the current plan instead of the scheduled downgrade or cancellation). One at a time.
     */
    pendingPlanChange: {
      type: new Schema({ kind: { type: String, default: 'plan' }, plan: { type: String, default: null }, requestedAt: Date }, { _id: false }),
      default: null,
    },
    // Console credentials (see api/console): never returned by any API.
    passwordHash: { type: String, default: null },
    totpSecretEnc: { type: String, default: null },
    totpEnabled: { type: Boolean, default: false },
    welcomeSentAt: { type: Date, default: null },
    /** SHA-256 of each unused TOTP recovery code (high-entropy codes; a spent one is pulled out). */
    recoveryCodeHashes: { type: [String], default: [] },
    passwordChangedAt: { type: Date, default: null },
    /** Opt-in usage alert e-mails at 80 % and 100 % of the monthly limit. */
    usageAlerts: { type: Boolean, default: false },
  },
  { collection: 'accounts', timestamps: true, versionKey: false },
);
// Not unique: FerretDB ignores `sparse`, and the accounts without a subscription all hold null.
accountSchema.index({ subscriptionId: 1 });

const apiKeySchema = new Schema(
  {
    _id: { type: String, required: true }, // key id: stable per customer slot
    customerId: { type: String, required: true },
    slot: { type: String, enum: ['primary', 'secondary'], required: true },
    /** SHA-256 of the full key, hex. The key itself is never stored. */
    hash: { type: String, required: true, unique: true },
    /** 'lc_' and a few characters, for the dashboard. */
    prefix: { type: String, required: true },
    generation: { type: Number, default: 1 },
    rotatedAt: { type: Date, default: null },
  },
  { collection: 'api_keys', timestamps: true, versionKey: false },
);
apiKeySchema.index({ customerId: 1, slot: 1 }, { unique: true });

const usageEventSchema = new Schema(
  {
    _id: { type: String, required: true }, // the request id: a replayed job cannot bill twice
    service: { type: String, enum: ['liveness', 'emotion'], required: true },
    customerId: { type: String, default: null },
    keyId: { type: String, default: null },
    tokenId: { type: String, default: null },
    plan: { type: String, default: null },
    month: { type: String, required: true },
    hour: { type: String, required: true },
    billable: { type: Boolean, required: true },
    overage: { type: Boolean, default: false },
    latencyMs: { type: Number, required: true },
    verdict: { type: Schema.Types.Mixed, default: null },
    at: { type: Date, required: true },
    /** True once the event is in its usage counter (shared/billing/usage-counters.ts); older events are backfilled. */
    counted: { type: Boolean, default: false },
  },
  { collection: 'usage_events', versionKey: false },
);
usageEventSchema.index({ service: 1, customerId: 1, month: 1 });
usageEventSchema.index({ overage: 1, hour: 1 });

// A month of one owner's usage (a customer's liveness calls, or one emotion token's calls), kept by the usage
// drainer (shared/billing/usage-counters.ts) and read by `_id`, or by `owner` and `service` (an index our
// FerretDB build uses for string equalities; dev/engines/ferretdb-sqlite-index-lookups.patch). `_id`: `<service>:<owner>:<YYYY-MM>`.
const usageCounterSchema = new Schema(
  {
    _id: { type: String, required: true },
    service: { type: String, enum: ['liveness', 'emotion'], required: true },
    owner: { type: String, required: true },
    month: { type: String, required: true },
    /** Billable events (liveness: the ledger's used credits). */
    used: { type: Number, default: 0 },
    overage: { type: Number, default: 0 },
    /** Every event counted (emotion calls are not billable). */
    calls: { type: Number, default: 0 },
    audioSeconds: { type: Number, default: 0 },
    /** Counted events per UTC day of the month, 'DD' -> n. */
    daily: { type: Schema.Types.Mixed, default: {} },
    /** Liveness: calls per API key id. */
    keys: { type: Schema.Types.Mixed, default: {} },
    /** Key id (emotion: 'token') -> Date of the month's last call. */
    last: { type: Schema.Types.Mixed, default: {} },
    /** Consumer -> {ids, at}: the request ids of the consumer's last write here, so a replay of it is skipped. */
    applied: { type: Schema.Types.Mixed, default: {} },
    /** Raised by every write: a reader that sees it unchanged around another read saw no write in between. */
    rev: { type: Number, default: 0 },
    /** Set once the events written before counters existed were added (api/admin/commands/usage.ts). */
    backfilled: { type: Boolean, default: false },
  },
  { collection: 'usage_counters', versionKey: false, minimize: false },
);
// The console reads an emotion token's month documents together (its use this month and its last call).
usageCounterSchema.index({ owner: 1, service: 1 });

const meteringRecordSchema = new Schema(
  {
    // overage_calls: `${customerId}:${YYYY-MM-DDTHH}`, one record per customer-hour;
    // plan_fee_cents: `${customerId}:fee:${change id}`, one record per plan change (shared/marketplace/plan-fees.ts).
    _id: { type: String, required: true },
    customerId: { type: String, required: true },
    subscriptionId: { type: String, default: null },
    hour: { type: String, required: true },
    dimension: { type: String, default: 'overage_calls' },
    quantity: { type: Number, required: true },
    /** plan_fee_cents only: the change the fee is for and when it takes effect. */
    plan: { type: String, default: null },
    previousPlan: { type: String, default: null },
    effectiveAt: { type: Date, default: null },
    reportedAt: { type: Date, default: null },
  },
  { collection: 'metering_records', versionKey: false },
);

const emotionTokenSchema = new Schema(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    customerId: { type: String, default: null },
    hash: { type: String, required: true, unique: true },
    prefix: { type: String, required: true },
    revokedAt: { type: Date, default: null },
  },
  { collection: 'emotion_tokens', timestamps: true, versionKey: false },
);
// The console lists an account's tokens.
emotionTokenSchema.index({ customerId: 1, createdAt: -1 });

// The credential digest index (shared/accounts/credential-digests.ts): authentication finds an API key or an
// emotion token by reading this document by `_id` (the SHA-256 digest), then the credential by its `_id`.
const credentialDigestSchema = new Schema(
  {
    _id: { type: String, required: true }, // the credential's SHA-256 digest, hex
    kind: { type: String, enum: ['api_key', 'emotion_token', 'mark'], required: true },
    /** The API key's or the emotion token's `_id`. */
    ownerId: { type: String, required: true },
    /** The account owning the credential (null for an operator's emotion token): account deletion removes by it. */
    customerId: { type: String, default: null },
  },
  { collection: 'credential_digests', timestamps: true, versionKey: false },
);

const auditSchema = new Schema(
  {
    customerId: { type: String, required: true },
    action: { type: String, required: true },
    detail: { type: Schema.Types.Mixed, default: null },
    at: { type: Date, required: true },
  },
  { collection: 'audit_log', versionKey: false },
);
auditSchema.index({ customerId: 1, at: -1 });

export type AccountDoc = InferSchemaType<typeof accountSchema>;
export type ApiKeyDoc = InferSchemaType<typeof apiKeySchema>;
export type UsageEventDoc = InferSchemaType<typeof usageEventSchema>;
export type UsageCounterDoc = InferSchemaType<typeof usageCounterSchema>;
export type MeteringRecordDoc = InferSchemaType<typeof meteringRecordSchema>;
export type EmotionTokenDoc = InferSchemaType<typeof emotionTokenSchema>;
export type CredentialDigestDoc = InferSchemaType<typeof credentialDigestSchema>;
export type AuditDoc = InferSchemaType<typeof auditSchema>;

export interface Models {
  Account: Model<AccountDoc>;
  ApiKey: Model<ApiKeyDoc>;
  UsageEvent: Model<UsageEventDoc>;
  UsageCounter: Model<UsageCounterDoc>;
  MeteringRecord: Model<MeteringRecordDoc>;
  EmotionToken: Model<EmotionTokenDoc>;
  CredentialDigest: Model<CredentialDigestDoc>;
  Audit: Model<AuditDoc>;
}

// Calls made inside a request's deadline scope (the console's) are bounded by it; see deadline-scope.ts.
for (const schema of [
  accountSchema,
  apiKeySchema,
  usageEventSchema,
  usageCounterSchema,
  meteringRecordSchema,
  emotionTokenSchema,
  credentialDigestSchema,
  auditSchema,
]) {
  schema.plugin(dbDeadlinePlugin);
}

export function createModels(conn: Connection): Models {
  return {
    Account: conn.model('Account', accountSchema),
    ApiKey: conn.model('ApiKey', apiKeySchema),
    UsageEvent: conn.model('UsageEvent', usageEventSchema),
    UsageCounter: conn.model('UsageCounter', usageCounterSchema),
    MeteringRecord: conn.model('MeteringRecord', meteringRecordSchema),
    EmotionToken: conn.model('EmotionToken', emotionTokenSchema),
    CredentialDigest: conn.model('CredentialDigest', credentialDigestSchema),
    Audit: conn.model('Audit', auditSchema),
  };
}

/** Builds every collection's indexes and waits for them at start-up (autoIndex alone would build them in the background). */
export async function ensureIndexes(models: Models): Promise<void> {
  await Promise.all(Object.values(models).map((m: Model<unknown>) => m.init()));
}

export function isDuplicateKeyError(err: unknown): boolean {
  return (err as { code?: number })?.code === 11000;
}
